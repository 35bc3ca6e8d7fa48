import Foundation
import HeedAudio
import HeedCore
import HeedTesting
import HeedWyoming
import Testing

/// The `wyoming` Python library (PyPI), in `.build/wyoming-venv` as `.ci/run` installs it; made
/// there on first use when it is missing. `nil` when it cannot be installed (no network).
enum WyomingPython {
    static let venv = Fixtures.packageRoot.appendingPathComponent(".build/wyoming-venv")

    static let interpreter: String? = {
        let python = venv.appendingPathComponent("bin/python").path
        func works() -> Bool {
            FileManager.default.isExecutableFile(atPath: python)
                && (try? Fixtures.run(URL(fileURLWithPath: python), ["-c", "import wyoming"]).status) == 0
        }
        if works() { return python }
        let python3 = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let python3 else { return nil }
        _ = try? Fixtures.run(URL(fileURLWithPath: python3), ["-m", "venv", venv.path])
        _ = try? Fixtures.run(URL(fileURLWithPath: python), ["-m", "pip", "install", "-q", "wyoming"])
        return works() ? python : nil
    }()

    static let client = Fixtures.packageRoot.appendingPathComponent("scripts/wyoming-client.py").path
    static let load = Fixtures.packageRoot.appendingPathComponent("scripts/wyoming-load.py").path
}

/// `heed serve --wyoming` as Home Assistant and satellites use it: the real service process and
/// the real `wyoming` client library (`scripts/wyoming-client.py`), with temporary client
/// manifests, state and config.
@Suite(
    .enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"),
    .enabled(if: WyomingPython.interpreter != nil, "needs the wyoming Python library: .ci/run installs it into .build/wyoming-venv (pip install wyoming)"),
    .serialized)
struct WyomingTests {
    typealias Setup = ServeTests.Setup
    static let recording = ServeTests.recording
    static let appID = "org.heed.wyoming"

