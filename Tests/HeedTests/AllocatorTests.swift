import Foundation
import HeedCore
import HeedSpeech
import Testing

/// What a long-running Heed gives back of the memory it holds.
@Suite("Process memory")
struct AllocatorTests {
    /// One mapping of `/proc/self/smaps`: its first line's fields and its resident and private kB.
    struct Mapping {
        let start: UInt
        let permissions: String
        let path: String
        var resident = 0
        var anonymous = 0
    }

    static func mappings() throws -> [Mapping] {
        let smaps = try #require(KernelFile.read("/proc/self/smaps"))
        var mappings: [Mapping] = []
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 5, let dash = fields[0].firstIndex(of: "-"), let start = UInt(fields[0][..<dash], radix: 16) {
                mappings.append(Mapping(start: start, permissions: String(fields[1]), path: fields.count >= 6 ? String(fields[5]) : ""))
            } else if fields.first == "Rss:", fields.count >= 2, !mappings.isEmpty {
                mappings[mappings.count - 1].resident = Int(fields[1]) ?? 0
            } else if fields.first == "Anonymous:", fields.count >= 2, !mappings.isEmpty {
                mappings[mappings.count - 1].anonymous = Int(fields[1]) ?? 0
            }
        }
        return mappings
    }

    /// Resident kB of the file-backed executable mappings (code), and of all private copies in
    /// any mapping (what must never be thrown away).
    static func residentCode() throws -> (code: Int, anonymous: Int) {
        let all = try mappings()
        let code = all.filter { $0.permissions == "r-xp" && $0.path.hasPrefix("/") }.map(\.resident).reduce(0, +)
        return (code, all.map(\.anonymous).reduce(0, +))
    }

    /// The kernel's files are read whole: Foundation's `String(contentsOfFile:)` stopped at the
    /// first page of `/proc/self/smaps`, before the shared libraries were listed, and the release
    /// below never saw them.
    @Test func kernelFilesAreReadWhole() throws {
        let smaps = try #require(KernelFile.read("/proc/self/smaps"))
        #expect(smaps.utf8.count > 4096)
        #expect(smaps.contains("libc.so"), "the C library's mappings come after the first page")
        #expect(smaps.hasSuffix("\n"))
        #expect(KernelFile.read("/proc/self/no-such-file") == nil)
    }

    /// The test process has run much code by now (the runner, the suites before): after the call
    /// far less of it is mapped, and the process goes on running (the pages come back as needed).
    @Test func codePagesAreReleasedAndComeBack() throws {
        // Run some code so that there is something to release even when this test runs first.
        _ = try JSONSerialization.data(withJSONObject: ["a": [1, 2, 3]])
        let before = try Self.residentCode()
        Allocator.releaseFilePages()
        let after = try Self.residentCode()
        #expect(after.code < before.code / 2, "code resident before \(before.code) kB, after \(after.code) kB")
        // Private copies are untouched: what the process wrote is still there.
        #expect(after.anonymous >= before.anonymous - before.anonymous / 10, "anonymous before \(before.anonymous) kB, after \(after.anonymous) kB")
        let again = try JSONSerialization.data(withJSONObject: ["b": "still works"])
        #expect(String(decoding: again, as: UTF8.self) == #"{"b":"still works"}"#)
    }

    /// A file mapped read-only and shared (as PocketSphinx maps the model's `mdef` and `sendump`)
    /// leaves the process's resident set and reads the same afterwards; a private copy the
    /// process wrote to is kept as written.
    @Test func mappedFilesAreReleasedAndWrittenCopiesKept() throws {
        let size = 64 * 4096
        let folder = try Fixtures.temporaryDirectory()
        let path = folder.appendingPathComponent("model").path
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDWR)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let shared = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0))
        let written = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0))
        defer {
            munmap(shared, size)
            munmap(written, size)
        }
        var sum = 0
        for page in stride(from: 0, to: size, by: 4096) { sum += Int(shared.load(fromByteOffset: page + 1, as: UInt8.self)) }
        written.storeBytes(of: 0xAB, toByteOffset: 4096 * 3, as: UInt8.self)
        func resident(_ address: UnsafeMutableRawPointer) throws -> Int {
            try #require(try Self.mappings().first { $0.start == UInt(bitPattern: address) }).resident
        }
        #expect(try resident(shared) == size / 1024, "every page of the shared mapping was read")

        Allocator.releaseFilePages()
        #expect(try resident(shared) == 0)
        #expect(shared.load(fromByteOffset: 4096 * 10 + 5, as: UInt8.self) == bytes[4096 * 10 + 5])
        #expect(written.load(fromByteOffset: 4096 * 3, as: UInt8.self) == 0xAB, "a page the process wrote is its own")
        #expect(written.load(fromByteOffset: 4096 * 3 + 1, as: UInt8.self) == bytes[4096 * 3 + 1])
        #expect(sum == 7 * size / 4096, "every page read as written")
    }
}
