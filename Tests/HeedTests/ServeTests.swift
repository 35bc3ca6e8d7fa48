import Foundation
import HeedClient
import HeedRuntime
import HeedService
import Synchronization
import Testing
import HeedState
import HeedTesting

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
            folder = try TemporaryFolder.make()
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
        /// Text read from a pipe as it comes.
        final class Collected: Sendable {
            let text = Mutex("")
            /// Signalled once the pipe reached end-of-file: every byte the service wrote is in `text`.
            private let ended = DispatchSemaphore(value: 0)

            /// Reads `handle` on a thread of its own until end-of-file.
            ///
            /// A blocking read, not `readabilityHandler`: on Linux, tearing down the read source
            /// Foundation installs for it can crash libdispatch's event loop
            /// (swift-corelibs-foundation #3276), and did crash this test process in CI.
            init(reading handle: FileHandle) {
                let descriptor = handle.fileDescriptor
                let reader = Thread { [self] in
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while true {
                        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                        if count < 0, errno == EINTR { continue }
                        guard count > 0 else { break }
                        self.text.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) }
                    }
                    withExtendedLifetime(handle) {}
                    self.ended.signal()
                }
                reader.start()
            }

            /// Waits for end-of-file once the service has exited, so its last lines are read; the
            /// limit only covers a child of the service that kept the pipe open.
            func drain(limit: Double = 10) {
                if ended.wait(timeout: .now() + limit) == .success { ended.signal() }
            }
        }
        private let output: Collected
        private let errors: Collected

        /// Starts the service; with `microphone`, Heed's microphone is on (`extra` names the
        /// device) and `environment` holds its HOME (an `.asoundrc`) and `XDG_RUNTIME_DIR`.
        init(_ setup: Setup, extra: [String] = [], microphone: Bool = false, environment: [String: String] = [:]) throws {
            process = Process()
            process.executableURL = Fixtures.heedBinary
            process.arguments =
                ["serve"] + (microphone ? [] : ["--no-microphone"])
                + [
                    "--json", "--socket", setup.socket, "--state-dir", setup.state, "--config", setup.config,
                    "--clients", setup.clients.path,
                ] + extra
            // No session bus unless a test gives one: a notDetermined client must not reach the
            // notification server of whoever runs the tests.
            process.environment = ProcessInfo.processInfo.environment
                .merging(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/heed-test-bus"]) { _, new in new }
                .merging(environment) { _, new in new }
            process.standardInput = FileHandle.nullDevice
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            output = Collected(reading: out.fileHandleForReading)
            errors = Collected(reading: err.fileHandleForReading)
        }

        var events: String { output.text.withLock { $0 } }
        var errorOutput: String { errors.text.withLock { $0 } }

        /// Waits until the events hold `text` (or the service ended); a generous limit only keeps a broken build from hanging.
        @discardableResult
        func wait(for text: String, limit: Double = 120) -> Bool {
            let end = Date().addingTimeInterval(limit)
            while Date() < end {
                if events.contains(text) { return true }
                if !process.isRunning {
                    output.drain()
                    return events.contains(text)
                }
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
            output.drain()
            errors.drain()
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
        // One partial result every 250 ms of audio once something is heard, changed or not: the
        // recording's 2.92 s give 11 (10 when the first quarter second is still silent).
        #expect(types.filter { $0 == "partial" }.count >= 10, "\(types)")
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

        // A service started with --no-microphone has no hand-off: a clear status, not a hang.
        result = try setup.client(["listen"])
        #expect(result.status == 1)
        #expect(result.error.contains("unavailable") && result.error.contains("--no-microphone"), "\(result.error)")

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
        Concurrently.run(2) { index in
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

    @Test func aMissingModelIsUnavailableNotAHang() throws {
        let setup = try Setup()
        try setup.authorized()
        let missing = setup.folder.appendingPathComponent("no-model").path
        let service = try Service(setup, extra: ["--model", missing])
        defer { _ = service.stop() }
        try service.waitListening()
        let result = try setup.client(["transcribe", Self.recording])
        #expect(result.status == 1)
        #expect(result.error.contains("unavailable") && result.error.contains("no acoustic model in \(missing)"), "\(result.error)")
        #expect(service.stop() == 0)
    }

    // MARK: - Reloading

    @Test func sighupReloadsTheIntents() throws {
        let setup = try Setup()
        try setup.authorized()
        let intents = setup.folder.appendingPathComponent("intents")
        try FileManager.default.createDirectory(at: intents, withIntermediateDirectories: true)
        let shipped = Fixtures.packageRoot.appendingPathComponent("intents")
        try FileManager.default.copyItem(at: shipped.appendingPathComponent("media.json"), to: intents.appendingPathComponent("media.json"))
        let service = try Service(setup, extra: ["--intents", intents.path])
        defer { _ = service.stop() }
        try service.waitListening()
        func intent() throws -> String? {
            let result = try setup.client(["transcribe", Self.recording, "--json"])
            return (Self.finalLine(result.output)?["intent"] as? [String: Any])?["intent"] as? String
        }
        #expect(try intent() != "setTimer")

        try FileManager.default.copyItem(at: shipped.appendingPathComponent("timer.json"), to: intents.appendingPathComponent("timer.json"))
        kill(service.process.processIdentifier, SIGHUP)
        #expect(service.wait(for: "\"event\":\"reloaded\""), "\(service.events)")
        #expect(try intent() == "setTimer")

        // A reload that fails leaves the service as it was.
        try "{ not json".write(to: intents.appendingPathComponent("broken.json"), atomically: true, encoding: .utf8)
        kill(service.process.processIdentifier, SIGHUP)
        #expect(service.wait(for: "\"event\":\"reloadFailed\""), "\(service.events)")
        #expect(service.events.contains("broken.json"))
        #expect(try intent() == "setTimer")
        #expect(service.stop() == 0)
    }

    // MARK: - Asking on the service's terminal

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
    func aNotDeterminedClientIsAskedOnTheServicesTerminal() throws {
        let setup = try Setup()
        try setup.writeManifest()
        // script(1) gives the service a terminal; what is typed into its standard input is the user's answer.
        let command = [
            Fixtures.heedBinary.path, "serve", "--no-microphone", "--json", "--socket", setup.socket, "--state-dir", setup.state,
            "--config", setup.config, "--clients", setup.clients.path,
        ].joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let collected = Service.Collected(reading: output.fileHandleForReading)
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        func wait(for text: String) -> Bool {
            let end = Date().addingTimeInterval(120)
            while Date() < end {
                if collected.text.withLock({ $0.contains(text) }) { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }
        #expect(wait(for: "\"event\":\"listening\""))

        // The client's requestAuthorization waits while the user is asked.
        let answered = Mutex<(status: Int32, output: String, error: String)?>(nil)
        let client = Thread {
            let result = try? setup.client(["authorize"])
            answered.withLock { $0 = result }
        }
        client.start()
        #expect(wait(for: "“Example” (\(Self.appID)) wants to use speech recognition. Transcribes what you give it. Allow? [y/n]"))
        input.fileHandleForWriting.write(Data("y\n".utf8))
        let end = Date().addingTimeInterval(120)
        while answered.withLock({ $0 == nil }), Date() < end { Thread.sleep(forTimeInterval: 0.05) }
        let result = try #require(answered.withLock { $0 })
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("authorized"))
        #expect(try setup.auth("status").output.contains("speech recognition authorized"))

        // Ctrl-C on the terminal stops the service cleanly.
        input.fileHandleForWriting.write(Data([0x03]))
        #expect(wait(for: "\"event\":\"stopped\""))
        process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: setup.socket))
    }

    /// Debian's dbus-daemon, and python3-dbus with python3-gi for the notification server.
    static let notificationServerRuns: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { return false }
        return (try? Fixtures.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", "import dbus.service, dbus.mainloop.glib; from gi.repository import GLib"]))?
            .status == 0
    }()

    /// Without a terminal, a notDetermined client's question is a desktop notification with two
    /// buttons on a real private session bus; the notification server stands in for the user.
    @Test(
        .enabled(if: ServeTests.notificationServerRuns, "needs dbus-daemon, python3-dbus and python3-gi (scripts/setup-debian.sh)"),
        arguments: [("yes", "authorized"), ("no", "denied"), ("close", "notDetermined"), ("noactions", "notDetermined")])
    func withoutATerminalTheQuestionIsADesktopNotification(answer: String, status: String) throws {
        let bus = try SessionBusFixture()
        let setup = try Setup()
        try setup.writeManifest()
        let log = setup.folder.appendingPathComponent("notifications.jsonl")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/notification-server.py").path, answer, log.path]
        server.environment = ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }
        let ready = Pipe()
        server.standardOutput = ready
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL) }
        #expect(ListenCommandTests.read(ready, until: "ready").contains("ready"))

        let service = try Service(setup, environment: bus.environment)
        defer { _ = service.stop() }
        try service.waitListening()
        let asked = try setup.client(["authorize"])
        #expect(asked.status == (status == "authorized" ? 0 : 1), "\(asked.error)")
        #expect((asked.output + asked.error).contains(status), "\(asked.output) \(asked.error)")
        #expect(try setup.auth("status").output.contains("speech recognition \(status)"))

        let shown = (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        } ?? []
        if answer == "noactions" {
            // A server without buttons is nobody to ask: nothing is shown, the sentence says how to decide.
            #expect(shown.isEmpty)
            #expect(asked.error.contains("heed auth speech-recognition grant \(Self.appID)") || asked.output.contains("grant"))
        } else {
            #expect(shown.first?["summary"] as? String == "Speech recognition for “Example”")
            #expect((shown.first?["body"] as? String)?.hasSuffix("wants to use speech recognition. Transcribes what you give it. Allow?") == true)
            #expect(shown.first?["actions"] as? [String] == ["yes", "Allow", "no", "Don't Allow"])
        }
        #expect(service.stop() == 0)
    }

    /// Socket activation with systemd's own tool, and readiness (`Type=notify`): the service
    /// starts on the first connection, serves on the socket it was given (not on --socket),
    /// says READY=1 and STOPPING=1, and leaves the socket file to the one who made it.
    /// A Python driver (Tests/Fixtures/socket-activation.py) plays the service manager.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"), "needs systemd-socket-activate (Debian's systemd)"))
    func socketActivationAndReadiness() throws {
        let setup = try Setup()
        try setup.authorized()
        try FileManager.default.createDirectory(
            at: setup.folder.appendingPathComponent("run"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let unused = setup.folder.appendingPathComponent("unused.sock").path
        let driven = try Fixtures.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/socket-activation.py").path, setup.folder.path,
                Fixtures.heedBinary.path, Self.clientBinary.path, Self.recording, "--",
                "--no-microphone", "--json", "--socket", unused, "--state-dir", setup.state, "--config", setup.config, "--clients", setup.clients.path,
            ])
        #expect(
            driven.output.split(separator: "\n").map(String.init) == [
                "started before a client: False",
                "client: 0 set a timer for five minutes",
                "notified: READY=1 | STATUS=listening on \(setup.socket)",
                "exit: 0",
                "notified: STOPPING=1",
                "socket file kept: True",
            ], "\(driven.output) \(driven.error)")
        #expect(!FileManager.default.fileExists(atPath: unused))
        let events = try String(contentsOf: setup.folder.appendingPathComponent("events.jsonl"), encoding: .utf8)
        #expect(events.contains("\"event\":\"stopped\""), "\(events)")
    }

    // MARK: - Other clients: Python, and a client that holds a task open

    /// The Python interpreter's real path, when there is one.
    static let python: String? = {
        guard let result = try? Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import os, sys; print(os.path.realpath(sys.executable))"]),
            result.status == 0
        else { return nil }
        let path = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : path
    }()

    /// Registers the Python interpreter as a client and authorizes it.
    static func authorizePython(_ setup: Setup, _ python: String) throws {
        let folder = setup.clients.appendingPathComponent("python")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let manifest = [
            "appId": "org.example.python-notes", "displayName": "Python notes", "executable": python,
            "speechRecognitionUsageDescription": "Turns what you say into notes.",
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: folder.appendingPathComponent("client.json"))
        let granted = try Fixtures.run(
            Fixtures.heedBinary,
            ["auth", "speech-recognition", "grant", "org.example.python-notes", "--state-dir", setup.state, "--clients", setup.clients.path])
        #expect(granted.status == 0, "\(granted.error)")
    }

    @Test(.enabled(if: ServeTests.python != nil, "needs python3"))
    func pythonClientAndProtocolDetails() throws {
        let python = try #require(Self.python)
        let setup = try Setup()
        try setup.authorized()
        try Self.authorizePython(setup, python)
        let service = try Service(setup, extra: ["--max-tasks", "1"])
        defer { _ = service.stop() }
        try service.waitListening()

        // The Python client of docs/CLIENTS.md, as it is printed there.
        let script = Fixtures.packageRoot.appendingPathComponent("contrib/python/heed_transcribe.py")
        let documentation = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/CLIENTS.md"), encoding: .utf8)
        #expect(documentation.contains(try String(contentsOf: script, encoding: .utf8)))
        let run = try Fixtures.run(URL(fileURLWithPath: python), [script.path, Self.recording, setup.socket])
        #expect(run.status == 0, "\(run.error)")
        let output = run.output.split(separator: "\n").map(String.init)
        #expect(output.first?.hasPrefix("…") == true, "\(run.output)")
        #expect(output.last == "set a timer for five minutes {\"intent\": \"setTimer\", \"parameters\": {\"duration\": 300}}", "\(run.output)")

        // A Python client that holds a task open: with --max-tasks 1, another task is busy.
        let holder = """
            import base64, json, socket, sys
            c = socket.socket(socket.AF_UNIX); c.settimeout(120); c.connect(sys.argv[1]); f = c.makefile("rwb")
            def send(m): f.write(json.dumps(m).encode() + b"\\n"); f.flush()
            def reply(): return json.loads(f.readline())
            send({"id": "a", "type": "recognize", "source": "stream"})
            print(reply()["state"], reply()["state"], flush=True)            # starting running
            send({"id": "a", "type": "recognize", "source": "stream"})
            print(reply()["status"], flush=True)                              # the id is taken: unknownTask
            send({"id": "a", "type": "audio", "data": "not base64!"})
            print(reply()["status"], flush=True)                              # malformed; the task goes on
            send({"id": "b", "type": "recognize", "source": {"file": sys.argv[2]}})
            print(reply()["status"], flush=True)                              # busy
            send({"id": "zz", "type": "finish"})
            print(reply()["status"], flush=True)                              # unknownTask
            send({"id": "h", "type": "hello", "protocol": 2})
            print(reply()["status"], flush=True)                              # unsupportedProtocol
            send({"id": "a", "type": "audio", "data": base64.b64encode(bytes(3200)).decode()})
            send({"id": "a", "type": "finish"})
            states = []
            while True:
                m = reply()
                if m["type"] == "final": print("final", repr(m["transcription"]), m["rejected"], m.get("intent"), flush=True)
                if m["type"] == "state": states.append(m["state"])
                if m.get("state") == "completed": break
            print(" ".join(states), flush=True)
            send({"id": "a", "type": "cancel"})                               # a late cancel is ignored
            send({"id": "e", "type": "recognize", "source": "stream", "maxDuration": 0.5, "grammar": "commands"})
            send({"id": "e", "type": "audio", "data": base64.b64encode(bytes(32000)).decode()})
            while True:
                m = reply()
                if m["type"] == "final":
                    print("limit", m["audioDuration"], flush=True)
                    # The only place is free once the final result is out: a request sent at
                    # once, on another connection, starts (it was busy now and then under load, when the
                    # place was freed after the final went out: scripts/serve-load.py).
                    d = socket.socket(socket.AF_UNIX); d.settimeout(120); d.connect(sys.argv[1]); g = d.makefile("rwb")
                    g.write(json.dumps({"id": "n", "type": "recognize", "source": "stream"}).encode() + b"\\n"); g.flush()
                    r = json.loads(g.readline()); print("next", r.get("state") or r.get("status"), flush=True)
                if m.get("state") == "completed": break
            """
        let held = try Fixtures.run(URL(fileURLWithPath: python), ["-c", holder, setup.socket, Self.recording])
        #expect(held.status == 0, "\(held.error)")
        #expect(
            held.output.split(separator: "\n").map(String.init) == [
                "starting running", "unknownTask", "malformed", "busy", "unknownTask", "unsupportedProtocol",
                "final '' True None", "finishing completed", "limit 0.5", "next starting",
            ], "\(held.output)")

        #expect(service.stop() == 0)
    }

    // MARK: - Pieces

    @Test func speechRecognitionDecisionsShareTheAuthorizationStore() throws {
        let folder = try TemporaryFolder.make()
        let policy = folder.appendingPathComponent("policy.json")
        let store = AuthorizationStore(stateDirectory: folder, policyFile: policy)
        try store.record(.authorized, for: "org.heed.timer", .siri)
        #expect(try store.status(of: Self.appID, .speechRecognition) == .notDetermined)
        // A state file without speech-recognition decisions keeps its shape.
        #expect(!(try String(contentsOf: store.stateFile, encoding: .utf8)).contains("speechRecognition"))

        try store.record(.authorized, for: Self.appID, .speechRecognition)
        #expect(try store.status(of: Self.appID, .speechRecognition) == .authorized)
        #expect(try store.status(of: Self.appID, .siri) == .notDetermined)  // app authorization is another table
        #expect(try store.status(of: "org.heed.timer", .siri) == .authorized)
        let reread = AuthorizationStore(stateDirectory: folder, policyFile: policy)
        #expect(try reread.snapshot().records(.speechRecognition).map(\.appID) == [Self.appID])

        #expect(throws: AuthorizationError.self) { try store.record(.notDetermined, for: Self.appID, .speechRecognition) }
        try JSONSerialization.data(withJSONObject: ["restricted": [Self.appID]]).write(to: policy)
        #expect(try store.status(of: Self.appID, .speechRecognition) == .restricted)
        #expect(throws: AuthorizationError.self) { try store.reset(Self.appID, .speechRecognition) }
        try FileManager.default.removeItem(at: policy)
        try store.reset(Self.appID, .speechRecognition)
        #expect(try store.status(of: Self.appID, .speechRecognition) == .notDetermined)
        #expect(try store.status(of: "org.heed.timer", .siri) == .authorized)
    }

    @Test func clientManifestsAreCheckedWhereTheyAreWrong() throws {
        let folder = try TemporaryFolder.make()
        func load(_ text: String) throws -> ClientManifest {
            let file = folder.appendingPathComponent("client.json")
            try text.write(to: file, atomically: true, encoding: .utf8)
            return try ClientManifest.load(from: file)
        }
        let manifest = try load(#"{"appId": "org.example.notes", "displayName": "Notes", "executable": "/usr/bin/true"}"#)
        #expect(manifest.speechRecognitionUsageDescription == nil)
        #expect(manifest.executableURL.path == URL(fileURLWithPath: "/usr/bin/true").resolvingSymlinksInPath().path)
        #expect(ClientCatalog.discover(in: [folder]).manifest(executable: URL(fileURLWithPath: "/usr/bin/true"))?.appID == "org.example.notes")
        for (text, expected) in [
            (#"{"appId": "notes", "displayName": "Notes", "executable": "x"}"#, "reverse-DNS"),
            (#"{"appId": "org.example.notes", "displayName": "Notes"}"#, "'executable'"),
            (#"{"appId": "org.example.notes", "displayName": "Notes", "executable": "x", "usage": "y"}"#, "usage"),
            (#"{"appId": "org.example.notes", "displayName": "Notes", "executable": "x", "speechRecognitionUsageDescription": " "}"#, "must not be empty"),
        ] {
            #expect {
                _ = try load(text)
            } throws: { error in
                "\(error)".contains(expected) && "\(error)".contains("client.json:1:")
            }
        }
    }

    @Test func lineReaderSkipsAnOversizedLineAndGoesOn() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
        defer { for descriptor in descriptors { close(descriptor) } }
        let reader = LineReader(descriptor: descriptors[0], maximumLength: 10)
        let output = descriptors[1]
        let writer = Thread {
            try? UnixSocket.send(output, Array("short\n".utf8) + [UInt8](repeating: 0x61, count: 100_000) + Array("\nafter\n".utf8))
            shutdown(output, Int32(SHUT_WR))
        }
        writer.start()
        guard case .line(let first) = try reader.next() else { Issue.record("no first line"); return }
        #expect(String(decoding: first, as: UTF8.self) == "short")
        guard case .tooLong = try reader.next() else { Issue.record("the long line was not refused"); return }
        guard case .line(let after) = try reader.next() else { Issue.record("no line after the long one"); return }
        #expect(String(decoding: after, as: UTF8.self) == "after")
        guard case .end = try reader.next() else { Issue.record("no end"); return }
    }

    @Test func helpTeaches() throws {
        let serve = try Fixtures.run(Fixtures.heedBinary, ["serve", "--help"])
        #expect(serve.status == 0)
        for text in ["--socket", "--no-microphone", "heed auth speech-recognition grant", "docs/CLIENTS.md", "Not built yet"] {
            #expect(serve.output.contains(text), "\(text)")
        }
        let auth = try Fixtures.run(Fixtures.heedBinary, ["auth", "speech-recognition", "--help"])
        #expect(auth.output.contains("heed auth speech-recognition grant org.heed.example-client"))
        let unknown = try Fixtures.run(
            Fixtures.heedBinary, ["auth", "speech-recognition", "grant", "org.example.nobody", "--clients", Fixtures.packageRoot.appendingPathComponent("clients").path,
                                  "--state-dir", try TemporaryFolder.make().path])
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown client 'org.example.nobody'") && unknown.error.contains("org.heed.example-client"), "\(unknown.error)")
        let client = try Fixtures.run(Self.clientBinary, ["--help"])
        #expect(client.status == 0 && client.output.contains("transcribe FILE"))
        let wrong = try Fixtures.run(Self.clientBinary, ["transcribe"])
        #expect(wrong.status == 2 && wrong.error.contains("transcribe needs a FILE"))
    }
}
