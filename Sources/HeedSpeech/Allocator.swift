import Foundation

/// glibc's allocator, tuned for a process that runs for days with grammars coming and going, and
/// the pages of code such a process maps once and never runs again.
///
/// `<malloc.h>` is not in Swift's Glibc module, so its functions are looked up by name; without
/// glibc nothing changes. Every call to them, and to `madvise`, is here.
public enum Allocator {
    /// `mallopt(M_MMAP_THRESHOLD, bytes)`: allocations of `bytes` or more get pages of their own,
    /// which go back to the system when freed.
    public static func mapLargeAllocations(from bytes: Int32) {
        typealias MallocOption = @convention(c) (Int32, Int32) -> Int32
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: MallocOption.self)(mmapThreshold, bytes)
    }

    /// `malloc_trim(0)`: gives the free pages inside the heap back to the system. A replaced
    /// grammar frees its lexical trees node by node; without this the listener's memory crept up
    /// with every change of what is going on (80 → 60 MB after 120 s of commands, MEASUREMENTS.md).
    public static func returnFreedMemory() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// `madvise(MADV_DONTNEED)` on every private executable mapping of a regular file with no page
    /// of the process's own (`r-xp`, `Anonymous: 0` in `/proc/self/smaps`): the code pages mapped so
    /// far are unmapped, and only code that runs from now on comes back, from the page cache. Call
    /// it when a phase that ran much code once is over (set-up, a grammar rebuild). Start-up alone
    /// leaves 12–15 MB of Heed's own code mapped (`/proc/PID/smaps`, docs/MEASUREMENTS.md), most of
    /// it run once: the kernel maps up to 16 pages around each page a fault touches.
    public static func releaseCodePages() {
        guard let smaps = try? String(contentsOfFile: "/proc/self/smaps", encoding: .utf8) else { return }
        var mapping: (start: UInt, end: UInt, releasable: Bool)?
        var anonymous = -1
        func release() {
            guard let current = mapping, current.releasable, anonymous == 0 else { return }
            _ = madvise(UnsafeMutableRawPointer(bitPattern: current.start), Int(current.end - current.start), MADV_DONTNEED)
        }
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // A mapping's first line: "start-end perms offset device inode [path]".
            if fields.count >= 5, let dash = fields[0].firstIndex(of: "-"),
               let start = UInt(fields[0][..<dash], radix: 16), let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16)
            {
                release()
                let path = fields.count >= 6 ? fields[5] : ""
                let regularFile = path.hasPrefix("/") && !path.hasPrefix("/dev/") && !path.hasPrefix("/proc/") && !path.hasPrefix("/sys/")
                mapping = (start, end, regularFile && fields[1] == "r-xp")
                anonymous = -1
            } else if fields.first == "Anonymous:", fields.count >= 2 {
                anonymous = Int(fields[1]) ?? -1
            }
        }
        release()
    }
}
