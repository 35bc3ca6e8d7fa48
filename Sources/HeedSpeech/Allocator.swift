import Foundation
import HeedCore

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

    /// `madvise(MADV_DONTNEED)` on every mapping of a regular file that the process cannot write
    /// and holds no page of its own in (`r-xp`, `r--p` or `r--s` with `Anonymous: 0` in
    /// `/proc/self/smaps`): code, read-only data and the acoustic model's mapped files. Their pages
    /// are the file's, so nothing is lost: only what runs or is read from now on comes back, from
    /// the page cache. Call it when a phase that ran much code once is over (set-up, a grammar
    /// rebuild, an utterance acted on). Start-up alone leaves 12–15 MB of Heed's own code mapped
    /// (`/proc/PID/smaps`, docs/MEASUREMENTS.md), most of it run once: the kernel maps up to 16
    /// pages around each page a fault touches; the model's `mdef` (2.8 MB) is read whole when a
    /// grammar is loaded and little of it while decoding.
    public static func releaseFilePages() {
        guard var smaps = KernelFile.read("/proc/self/smaps") else { return }
        var mapping: (start: UInt, end: UInt, releasable: Bool)?
        var anonymous = -1
        func release() {
            guard let current = mapping, current.releasable, anonymous == 0 else { return }
            _ = madvise(UnsafeMutableRawPointer(bitPattern: current.start), Int(current.end - current.start), MADV_DONTNEED)
        }
        let anonymousLine = Array("Anonymous:".utf8)
        // Of a mapping's twenty-odd lines two matter: the others are passed over by their first
        // byte (it runs after each utterance; splitting every line took 100 times longer).
        smaps.withUTF8 { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                defer { lineStart = lineEnd + 1 }
                let line = bytes[lineStart..<lineEnd]
                guard let first = line.first else { continue }
                if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(first) {
                    // A mapping's first line: "start-end perms offset device inode [path]".
                    release()
                    mapping = nil
                    anonymous = -1
                    let text = String(decoding: line, as: UTF8.self)
                    let fields = text.split(separator: " ", omittingEmptySubsequences: true)
                    guard fields.count >= 5, let dash = fields[0].firstIndex(of: "-"),
                        let start = UInt(fields[0][..<dash], radix: 16), let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16)
                    else { continue }
                    let path = fields.count >= 6 ? fields[5] : ""
                    let regularFile = path.hasPrefix("/") && !path.hasPrefix("/dev/") && !path.hasPrefix("/proc/") && !path.hasPrefix("/sys/")
                    mapping = (start, end, regularFile && fields[1].hasPrefix("r") && !fields[1].contains("w"))
                } else if line.starts(with: anonymousLine) {
                    let value = String(decoding: line.dropFirst(anonymousLine.count), as: UTF8.self)
                    anonymous = Int(value.split(separator: " ").first ?? "") ?? -1
                }
            }
        }
        release()
    }
}
