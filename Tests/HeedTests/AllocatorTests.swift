import Foundation
import HeedCore
import HeedSpeech
import Testing
import HeedTesting

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

    /// How many heaps (arenas) glibc's allocator has: `malloc_info`'s `<heap nr=…>` elements.
    static func arenas() throws -> Int {
        typealias Info = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info"))
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        let stream = try #require(open_memstream(&buffer, &size))
        _ = unsafeBitCast(symbol, to: Info.self)(0, stream)
        fclose(stream)
        defer { free(buffer) }
        return String(cString: try #require(buffer)).components(separatedBy: "<heap nr=").count - 1
    }

    /// With the arenas limited (as `heed` does first thing), threads that allocate at once share
    /// the heaps there are instead of each being given a new one.
    ///
    /// glibc fixes its limit the first time a thread finds more than eight arenas, and `mallopt`
    /// changes nothing after that. In this test process the other suites' threads may have got
    /// there first, so the check runs in a process of its own: this test runner, running this
    /// test alone, as `heed` runs its `main`.
    @Test func threadsAllocatingAtOnceGetNoNewArena() throws {
        guard ProcessInfo.processInfo.environment["HEED_ARENA_TEST_ALONE"] != nil else {
            let runner = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            let (status, _, report) = try Fixtures.run(
                runner, ["--testing-library", "swift-testing", "--filter", "threadsAllocatingAtOnceGetNoNewArena"],
                environment: ["HEED_ARENA_TEST_ALONE": "1"])
            #expect(status == 0, "the test alone: \(report.suffix(2000))")
            #expect(report.contains("Test run with 1 test"), "the test alone did not run: \(report.suffix(500))")
            return
        }
        Allocator.limitArenas(to: 1)
        let before = try Self.arenas()
        let threads = 8
        let started = DispatchGroup()
        for _ in 0..<threads {
            started.enter()
            Thread.detachNewThread {
                for round in 0..<2_000 {
                    let blocks = (0..<16).map { _ in malloc(64 + round % 512) }
                    blocks.forEach { free($0) }
                }
                started.leave()
            }
        }
        started.wait()
        #expect(try Self.arenas() == before, "threads contending for the heap were given arenas of their own")
    }

    /// The process's own code is given back too, and runs on: the pages come back as needed.
    /// (How much of it stays given back is not measured here: the other suites run code on
    /// other threads meanwhile. The mappings of the test below are the process's alone.)
    @Test func theProcessRunsOnAfterItsCodeIsGivenBack() throws {
        _ = try JSONSerialization.data(withJSONObject: ["a": [1, 2, 3]])
        Allocator.releaseFilePages()
        let again = try JSONSerialization.data(withJSONObject: ["b": "still works"])
        #expect(String(decoding: again, as: UTF8.self) == #"{"b":"still works"}"#)
    }

    /// A file mapped read-only, shared (as PocketSphinx maps the model's `mdef` and `sendump`),
    /// private, or private and executable (as code is) leaves the process's resident set and
    /// reads the same afterwards; a private copy the process wrote to is kept as written.
    @Test func mappedFilesAreReleasedAndWrittenCopiesKept() throws {
        let size = 64 * 4096
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("model").path
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDWR)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        func map(_ protection: Int32, _ flags: Int32) -> UnsafeMutableRawPointer? {
            let address = mmap(nil, size, protection, flags, descriptor, 0)
            return address == MAP_FAILED ? nil : address
        }
        var released = [
            ("shared", try #require(map(PROT_READ, MAP_SHARED))),
            ("private", try #require(map(PROT_READ, MAP_PRIVATE))),
        ]
        // A folder mounted noexec refuses executable mappings: the other two still count.
        if let code = map(PROT_READ | PROT_EXEC, MAP_PRIVATE) { released.append(("executable", code)) }
        let written = try #require(map(PROT_READ | PROT_WRITE, MAP_PRIVATE))
        defer { for address in released.map(\.1) + [written] { munmap(address, size) } }
        func resident(_ address: UnsafeMutableRawPointer) throws -> Int {
            try #require(try Self.mappings().first { $0.start == UInt(bitPattern: address) }).resident
        }
        for (name, address) in released {
            // Tests running beside this one give the process's file pages back too (the listener
            // does after each utterance): between the reading and the count, one may have.
            var sum = 0
            var everyPage = false
            for _ in 0..<5 where !everyPage {
                sum = 0
                for page in stride(from: 0, to: size, by: 4096) { sum += Int(address.load(fromByteOffset: page + 1, as: UInt8.self)) }
                everyPage = try resident(address) == size / 1024
            }
            #expect(sum == 7 * size / 4096, "\(name): every page read as written")
            #expect(everyPage, "\(name): every page was read")
        }
        written.storeBytes(of: 0xAB, toByteOffset: 4096 * 3, as: UInt8.self)

        Allocator.releaseFilePages()
        for (name, address) in released {
            #expect(try resident(address) == 0, "\(name)")
            #expect(address.load(fromByteOffset: 4096 * 10 + 5, as: UInt8.self) == bytes[4096 * 10 + 5], "\(name)")
        }
        // Read again and given back again, now by what the first call found out about the mappings.
        for (_, address) in released {
            for page in stride(from: 0, to: size, by: 4096) { _ = address.load(fromByteOffset: page, as: UInt8.self) }
        }
        Allocator.releaseFilePages()
        for (name, address) in released { #expect(try resident(address) == 0, "\(name), a second time") }
        #expect(written.load(fromByteOffset: 4096 * 3, as: UInt8.self) == 0xAB, "a page the process wrote is its own")
        #expect(written.load(fromByteOffset: 4096 * 3 + 1, as: UInt8.self) == bytes[4096 * 3 + 1])
    }

    /// The release build places the functions the listener runs side by side (Package.swift,
    /// `scripts/code-order.py`), so that a command brings fewer of the binary's pages in. A list
    /// gone stale costs that memory without a sign; this fails once many of the Heed functions it
    /// names are gone from the binary (the debug build's, which has the same names for them).
    /// Foundation's ISO 8601 dates build a calendar whose time zone opens ICU's zone data, and
    /// its trimming and searching of strings go through `NSString` and CoreFoundation's Unicode
    /// tables: a listener holds what they touch for the rest of its life (1.1 and about 0.4 MB,
    /// docs/MEASUREMENTS.md). Heed's code uses HeedCore's `iso8601Text`, `Date(iso8601:)` and
    /// `trimmed` instead. (The client example uses only HeedClient, and Foundation freely.)
    @Test func heedsCodeKeepsToItsOwnDatesAndTrimming() throws {
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !$0.hasPrefix("heed-client-example/") }
        #expect(files.count > 100, "found \(files.count) Swift files under \(sources.path)")
        var uses: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmed.hasPrefix("//") && line.firstMatch(of: /trimmingCharacters\(|ISO8601DateFormatter|\.iso8601\b/) != nil {
                uses.append("\(file):\(number + 1)")
            }
        }
        #expect(uses.isEmpty, "Foundation's dates or trimming at \(uses.joined(separator: ", "))")
    }

    @Test func theCodeOrderStillNamesHeedsFunctions() throws {
        let list = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("contrib/code-order/heed.txt"), encoding: .utf8)
        let sections = list.split(separator: "\n")
        #expect(sections.allSatisfy { $0.hasPrefix(".text.") })
        // Heed's own functions, less what only an optimized build has: specializations, outlined
        // copies, merged functions, thunks and the pieces async functions are split into.
        let names = sections.map { $0.dropFirst(".text.".count) }.filter { name in
            name.wholeMatch(of: /\$s\d+[Hh]eed.*/) != nil && name.firstMatch(of: /T[gGfmRQY]|WO/) == nil
        }
        #expect(names.count > 500, "the list has \(names.count) of Heed's functions")
        let (status, output, problem) = try Fixtures.run(
            URL(fileURLWithPath: "/usr/bin/nm"), ["--defined-only", Fixtures.heedBinary.path])
        #expect(status == 0, "nm: \(problem)")
        let defined = Set(output.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        let missing = names.filter { !defined.contains(String($0)) }
        let gone = "\(missing.count) of \(names.count) functions in contrib/code-order/heed.txt are gone"
        #expect(missing.count * 10 <= names.count, "\(gone): run scripts/code-order.py (\(missing.prefix(3)))")
    }
}
