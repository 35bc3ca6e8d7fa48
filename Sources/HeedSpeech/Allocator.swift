import Foundation
import HeedCore
import Synchronization

/// glibc's allocator, tuned for a process that runs for days with grammars coming and going, and
/// the pages of code such a process maps once and never runs again.
///
/// `<malloc.h>` is not in Swift's Glibc module, so its functions are looked up by name; without
/// glibc nothing changes. Every call to them, and to `madvise`, is here.
public enum Allocator {
    /// `mallopt(M_MMAP_THRESHOLD, bytes)`: allocations of `bytes` or more get pages of their own,
    /// which go back to the system when freed.
    public static func mapLargeAllocations(from bytes: Int32) {
        mallocOption(-3, bytes)  // M_MMAP_THRESHOLD in <malloc.h>
    }

    /// `mallopt(M_ARENA_MAX, count)`: at most `count` heaps for all threads. glibc gives a thread
    /// that finds the heap in use one of its own (up to eight a core), and each keeps the pages
    /// its freed blocks leave: the listener, whose grammars are built on one thread and decoded on
    /// another, peaked 6 MB higher with them (docs/MEASUREMENTS.md). Call it before other threads
    /// allocate.
    public static func limitArenas(to count: Int32) {
        mallocOption(-8, count)  // M_ARENA_MAX in <malloc.h>
    }

    /// `mallopt(option, value)`, when the C library has it.
    private static func mallocOption(_ option: Int32, _ value: Int32) {
        typealias MallocOption = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: MallocOption.self)(option, value)
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
    /// rebuild, an utterance decoded or acted on). Start-up alone leaves 12–15 MB of Heed's own
    /// code mapped (`/proc/PID/smaps`, docs/MEASUREMENTS.md), most of it run once: the kernel maps
    /// up to 16 pages around each page a fault touches; the model's `mdef` (2.8 MB) is read whole
    /// when a grammar is loaded and little of it while decoding.
    ///
    /// It reads `/proc/self/maps`, and `/proc/self/smaps` only when a mapping it has not judged
    /// yet appears: a mapping the process cannot write gains no pages of its own (the loader
    /// writes relocations before it makes a segment read-only, so that line is new when judged).
    /// About 0.6 ms a call in the listener, against 1.4 ms reading `smaps` each time.
    public static func releaseFilePages() {
        guard let maps = KernelFile.read("/proc/self/maps") else { return }
        // Only mappings of files the process cannot write are candidates: their lines stay the
        // same while they are mapped (anonymous mappings come and go with every large block).
        let candidates = maps.split(separator: "\n").filter(isReadOnlyFile).map(String.init)
        let ranges = judged.withLock { judged in
            if candidates.contains(where: { judged[$0] == nil }), let smaps = KernelFile.read("/proc/self/smaps") {
                // Judged afresh: the mappings gone since are forgotten.
                judged = [:]
                judge(smaps, into: &judged)
            }
            return candidates.compactMap { judged[$0] ?? nil }
        }
        for range in ranges {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), Int(range.upperBound - range.lowerBound), MADV_DONTNEED)
        }
    }

    /// What ``releaseFilePages()`` has found out: each candidate mapping's `/proc/self/maps` line
    /// with its range when it can be given back, `nil` when the process holds pages of its own in it.
    private static let judged = Mutex<[String: Range<UInt>?]>([:])

    /// Whether a mapping's line ("start-end perms offset device inode path") is of a regular file
    /// the process may read and not write.
    private static func isReadOnlyFile(_ line: Substring) -> Bool {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6, fields[1].hasPrefix("r"), !fields[1].contains("w" as Character) else { return false }
        let path = fields[5].drop { $0 == " " }
        return path.hasPrefix("/") && !path.hasPrefix("/dev/") && !path.hasPrefix("/proc/") && !path.hasPrefix("/sys/")
    }

    /// Judges every read-only file mapping of `smaps`, keyed by its first line (the same as its
    /// line in `maps`).
    private static func judge(_ smaps: String, into releasable: inout [String: Range<UInt>?]) {
        var smaps = smaps
        var mapping: (line: String, range: Range<UInt>)?
        var anonymous = -1
        func record() {
            guard let current = mapping else { return }
            releasable[current.line] = anonymous == 0 ? current.range : Range<UInt>?.none
        }
        let anonymousLine = Array("Anonymous:".utf8)
        // Of a mapping's twenty-odd lines two matter: the others are passed over by their first
        // byte (splitting every line took 100 times longer).
        smaps.withUTF8 { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                defer { lineStart = lineEnd + 1 }
                let line = bytes[lineStart..<lineEnd]
                guard let first = line.first else { continue }
                if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(first) {
                    // A mapping's first line: "start-end perms offset device inode [path]".
                    record()
                    mapping = nil
                    anonymous = -1
                    let text = String(decoding: line, as: UTF8.self)
                    guard isReadOnlyFile(text[...]), let range = text.split(separator: " ").first, let dash = range.firstIndex(of: "-"),
                        let start = UInt(range[..<dash], radix: 16), let end = UInt(range[range.index(after: dash)...], radix: 16), start < end
                    else { continue }
                    mapping = (text, start..<end)
                } else if line.starts(with: anonymousLine) {
                    let value = String(decoding: line.dropFirst(anonymousLine.count), as: UTF8.self)
                    anonymous = Int(value.split(separator: " ").first ?? "") ?? -1
                }
            }
        }
        record()
    }
}
