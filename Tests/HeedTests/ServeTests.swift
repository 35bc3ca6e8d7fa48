import Foundation
import HeedClient
import Synchronization
import Testing

/// `heed serve` as users run it: the real service process on a temporary socket, and real
/// client processes (`heed-client-example`, identified by the kernel through their executable),
/// with temporary client manifests, state folder and policy file.
@Suite(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"), .serialized)
struct ServeTests {
    static let recording = Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path
    static let appID = "org.heed.example-client"

    /// The built `heed-client-example`, next to `heed`.
    static var clientBinary: URL {
        Fixtures.heedBinary.deletingLastPathComponent().appendingPathComponent("heed-client-example")
    }

    /// A service's folders: socket, client manifests, state, config with a policy file.
    struct Setup {
        let folder: URL
        var socket: String { folder.appendingPathComponent("run/heed.sock").path }
        var clients: URL { folder.appendingPathComponent("clients") }
        var state: String { folder.appendingPathComponent("state").path }
        var config: String { folder.appendingPathComponent("config.json").path }
        var policy: URL { folder.appendingPathComponent("policy.json") }

        init() throws {
            folder = try Fixtures.temporaryDirectory()
            try FileManager.default.createDirectory(at: clients, withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: ["policyFile": policy.path]).write(to: URL(fileURLWithPath: config))
        }

        /// Writes the example client's manifest, with or without a usage description.
        func writeManifest(usageDescription: Bool = true) throws {
            var manifest: [String: String] = [
                "appId": ServeTests.appID, "displayName": "Example", "executable": ServeTests.clientBinary.path,
            ]
            if usageDescription { manifest["speechRecognitionUsageDescription"] = "Transcribes what you give it." }
            let folder = clients.appendingPathComponent("example")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: manifest).write(to: folder.appendingPathComponent("client.json"))
        }

        /// `heed auth speech-recognition ACTION org.heed.example-client`.
        @discardableResult
        func auth(_ action: String) throws -> (status: Int32, output: String, error: String) {
            try Fixtures.run(
                Fixtures.heedBinary,
                ["auth", "speech-recognition", action, ServeTests.appID, "--state-dir", state, "--config", config, "--clients", clients.path])
        }

        /// Runs the example client against this service.
        func client(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
            try Fixtures.run(ServeTests.clientBinary, ["--socket", socket] + arguments)
        }

        func authorized() throws {
            try writeManifest()
            #expect(try auth("grant").status == 0)
        }
    }

    /// A running `heed serve --json`, its events collected as they come.
    final class Service: Sendable {
        let process: Process
        /// Text that a pipe's handler appends to.
        final class Collected: Sendable {
            let text = Mutex("")
            func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        private let output = Collected()
        private let errors = Collected()

        init(_ setup: Setup, extra: [String] = []) throws {
            process = Process()
            process.executableURL = Fixtures.heedBinary
            process.arguments =
                [
                    "serve", "--no-microphone", "--json", "--socket", setup.socket, "--state-dir", setup.state, "--config", setup.config,
                    "--clients", setup.clients.path,
                ] + extra
            process.standardInput = FileHandle.nullDevice
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            out.fileHandleForReading.readabilityHandler = { [output] handle in output.append(handle.availableData) }
            err.fileHandleForReading.readabilityHandler = { [errors] handle in errors.append(handle.availableData) }
            try process.run()
        }

        var events: String { output.text.withLock { $0 } }
        var errorOutput: String { errors.text.withLock { $0 } }

        /// Waits until the events hold `text` (or the service ended); a generous limit only keeps a broken build from hanging.
        @discardableResult
        func wait(for text: String, limit: Double = 120) -> Bool {
            let end = Date().addingTimeInterval(limit)
            while Date() < end {
                if events.contains(text) { return true }
                if !process.isRunning { return events.contains(text) }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        func waitListening() throws {
            guard wait(for: "\"event\":\"listening\"") else {
                throw ServeTestError("the service did not start: \(errorOutput)")
            }
        }

        /// Stops the service with SIGTERM and returns its exit status.
        func stop() -> Int32 {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    struct ServeTestError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The JSON lines of a client's `--json` output.
    static func lines(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    static func finalLine(_ output: String) -> [String: Any]? {
        lines(output).first { $0["type"] as? String == "final" }
    }

    // MARK: - Permission

    @Test func permissionMatrix() throws {
        let setup = try Setup()
        let service = try Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()

        // No manifest names the executable.
        var result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.error.contains("unknownClient"), "\(result.error)")

        // A manifest without a usage description cannot ask.
        try setup.writeManifest(usageDescription: false)
        result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.error.contains("noUsageDescription") && result.error.contains("'speechRecognitionUsageDescription'"), "\(result.error)")

        // notDetermined, with nobody to ask: refused, naming the command that decides.
        try setup.writeManifest()
        result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.output.contains("notDetermined"))
        #expect(result.error.contains("heed auth speech-recognition grant \(Self.appID)"), "\(result.error)")
        result = try setup.client(["transcribe", Self.recording])
        #expect(result.status == 1)
        #expect(result.error.contains("notDetermined"), "\(result.error)")

        // Granted.
        let granted = try setup.auth("grant")
        #expect(granted.status == 0)
        #expect(granted.output.contains("authorized"))
        result = try setup.client(["authorize"])
        #expect(result.status == 0)
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "authorized")

        // Denied: refused without recognizing.
        #expect(try setup.auth("deny").status == 0)
        result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.error.contains("denied"))
        result = try setup.client(["transcribe", Self.recording])
        #expect(result.status == 1)
        #expect(result.error.contains("denied"), "\(result.error)")

        // Restricted by the administrator's policy, which the user cannot change.
        try JSONSerialization.data(withJSONObject: ["restricted": [Self.appID]]).write(to: setup.policy)
        result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.error.contains("restricted") && result.error.contains(setup.policy.path), "\(result.error)")
        let grantRestricted = try setup.auth("grant")
        #expect(grantRestricted.status == 1)
        #expect(grantRestricted.error.contains("restricted by the administrator's policy"), "\(grantRestricted.error)")
        try FileManager.default.removeItem(at: setup.policy)

        // Reset: notDetermined again.
        #expect(try setup.auth("reset").status == 0)
        result = try setup.client(["authorize"])
        #expect(result.status == 1)
        #expect(result.output.contains("notDetermined"))
        let status = try setup.auth("status")
        #expect(status.output.contains("notDetermined"), "\(status.output)")

        #expect(service.stop() == 0)
    }

    // MARK: - Recognition

    @Test func recognitionRequests() throws {
        let setup = try Setup()
        try setup.authorized()
        let service = try Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()

        // A file: the service reads it; the final result names the intent.
        var result = try setup.client(["transcribe", Self.recording, "--json"])
        #expect(result.status == 0, "\(result.error)")
        var final = try #require(Self.finalLine(result.output), "\(result.output)")
        #expect(final["transcription"] as? String == "set a timer for five minutes")
        #expect(final["isFinal"] as? Bool == true)
        let intent = final["intent"] as? [String: Any]
        #expect(intent?["intent"] as? String == "setTimer")
        #expect((intent?["parameters"] as? [String: Any])?["duration"] as? Int == 300)
        let segments = final["segments"] as? [[String: Any]] ?? []
        #expect(segments.map { $0["substring"] as? String ?? "" } == ["set", "a", "timer", "for", "five", "minutes"])
        #expect(segments.allSatisfy { $0["timestamp"] is Double && $0["duration"] is Double && $0["confidence"] is Double })

        // Streamed audio with partial results: partials, then the final, then completed.
        result = try setup.client(["transcribe", Self.recording, "--stream", "--partial", "--json"])
        #expect(result.status == 0, "\(result.error)")
        let lines = Self.lines(result.output)
        let types = lines.map { $0["type"] as? String ?? "" }
        let firstPartial = try #require(types.firstIndex(of: "partial"), "\(result.output)")
        let finalIndex = try #require(types.firstIndex(of: "final"))
        #expect(firstPartial < finalIndex)
        #expect(lines[firstPartial]["isFinal"] as? Bool == false)
        #expect(lines[finalIndex]["transcription"] as? String == "set a timer for five minutes")
        let states = lines.compactMap { $0["state"] as? String }
        #expect(states == ["starting", "running", "finishing", "completed"])

        // Finish mid-stream: a final result of what was sent.
        result = try setup.client(["transcribe", Self.recording, "--stream", "--json", "--finish-after", "1.2"])
        #expect(result.status == 0, "\(result.error)")
        final = try #require(Self.finalLine(result.output), "\(result.output)")
        #expect(final["isFinal"] as? Bool == true)
        #expect((final["transcription"] as? String) != "set a timer for five minutes")

        // Cancel mid-stream: canceling, completed, no final result.
        result = try setup.client(["transcribe", Self.recording, "--stream", "--json", "--cancel-after", "1"])
        #expect(result.status == 0, "\(result.error)")
        #expect(Self.finalLine(result.output) == nil)
        #expect(Self.lines(result.output).compactMap { $0["state"] as? String }.suffix(2) == ["canceling", "completed"])

        // A phrase list of the client's own, and one of Heed's grammars.
        result = try setup.client(["transcribe", Self.recording, "--json", "--phrases", "set a timer for five minutes,lights off"])
        #expect(Self.finalLine(result.output)?["transcription"] as? String == "set a timer for five minutes", "\(result.output)")
        result = try setup.client(["transcribe", Self.recording, "--grammar", "no-such-grammar"])
        #expect(result.status == 1)
        #expect(result.error.contains("invalidGrammar") && result.error.contains("commands"), "\(result.error)")

        // Heed's microphone is not built yet: a clear status, not a hang.
        result = try setup.client(["listen"])
        #expect(result.status == 1)
        #expect(result.error.contains("unavailable") && result.error.contains("not built yet"), "\(result.error)")

        #expect(service.stop() == 0)
    }

    @Test func disconnectingAndConcurrentClients() throws {
        let setup = try Setup()
        try setup.authorized()
        let service = try Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()

        // A client that goes away mid-stream: its task is cancelled; the service goes on.
        let gone = try setup.client(["transcribe", Self.recording, "--stream", "--disconnect-after", "1"])
        #expect(gone.status == 0)
        #expect(service.wait(for: "\"state\":\"canceling\""), "\(service.events)")
        var result = try setup.client(["transcribe", Self.recording, "--json"])
        #expect(Self.finalLine(result.output)?["transcription"] as? String == "set a timer for five minutes", "\(result.error)")

        // Two clients at once, one streaming, one with a file.
        let outcomes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let arguments = index == 0 ? ["transcribe", Self.recording, "--json", "--stream", "--partial"] : ["transcribe", Self.recording, "--json"]
            let run = try? setup.client(arguments)
            let text = run.flatMap { Self.finalLine($0.output)?["transcription"] as? String } ?? "failed: \(run?.error ?? "")"
            outcomes.withLock { $0.append(text) }
        }
        #expect(outcomes.withLock { $0 } == ["set a timer for five minutes", "set a timer for five minutes"])

        // A malformed and an oversized line get an error on their connection only.
        let descriptor = try UnixSocket.connect(to: setup.socket)
        defer { UnixSocket.close(descriptor) }
        let reader = LineReader(descriptor: descriptor, maximumLength: HeedProtocol.maximumLineLength)
        func reply() throws -> [String: Any] {
            guard case .line(let bytes) = try reader.next() else { throw ServeTestError("the service closed the connection") }
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
        try UnixSocket.send(descriptor, Array("{\"id\": 7, \"type\": \"recognize\", \"source\": \n".utf8))
        var error = try reply()
        #expect(error["type"] as? String == "error")
        #expect(error["status"] as? String == "malformed")
        try UnixSocket.send(descriptor, [UInt8](repeating: UInt8(ascii: "a"), count: HeedProtocol.maximumLineLength + 10) + [0x0A])
        error = try reply()
        #expect(error["status"] as? String == "tooLarge")
        // Another client meanwhile is served as usual, and this connection still answers.
        result = try setup.client(["transcribe", Self.recording, "--json"])
        #expect(Self.finalLine(result.output)?["transcription"] as? String == "set a timer for five minutes")
        try UnixSocket.send(descriptor, Array("{\"id\": \"h\", \"type\": \"hello\", \"protocol\": 1}\n".utf8))
        let hello = try reply()
        #expect(hello["type"] as? String == "hello")
        #expect(hello["id"] as? String == "h")
        #expect(hello["protocol"] as? Int == 1)

        #expect(service.stop() == 0)
    }

    // MARK: - The socket

    @Test func staleSocketBusySocketAndCleanStop() throws {
        let setup = try Setup()
        try setup.authorized()
        // A crashed service's socket: the file is there, nobody listens.
        try FileManager.default.createDirectory(
            atPath: (setup.socket as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let stale = try UnixSocket.listen(at: setup.socket)
        UnixSocket.close(stale)
        #expect(FileManager.default.fileExists(atPath: setup.socket))

        let service = try Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()
        #expect(service.events.contains("\"event\":\"staleSocketRemoved\""))
        var information = stat()
        #expect(lstat(setup.socket, &information) == 0)
        #expect(information.st_mode & 0o777 == 0o600)
        #expect(stat((setup.socket as NSString).deletingLastPathComponent, &information) == 0)
        #expect(information.st_mode & 0o777 == 0o700)
        let result = try setup.client(["authorize"])
        #expect(result.status == 0, "\(result.error)")

        // A second service on the same socket refuses to start.
        let second = try Fixtures.run(
            Fixtures.heedBinary,
            ["serve", "--no-microphone", "--socket", setup.socket, "--state-dir", setup.state, "--clients", setup.clients.path])
        #expect(second.status == 1)
        #expect(second.error.contains("another Heed service answers on \(setup.socket)"), "\(second.error)")
        #expect(FileManager.default.fileExists(atPath: setup.socket))

        // SIGTERM: a clean stop that removes the socket.
        #expect(service.stop() == 0)
        #expect(service.events.contains("\"event\":\"stopped\""))
        #expect(!FileManager.default.fileExists(atPath: setup.socket))
    }
}
