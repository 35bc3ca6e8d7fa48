import Foundation
import HeedSpeech
import Testing

/// What a long-running Heed gives back of the memory it holds.
@Suite("Process memory")
struct AllocatorTests {
    /// Resident kB of the private, file-backed executable mappings (code), and of all private
    /// copies in any mapping (what must never be thrown away).
    static func residentCode() throws -> (code: Int, anonymous: Int) {
        let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        var (code, anonymous, executable) = (0, 0, false)
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 5, fields[0].contains("-"), !fields[0].hasSuffix(":") {
                executable = fields[1] == "r-xp" && fields.count >= 6 && fields[5].hasPrefix("/")
            } else if fields.first == "Rss:", executable {
                code += Int(fields[1]) ?? 0
            } else if fields.first == "Anonymous:" {
                anonymous += Int(fields[1]) ?? 0
            }
        }
        return (code, anonymous)
    }

    /// The test process has run much code by now (the runner, the suites before): after the call
    /// far less of it is mapped, and the process goes on running (the pages come back as needed).
    @Test func codePagesAreReleasedAndComeBack() throws {
        // Run some code so that there is something to release even when this test runs first.
        _ = try JSONSerialization.data(withJSONObject: ["a": [1, 2, 3]])
        let before = try Self.residentCode()
        Allocator.releaseCodePages()
        let after = try Self.residentCode()
        #expect(after.code < before.code / 2, "code resident before \(before.code) kB, after \(after.code) kB")
        // Private copies are untouched: what the process wrote is still there.
        #expect(after.anonymous >= before.anonymous - before.anonymous / 10, "anonymous before \(before.anonymous) kB, after \(after.anonymous) kB")
        let again = try JSONSerialization.data(withJSONObject: ["b": "still works"])
        #expect(String(decoding: again, as: UTF8.self) == #"{"b":"still works"}"#)
    }
}
