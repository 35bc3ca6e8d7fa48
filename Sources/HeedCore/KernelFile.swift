import Glibc

/// Files the kernel writes as they are read (`/proc`, `/sys`).
///
/// They report a size of 0, and Foundation's `String(contentsOfFile:)` reads one page of them:
/// `/proc/self/smaps` of a listener is 78 kB, of which it returned the first 3.8 kB, the mappings
/// of Heed's own binary and none of the libraries or the acoustic model.
public enum KernelFile {
    /// The whole text of `path`, read until the kernel has no more; `nil` when it cannot be opened.
    ///
    /// ```swift
    /// let smaps = KernelFile.read("/proc/self/smaps")
    /// ```
    public static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
