import Foundation

/// glibc's allocator, tuned for a process that runs for days with grammars coming and going.
///
/// `<malloc.h>` is not in Swift's Glibc module, so its functions are looked up by name; without
/// glibc nothing changes. Every call to them is here.
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
}