    /// A service folder with the shipped `org.heed.wyoming` manifest.
    static func setup(authorized: Bool = true, config: [String: String] = [:]) throws -> Setup {
        let setup = try Setup()
        let folder = setup.clients.appendingPathComponent("wyoming")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Fixtures.packageRoot.appendingPathComponent("clients/wyoming/client.json"), to: folder.appendingPathComponent("client.json"))
        var settings: [String: String] = ["policyFile": setup.policy.path]
        settings.merge(config) { _, new in new }
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: setup.config))
        if authorized { #expect(try speechRecognition(setup, "grant").status == 0) }
        return setup
    }

    @discardableResult
    static func speechRecognition(_ setup: Setup, _ action: String, _ appID: String = appID) throws -> (status: Int32, output: String, error: String) {
        try Fixtures.run(
            Fixtures.heedBinary,
            ["auth", "speech-recognition", action, appID, "--state-dir", setup.state, "--config", setup.config, "--clients", setup.clients.path])
    }

    /// `heed auth grant|deny APP` for a plugin's app.
    static func app(_ setup: Setup, _ action: String, _ appID: String) throws {
        let result = try Fixtures.run(Fixtures.heedBinary, ["auth", action, appID, "--state-dir", setup.state, "--config", setup.config])
        #expect(result.status == 0, "\(result.error)")
    }

    /// A running `heed serve --wyoming tcp://127.0.0.1:0 …`, and the address the kernel gave it.
    static func serve(
        _ setup: Setup, _ extra: [String] = [], environment: [String: String] = [:]
    ) throws -> (service: ServeTests.Service, uri: String) {
        let service = try ServeTests.Service(setup, extra: ["--wyoming", "tcp://127.0.0.1:0"] + extra, environment: environment)
        guard service.wait(for: "\"event\":\"wyomingListening\"") else {
            _ = service.stop()
            throw ServeTests.ServeTestError("the Wyoming door did not open: \(service.errorOutput)")
        }
        let listening = ServeTests.lines(service.events).first { $0["event"] as? String == "wyomingListening" }
        let uri = try #require(listening?["socket"] as? String)
        return (service, uri)
    }

    /// Runs `wyoming-client.py URI ARGUMENTS` and returns the events it printed.
    static func client(_ uri: String, _ arguments: [String]) throws -> (status: Int32, events: [[String: Any]], error: String) {
        let python = try #require(WyomingPython.interpreter)
        let run = try Fixtures.run(URL(fileURLWithPath: python), [WyomingPython.client, uri] + arguments)
        return (run.status, ServeTests.lines(run.output), run.error)
    }

    static func events(_ events: [[String: Any]], _ type: String) -> [[String: Any]] {
        events.filter { $0["type"] as? String == type }
    }

    static func data(_ event: [String: Any]?) -> [String: Any] { event?["data"] as? [String: Any] ?? [:] }

    /// The text of the `transcript` event.
    static func transcript(_ events: [[String: Any]]) -> String? {
        data(Self.events(events, "transcript").first)["text"] as? String
    }

    // MARK: - Speech to text, intents, wake phrase

    /// detect: Heed's wake phrase in espeak-ng speech.
    @Test(.enabled(if: Fixtures.hasEspeak, "needs espeak-ng"))
    func wakePhraseIsDetected() throws {
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup, ["--wake-threshold", "0.1"])
        defer { _ = service.stop() }
        let wake = setup.folder.appendingPathComponent("wake.wav")
        let samples = try Speech.utterance("hey heed", after: 0.3) + Speech.utterance("pause", before: 0.2)
        try WAVBuilder(samples: samples).data.write(to: wake)
        let run = try Self.client(uri, ["detect", wake.path])
        let detection = Self.events(run.events, "detection")
        #expect(detection.count == 1, "\(run.events)")
        #expect(Self.data(detection.first)["name"] as? String == "hey heed")
        #expect(Self.events(run.events, "not-detected").isEmpty)
    }

    @Test func describeTranscribeRecognizeAndDetect() throws {
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup, ["--wake-threshold", "0.1"])
        defer { _ = service.stop() }

        // describe: the library's own Info parser reads Heed's info.
        var run = try Self.client(uri, ["describe"])
        #expect(run.status == 0, "\(run.error)")
        let info = Self.data(Self.events(run.events, "info").first)
        for program in ["asr", "intent", "handle", "wake"] {
            let first = (info[program] as? [[String: Any]])?.first
            #expect(first?["name"] as? String == "heed", "\(program)")
            #expect(first?["installed"] as? Bool == true)
            #expect((first?["attribution"] as? [String: Any])?["name"] as? String == "Heed")
            let model = (first?["models"] as? [[String: Any]])?.first
            #expect(model?["languages"] as? [String] == ["en"], "\(program)")
            #expect(model?["version"] as? String != nil)
        }
        let wakeModel = ((info["wake"] as? [[String: Any]])?.first?["models"] as? [[String: Any]])?.first
        #expect(wakeModel?["phrase"] as? String == "hey heed")
        #expect(run.events.last?["parsed"] != nil, "wyoming's Info.from_event failed: \(run.error)")

        run = try Self.client(uri, ["ping", "are you there"])
        #expect(Self.data(Self.events(run.events, "pong").first)["text"] as? String == "are you there")

        // transcribe a real recording, sent in real time as a satellite does: transcript-start,
        // chunks that add up (each after the first starts with a space), the final transcript,
        // transcript-stop. (How many chunks come depends on the machine's load: a connection that
        // falls behind stops its partial results.)
        run = try Self.client(uri, ["transcribe", Self.recording, "--realtime", "--chunk-ms", "20"])
        #expect(Self.transcript(run.events) == "set a timer for five minutes", "\(run.events) \(run.error)")
        let types = run.events.compactMap { $0["type"] as? String }
        #expect(types.first == "transcript-start")
        #expect(Array(types.suffix(2)) == ["transcript", "transcript-stop"], "\(types)")
        for (index, chunk) in Self.events(run.events, "transcript-chunk").enumerated() {
            let text = Self.data(chunk)["text"] as? String ?? ""
            #expect(!text.isEmpty && text.hasPrefix(" ") == (index > 0), "\(run.events)")
        }
        // Sent as fast as possible, the same final transcript.
        run = try Self.client(uri, ["transcribe", Self.recording])
        #expect(Self.transcript(run.events) == "set a timer for five minutes", "\(run.events) \(run.error)")

        // Any rate, width and channel count, converted by the library's own converter before sending.
        for format in ["48000,4,2", "44100,3,1", "16000,2,2"] {
            run = try Self.client(uri, ["transcribe", Self.recording, "--convert", format, "--chunk-ms", "30"])
            #expect(Self.transcript(run.events) == "set a timer for five minutes", "\(format): \(run.events) \(run.error)")
        }

        // recognize: the intent with typed entities, or not-recognized.
        run = try Self.client(uri, ["recognize", "set a timer for five minutes"])
        let intent = Self.data(Self.events(run.events, "intent").first)
        #expect(intent["name"] as? String == "setTimer")
        let entities = intent["entities"] as? [[String: Any]] ?? []
        #expect(entities.count == 1)
        #expect(entities.first?["name"] as? String == "duration")
        #expect(entities.first?["value"] as? Int == 300)
        run = try Self.client(uri, ["recognize", "what is the weather on mars"])
        #expect(Self.events(run.events, "not-recognized").count == 1, "\(run.events)")

        // detect: no wake phrase in a command (the phrase itself: wakePhraseIsDetected).
        run = try Self.client(uri, ["detect", Self.recording])
        #expect(Self.events(run.events, "not-detected").count == 1, "\(run.events)")
        #expect(Self.events(run.events, "detection").isEmpty)

        // Heed cannot speak over Wyoming: an error that says so, and the connection goes on.
        let synthesize = setup.folder.appendingPathComponent("synthesize.bin")
        try Data(#"{"type": "synthesize", "data": {"text": "hello"}}"#.utf8 + [0x0A] + #"{"type": "ping"}"#.utf8 + [0x0A]).write(to: synthesize)
        run = try Self.client(uri, ["raw", "@" + synthesize.path])
        #expect(Self.data(Self.events(run.events, "error").first)["code"] as? String == "unsupported")
        #expect(Self.events(run.events, "pong").count == 1)
        #expect(service.stop() == 0)
        // The log says that transcripts went out, never what they said.
        #expect(service.events.contains("\"event\":\"wyomingTranscript\""))
        #expect(!service.events.contains("five minutes"))
    }

    @Test(.enabled(if: Fixtures.corpora != nil, "needs the shared corpora (HEED_CORPORA or ../shared/corpora)"))
    func corpusRecordingsAreTranscribedAsHeedRecognizeDoes() throws {
        let corpus = try #require(Fixtures.corpora) + "/speech_to_phrase_en"
        let manifest = try String(contentsOfFile: corpus + "/manifest.tsv", encoding: .utf8)
        let files = manifest.split(separator: "\n").dropFirst().prefix(6).map { corpus + "/" + $0.split(separator: "\t")[0] }
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup)
        defer { _ = service.stop() }
        var transcribed = 0
        for file in files {
            let local = try Fixtures.run(
                Fixtures.heedBinary, ["recognize", file, "--intents", Fixtures.packageRoot.appendingPathComponent("intents").path, "--json"])
            #expect(local.status == 0, "\(file): \(local.error)")
            let object = try #require((try? JSONSerialization.jsonObject(with: Data(local.output.utf8))) as? [String: Any], "\(local.output)")
            let expected = try #require(object["text"] as? String)
            let run = try Self.client(uri, ["transcribe", file])
            let heard = Self.transcript(run.events)
            // A rejected recording is an empty transcript over Wyoming.
            let rejected = try #require(object["rejected"] as? Bool)
            if !rejected { transcribed += 1 }
            #expect(heard == (rejected ? "" : expected), "\(file): \(run.events) vs \(local.output)")
        }
        #expect(transcribed > 0, "every recording was rejected: nothing was compared")
    }

    // MARK: - Permission and handling

    @Test func permissionAndHandling() throws {
        // Not yet decided: every request but describe and ping is refused, naming the status and the command that decides.
        let setup = try Self.setup(authorized: false)
        var (service, uri) = try Self.serve(setup)
        var run = try Self.client(uri, ["transcribe", Self.recording])
        var error = Self.data(Self.events(run.events, "error").first)
        #expect(error["code"] as? String == "notDetermined", "\(run.events)")
        #expect((error["text"] as? String ?? "").contains("heed auth speech-recognition grant org.heed.wyoming"))
        #expect(Self.transcript(run.events) == nil)
        // A refused request's audio is dropped quietly: one error for the stream, not one per chunk.
        run = try Self.client(uri, ["detect", Self.recording])
        #expect(Self.events(run.events, "error").count == 1, "\(run.events)")
        #expect(Self.events(run.events, "pong").count == 1)
        run = try Self.client(uri, ["handle", "set a timer for five minutes"])
        #expect(Self.data(Self.events(run.events, "error").first)["code"] as? String == "notDetermined")
        run = try Self.client(uri, ["describe"])
        #expect(Self.events(run.events, "info").count == 1)
        #expect(service.wait(for: "\"event\":\"wyomingRefused\""))

        // Denied: the status is named; the decision is read for every request, no restart.
        #expect(try Self.speechRecognition(setup, "deny").status == 0)
        run = try Self.client(uri, ["recognize", "pause"])
        #expect(Self.data(Self.events(run.events, "error").first)["code"] as? String == "denied", "\(run.events)")
        #expect(try Self.speechRecognition(setup, "grant").status == 0)

        // Authorized client; the timer app authorized, the workout app denied.
        try Self.app(setup, "grant", "org.heed.timer")
        try Self.app(setup, "deny", "org.heed.workout")
        run = try Self.client(uri, ["handle", "set a timer for five minutes"])
        #expect(Self.data(Self.events(run.events, "handled").first)["text"] as? String == "Timer set for 5 minutes.", "\(run.events) \(service.errorOutput)")
        run = try Self.client(uri, ["handle", "start a run workout"])
        let refused = Self.data(Self.events(run.events, "not-handled").first)["text"] as? String ?? ""
        #expect(refused.contains("heed auth grant"), "\(run.events)")
        // A question of the plugin's conversation cannot be asked back within one handle request.
        run = try Self.client(uri, ["handle", "set a timer"])
        #expect((Self.data(Self.events(run.events, "not-handled").first)["text"] as? String ?? "").hasPrefix("For how long?"), "\(run.events)")
        run = try Self.client(uri, ["handle", "what is the weather on mars"])
        #expect(Self.events(run.events, "not-handled").count == 1)
        #expect(service.stop() == 0)

        // A listener whose identity has no manifest: unknownClient. --wyoming-client names it.
        (service, uri) = try Self.serve(setup, ["--wyoming-client", "org.example.nobody"])
        run = try Self.client(uri, ["transcribe", Self.recording])
        error = Self.data(Self.events(run.events, "error").first)
        #expect(error["code"] as? String == "unknownClient", "\(run.events)")
        #expect((error["text"] as? String ?? "").contains("org.example.nobody"))
        #expect(service.stop() == 0)
    }

    @Test func theIdentityComesFromTheConfigAndBadListenersAreRefused() throws {
        let setup = try Self.setup(authorized: false, config: ["wyomingClient": "org.example.kitchen"])
        let (service, uri) = try Self.serve(setup)
        let run = try Self.client(uri, ["recognize", "pause"])
        #expect((Self.data(Self.events(run.events, "error").first)["text"] as? String ?? "").contains("org.example.kitchen"), "\(run.events)")
        #expect(service.stop() == 0)

        for (uri, message) in [("http://localhost:10300", "tcp://HOST:PORT"), ("tcp://127.0.0.1", "no port"), ("tcp://127.0.0.1:99999", "0 to 65535")] {
            let result = try Fixtures.run(Fixtures.heedBinary, ["serve", "--no-microphone", "--wyoming", uri, "--socket", setup.socket])
            #expect(result.status != 0)
            #expect(result.error.contains(message), "\(uri): \(result.error)")
        }
        // A taken port: a clear error, exit status 1.
        let (first, taken) = try Self.serve(setup)
        defer { _ = first.stop() }
        let result = try Fixtures.run(
            Fixtures.heedBinary,
            ["serve", "--no-microphone", "--wyoming", taken, "--socket", setup.folder.appendingPathComponent("other.sock").path,
             "--state-dir", setup.state, "--config", setup.config])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot listen on \(taken)"), "\(result.error)")
    }

    // MARK: - Peers that misbehave

    /// Sends raw bytes and returns the events that came back.
    static func raw(_ uri: String, _ setup: Setup, _ bytes: [UInt8], halfClose: Bool = false) throws -> [[String: Any]] {
        let file = setup.folder.appendingPathComponent("raw-\(UUID().uuidString).bin")
        try Data(bytes).write(to: file)
        return try client(uri, ["raw", "@" + file.path] + (halfClose ? ["--half-close"] : [])).events
    }

    static func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0A] }

    @Test func peersThatMisbehaveGetReasonsAndNeverStopTheService() throws {
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup, ["--wyoming", "tcp://0.0.0.0:0"])
        defer { _ = service.stop() }
        // A listener other machines can reach is logged.
        #expect(service.events.contains("not a loopback address"), "\(service.events)")
        let ping = Self.line(#"{"type": "ping", "data": {"text": "still here"}}"#)
        func code(_ events: [[String: Any]]) -> String? { Self.data(Self.events(events, "error").first)["code"] as? String }

        // A header that is not JSON, one without a type, a negative length: error, then the connection is closed.
        for header in ["not json at all", #"{"data": {}}"#, #"{"type": "ping", "data_length": -5}"#, #"{"type": "ping", "payload_length": "ten"}"#] {
            let events = try Self.raw(uri, setup, Self.line(header) + ping)
            #expect(code(events) == "malformed", "\(header): \(events)")
            #expect(Self.events(events, "pong").isEmpty)
            #expect(events.last?["type"] as? String == "closed", "\(header): \(events)")
        }
        // Any number of blank lines between events is skipped.
        var events = try Self.raw(uri, setup, [UInt8](repeating: 0x0A, count: 300_000) + ping)
        #expect(Self.data(Self.events(events, "pong").first)["text"] as? String == "still here", "\(events)")
        // The older form, data inline in the header, is read.
        events = try Self.raw(uri, setup, Self.line(#"{"type": "ping", "data": {"text": "inline"}}"#))
        #expect(Self.data(Self.events(events, "pong").first)["text"] as? String == "inline")

        // Data that is not a JSON object: that event is refused, the next is answered.
        events = try Self.raw(uri, setup, Self.line(#"{"type": "ping", "data_length": 5}"#) + Array("[1,2]".utf8) + ping)
        #expect(code(events) == "malformed", "\(events)")
        #expect(Self.data(Self.events(events, "pong").first)["text"] as? String == "still here")

        // A payload shorter than it says, then the peer leaves: the service notes why and goes on.
        events = try Self.raw(
            uri, setup, Self.line(#"{"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1}, "payload_length": 1000}"#)
                + [UInt8](repeating: 1, count: 10), halfClose: true)
        #expect(events.last?["type"] as? String == "closed")
        #expect(service.wait(for: "inside the payload of 'audio-chunk'"), "\(service.events)")
        // A payload longer than it says: its rest is no header; error, closed.
        events = try Self.raw(
            uri, setup, Self.line(#"{"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1}, "payload_length": 4}"#)
                + [UInt8](repeating: 7, count: 40) + ping)
        #expect(code(events) == "malformed", "\(events)")

        // A 10 MB payload is read past, never held: error tooLarge, and the same connection goes on.
        events = try Self.raw(
            uri, setup,
            Self.line(#"{"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1}, "payload_length": 10485760}"#)
                + [UInt8](repeating: 0, count: 10_485_760) + ping)
        #expect(code(events) == "tooLarge", "\(events)")
        #expect((Self.data(Self.events(events, "error").first)["text"] as? String ?? "").contains("10485760"))
        #expect(Self.data(Self.events(events, "pong").first)["text"] as? String == "still here")

        // A header line that never ends: error after the limit, closed.
        events = try Self.raw(uri, setup, Array(#"{"type": "ping", "data": {"text": ""#.utf8) + [UInt8](repeating: 0x61, count: 200_000))
        #expect(code(events) == "malformed", "\(events)")

        // Audio in a format Heed does not take, and audio-stop without a request.
        events = try Self.raw(uri, setup, Self.line(#"{"type": "audio-start", "data": {"rate": 16000, "width": 3, "channels": 0}}"#) + ping)
        #expect(code(events) == "audioFormat", "\(events)")
        events = try Self.raw(uri, setup, Self.line(#"{"type": "audio-stop"}"#) + ping)
        #expect(code(events) == "malformed", "\(events)")
        #expect(Self.events(events, "pong").count == 1)

        // A client that hangs up mid-audio: its stream is dropped; the next transcription is whole.
        let gone = try Self.client(uri, ["transcribe", Self.recording, "--disconnect-after", "1"])
        #expect(gone.events.last?["type"] as? String == "hung-up")
        #expect(service.wait(for: "\"message\":\"the peer closed the connection\""))
        let run = try Self.client(uri, ["transcribe", Self.recording])
        #expect(Self.transcript(run.events) == "set a timer for five minutes", "\(run.events)")
        #expect(service.stop() == 0)
    }

    // MARK: - Many satellites

    @Test func sixteenConcurrentClients() throws {
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup)
        defer { _ = service.stop() }
        let python = try #require(WyomingPython.interpreter)
        let run = try Fixtures.run(
            URL(fileURLWithPath: python),
            [WyomingPython.load, uri, "--streams", "16", "--file", Self.recording, "--expect", "set a timer for five minutes", "--chunk-ms", "100"])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.error)")
        #expect(summary["utterances"] as? Int == 16)
        #expect(summary["correct"] as? Int == 16, "\(summary)")
        #expect(service.stop() == 0)
    }

    /// Partial results go to as many streams at once as `--wyoming-partial-streams` allows; the
    /// others get the final transcript alone, just as right. A stream that ends gives its place back.
    @Test func partialResultsGoToAsManyStreamsAsAllowed() throws {
        let setup = try Self.setup()
        let (service, uri) = try Self.serve(setup, ["--wyoming-partial-streams", "1", "--idle-decoders", "3"])
        defer { _ = service.stop() }
        let python = try #require(WyomingPython.interpreter)
        func load(streams: Int, rounds: Int) throws -> [String: Any] {
            let run = try Fixtures.run(
                URL(fileURLWithPath: python),
                [WyomingPython.load, uri, "--streams", "\(streams)", "--rounds", "\(rounds)", "--realtime", "--file", Self.recording,
                 "--expect", "set a timer for five minutes"])
            return try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.error)")
        }
        let together = try load(streams: 3, rounds: 1)
        #expect(together["correct"] as? Int == 3, "\(together)")
        #expect(together["with_partial_results"] as? Int == 1, "\(together)")
        let oneAfterAnother = try load(streams: 1, rounds: 2)
        #expect(oneAfterAnother["correct"] as? Int == 2, "\(oneAfterAnother)")
        #expect(oneAfterAnother["with_partial_results"] as? Int == 2, "\(oneAfterAnother)")
        #expect(service.stop() == 0)

        let refused = try Fixtures.run(Fixtures.heedBinary, ["serve", "--no-microphone", "--wyoming-partial-streams", "300"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("--wyoming-partial-streams must be between 0 and 256"), "\(refused.error)")
    }

    // MARK: - Zeroconf

    /// A door other machines can reach is announced as `_wyoming._tcp` through the real
    /// avahi-daemon (found by avahi-browse, as Home Assistant's zeroconf finds it) and withdrawn
    /// when the service stops; without avahi-publish-service the log says so and the door works.
    @Test(.enabled(if: AvahiFixture.available, "needs avahi-daemon and avahi-utils (and, to start them, root and dbus-daemon)"))
    func theDoorIsAnnouncedThroughAvahi() throws {
        let avahi = try AvahiFixture()
        let setup = try Self.setup()
        let (service, _) = try Self.serve(setup, ["--wyoming", "tcp://0.0.0.0:0"], environment: avahi.environment)
        defer { _ = service.stop() }
        #expect(service.wait(for: "tcp://0.0.0.0:"))
        let open = ServeTests.lines(service.events).compactMap { $0["socket"] as? String }.first { $0.hasPrefix("tcp://0.0.0.0:") }
        let port = try #require(open.flatMap { Int($0.split(separator: ":").last ?? "") })
        #expect(service.wait(for: "as _wyoming._tcp on port \(port) through avahi"), "\(service.events)")
        let host = ProcessInfo.processInfo.hostName
        #expect(avahi.browse(until: { $0.contains { $0.contains(";Heed\\032on\\032\(host);") && $0.hasSuffix(";\(port);") } }),
                "announced as Heed on \(host), port \(port)")
        #expect(service.stop() == 0)
        #expect(avahi.browse(until: { !$0.contains { $0.contains(";\(port);") } }), "withdrawn when the service stopped")
        #expect(!service.events.contains("announcement on port"), "\(service.events)")

        // Without the tool: a sentence that says what to do, and the door still answers.
        let bare = try ServeTests.Service(
            setup, extra: ["--wyoming", "tcp://0.0.0.0:0", "--wyoming", "tcp://127.0.0.1:0"], environment: ["PATH": "/nonexistent"])
        defer { _ = bare.stop() }
        #expect(bare.wait(for: "avahi-publish-service is not installed"), "\(bare.events) \(bare.errorOutput)")
        let local = ServeTests.lines(bare.events).compactMap { $0["socket"] as? String }.first { $0.hasPrefix("tcp://127.0.0.1:") }
        let run = try Self.client(try #require(local), ["ping", "still here"])
        #expect(Self.data(Self.events(run.events, "pong").first)["text"] as? String == "still here")
        #expect(bare.stop() == 0)
    }

    // MARK: - In process

    @Test func listenerAddressesAreParsed() throws {
        #expect(try WyomingAddress(parsing: "tcp://127.0.0.1:10300") == .tcp(host: "127.0.0.1", port: 10300))
        #expect(try WyomingAddress(parsing: "tcp://[::1]:10300") == .tcp(host: "::1", port: 10300))
        #expect(try WyomingAddress(parsing: "unix:///run/heed/w.sock") == .unix(path: "/run/heed/w.sock"))
        #expect(try WyomingAddress(parsing: "tcp://[::1]:10300").description == "tcp://[::1]:10300")
        #expect(try WyomingAddress(parsing: "tcp://localhost:1").isLocal)
        #expect(try !WyomingAddress(parsing: "tcp://0.0.0.0:1").isLocal)
        #expect(throws: WyomingAddressError.self) { try WyomingAddress(parsing: "tcp://:80") }
        #expect(throws: WyomingAddressError.self) { try WyomingAddress(parsing: "unix://") }
    }

    @Test func samplesOfEveryWidthKeepTheirTopSixteenBits() {
        #expect(PCMSamples.int16(littleEndian: [0x00, 0x80, 0xFF], width: 1) == [-32768, 0, 32512])
        #expect(PCMSamples.int16(littleEndian: [0x34, 0x12, 0xFF, 0xFF, 0x00], width: 2) == [0x1234, -1])
        #expect(PCMSamples.int16(littleEndian: [0x56, 0x34, 0x12, 0x00, 0x00, 0x80], width: 3) == [0x1234, -32768])
        #expect(PCMSamples.int16(littleEndian: [0x78, 0x56, 0x34, 0x12], width: 4) == [0x1234])
    }
}

/// avahi for the zeroconf test: the machine's avahi-daemon when it answers; otherwise, as root
/// with the packages installed (as in CI's container), an avahi-daemon of the test's own on a
/// system bus of its own, both stopped with the fixture. The machine's `/run/dbus` is never
/// touched: a system bus socket left behind by a daemon that ended makes playerctl (and other
/// programs) fail on every command.
final class AvahiFixture {
    static let browser = "/usr/bin/avahi-browse"
    static let daemonPath = "/usr/sbin/avahi-daemon"

    /// The tools are there, and a daemon answers or can be started here (as root, with no other
    /// avahi-daemon running: a second one refuses to start).
    static var available: Bool {
        let manager = FileManager.default
        guard manager.isExecutableFile(atPath: browser), manager.isExecutableFile(atPath: "/usr/bin/avahi-publish-service") else { return false }
        if answers(environment: [:]) { return true }
        guard getuid() == 0, manager.isExecutableFile(atPath: daemonPath), manager.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { return false }
        return (try? Fixtures.run(URL(fileURLWithPath: daemonPath), ["-c"]))?.status != 0
    }

    /// What avahi's clients (avahi-browse, Heed's avahi-publish-service) need to reach the daemon.
    let environment: [String: String]
    private var bus: Process?
    private var daemonStarted = false
    private var folder: URL?

    init() throws {
        if Self.answers(environment: [:]) {
            environment = [:]
            return
        }
        let folder = try TemporaryFolder.make()
        self.folder = folder
        let (bus, address) = try SessionBusFixture.startBus("--system", in: folder)
        self.bus = bus
        environment = ["DBUS_SYSTEM_BUS_ADDRESS": address]
        // Daemonized (-D), not a child Process: avahi-daemon closes every descriptor it inherits,
        // which Foundation's Process takes for the child's exit and then waits for it, blocking
        // every other Process of the test run. Its output goes to /dev/null: the daemon must not
        // hold the test's pipes open.
        let started = try Fixtures.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "\(Self.daemonPath) -D --no-drop-root --no-chroot --no-rlimits </dev/null >/dev/null 2>&1"],
            environment: environment)
        guard started.status == 0 else { throw CocoaError(.executableLoad) }
        daemonStarted = true
        for _ in 0..<50 where !Self.answers(environment: environment) { usleep(100_000) }
        guard Self.answers(environment: environment) else { throw CocoaError(.executableLoad) }
    }

    deinit {
        // The daemon first (it leaves the bus and removes its pid file), then the bus.
        if daemonStarted {
            _ = try? Fixtures.run(URL(fileURLWithPath: Self.daemonPath), ["-k"])
            for _ in 0..<50 where (try? Fixtures.run(URL(fileURLWithPath: Self.daemonPath), ["-c"]))?.status == 0 { usleep(100_000) }
        }
        // SIGKILL: the bus inherits the test thread's blocked signals, SIGTERM among them.
        if let bus, bus.isRunning {
            kill(bus.processIdentifier, SIGKILL)
            bus.waitUntilExit()
        }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private static func answers(environment: [String: String]) -> Bool {
        (try? Fixtures.run(URL(fileURLWithPath: browser), ["-t", "-p", "_heed-probe._tcp"], environment: environment))?.status == 0
    }

    /// Browses `_wyoming._tcp` (resolved, parsable lines) until `done` holds for the `=` lines, or 10 s.
    func browse(until done: ([String]) -> Bool) -> Bool {
        for _ in 0..<20 {
            let output = (try? Fixtures.run(URL(fileURLWithPath: Self.browser), ["-r", "-t", "-p", "_wyoming._tcp"], environment: environment))?.output ?? ""
            if done(output.split(separator: "\n").map(String.init).filter { $0.hasPrefix("=") }) { return true }
            usleep(500_000)
        }
        return false
    }
}
