import Foundation
import HeedAudio
import HeedClient
import HeedCore
import Testing
import HeedTesting

/// Dictation through `heed serve` as users run it: the real service process, the real example
/// client identified by the kernel, and for the hand-off Heed's microphone through the real
/// ALSA code path, ALSA's `file` plugin reading a raw recording (a FIFO where a test must hold
/// the microphone open), from an `.asoundrc` in the service's HOME.
@Suite(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"), .serialized)
struct DictationServeTests {
    static let sentence = Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-0930.wav"

    /// A service with Heed's microphone: its HOME (`.asoundrc`, `in.raw`, `out.raw`) and runtime folder.
    struct Microphone {
        let setup: ServeTests.Setup
        let home: ListenCommandTests.Home
        let runtime: URL
        var environment: [String: String] { ["HOME": home.url.path, "XDG_RUNTIME_DIR": runtime.path] }
        var resultFile: URL { runtime.appendingPathComponent("heed/dictation/\(ServeTests.appID)/result.json") }

        /// The microphone hears `input` (then near-silence: the file plugin has no end).
        init(hearing input: [Int16], microphoneUsage: Bool = true, callback: [String]? = nil) throws {
            setup = try ServeTests.Setup()
            home = try ListenCommandTests.Home(input: input)
            runtime = setup.folder.appendingPathComponent("runtime")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var manifest: [String: Any] = [
                "appId": ServeTests.appID, "displayName": "Example", "executable": ServeTests.clientBinary.path,
                "speechRecognitionUsageDescription": "Transcribes what you give it.",
            ]
            if microphoneUsage { manifest["microphoneUsageDescription"] = "Lets you dictate through Heed's microphone." }
            if let callback { manifest["dictationCallback"] = callback }
            let folder = setup.clients.appendingPathComponent("example")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: manifest).write(to: folder.appendingPathComponent("client.json"))
        }

        func start(_ extra: [String] = []) throws -> ServeTests.Service {
            let service = try ServeTests.Service(setup, extra: ["--device", "default"] + extra, microphone: true, environment: environment)
            try service.waitListening()
            return service
        }

        /// Runs the example client with this runtime folder (where it finds a hand-off's result).
        func client(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
            try Fixtures.run(ServeTests.clientBinary, ["--socket", setup.socket] + arguments, environment: ["XDG_RUNTIME_DIR": runtime.path])
        }

        func record() throws -> DictationRecord {
            try #require(DictationRecord.read(path: resultFile.path), "no record in \(resultFile.path)")
        }
    }

    /// A second of room noise, the sentence, three seconds of room noise.
    static func spokenSentence() throws -> [Int16] {
        ListenCommandTests.silence(1) + (try AudioFile.read(sentence).samples) + ListenCommandTests.silence(3)
    }

    static func lastLine(_ output: String) -> String {
        output.split(separator: "\n").last.map(String.init) ?? ""
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    // MARK: Files and streams

    @Test func aFileIsDictatedAsTheCommandLineDictatesIt() throws {
        let setup = try ServeTests.Setup()
        try setup.authorized()
        let service = try ServeTests.Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()
        let file = Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"
        let command = try Fixtures.run(Fixtures.heedBinary, ["transcribe", "--dictation", "--json", file])
        #expect(command.status == 0, "\(command.error)")
        let expected = try #require(ServeTests.lines(command.output).first)
        let formatted = try #require(expected["formattedText"] as? String)
        #expect(formatted.first?.isUppercase == true)

        // The service reads the file: the formatted text is the last line.
        var result = try setup.client(["transcribe", file, "--dictation"])
        #expect(result.status == 0, "\(result.error)")
        #expect(Self.lastLine(result.output) == formatted)

        // Streamed, with partial results: the same final text, the words as said beside it.
        result = try setup.client(["transcribe", file, "--dictation", "--stream", "--partial", "--json"])
        #expect(result.status == 0, "\(result.error)")
        let final = try #require(ServeTests.finalLine(result.output))
        #expect(final["transcription"] as? String == formatted)
        #expect(final["spokenText"] as? String == expected["text"] as? String)
        #expect(ServeTests.lines(result.output).contains { $0["type"] as? String == "partial" })
        #expect((final["segments"] as? [[String: Any]])?.count == (expected["text"] as? String)?.split(separator: " ").count)

        // Dictation takes no grammar: the client's contextual strings are its way to steer.
        result = try setup.client(["transcribe", file, "--dictation", "--context", "Dashwood,Norland Park"])
        #expect(result.status == 0, "\(result.error)")
        #expect(service.stop() == 0)
    }

    /// Spoken punctuation and amounts through the service. Synthetic speech (flite), reported apart.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flite"), "needs flite"))
    func punctuationWordsAndAmountsComeOutAsText() throws {
        let setup = try ServeTests.Setup()
        try setup.authorized()
        let service = try ServeTests.Service(setup)
        defer { _ = service.stop() }
        try service.waitListening()
        for (said, written) in [("see you tomorrow period", "See you tomorrow."), ("it costs twenty five dollars period", "It costs 25 dollars.")] {
            let file = setup.folder.appendingPathComponent("\(said.count).wav").path
            try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/flite"), ["-voice", "slt", "-t", said, "-o", file]).status == 0)
            let result = try setup.client(["transcribe", file, "--dictation"])
            #expect(result.status == 0, "\(result.error)")
            #expect(Self.lastLine(result.output) == written, "\(result.output)")
        }
    }

    // MARK: The hand-off

    @Test func aHandoffRecordsFromHeedsMicrophoneAndLeavesTheResultInSharedStorage() throws {
        let microphone = try Microphone(hearing: try Self.spokenSentence())
        #expect(try microphone.setup.auth("grant").status == 0)
        // A notify-send on PATH that writes down what it was asked to show (this machine has no
        // desktop session to show it).
        let bin = microphone.setup.folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let notified = microphone.setup.folder.appendingPathComponent("notified.txt")
        let notifySend = bin.appendingPathComponent("notify-send")
        try Fixtures.writeExecutable("#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(notified.path)'\n", to: notifySend)
        var environment = microphone.environment
        environment["PATH"] = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let service = try ServeTests.Service(microphone.setup, extra: ["--device", "default"], microphone: true, environment: environment)
        defer { _ = service.stop() }
        try service.waitListening()

        let result = try microphone.client(["dictate", "--handoff"])
        #expect(result.status == 0, "\(result.error)")
        let text = Self.lastLine(result.output)
        #expect(text.hasPrefix("He might even have been made"), "\(result.output)")
        #expect(result.output.contains("[recording") && result.output.contains("[processing]"))

        // The same text in shared storage, private and complete.
        let record = try microphone.record()
        #expect(record.status == "finished")
        #expect(record.text == text)
        #expect(record.appId == ServeTests.appID)
        #expect(try Self.mode(microphone.resultFile.path) == 0o600)
        #expect(try Self.mode(microphone.resultFile.deletingLastPathComponent().path) == 0o700)
        // Heed signalled that it listens: the sound went to the playback device.
        let played = (try? FileManager.default.attributesOfItem(atPath: microphone.home.output.path)[.size] as? Int) ?? 0
        #expect(played > 0)
        let notification = (try? String(contentsOf: notified, encoding: .utf8)) ?? ""
        #expect(notification.contains("Heed is listening") && notification.contains("Example"), "\(notification)")
        #expect(service.events.contains("\"state\":\"recording\"") && service.events.contains("\"milliseconds\""))
        #expect(!service.events.contains("amiable"), "the log never holds what was said")
        // Starting notify-send opened no network socket in Heed (Foundation's Process opened two
        // UDP sockets on 127.0.0.1 for every program it started).
        #expect(Fixtures.internetSockets(of: service.process.processIdentifier) == 0)
        #expect(service.stop() == 0)
    }

    @Test func aClientThatGoesAwayFindsItsResultAndItsCallbackRuns() throws {
        let setupFolder = try TemporaryFolder.make()
        let called = setupFolder.appendingPathComponent("called.json")
        let microphone = try Microphone(
            hearing: try Self.spokenSentence(), callback: ["/bin/sh", "-c", "cp \"$HEED_DICTATION_RESULT\" '\(called.path)'"])
        #expect(try microphone.setup.auth("grant").status == 0)
        let service = try microphone.start()
        defer { _ = service.stop() }

        let left = try microphone.client(["dictate", "--handoff", "--leave"])
        #expect(left.status == 0, "\(left.error)")
        #expect(left.output.contains("left while Heed records"))
        // The service goes on without the client: the result, then the callback.
        #expect(service.wait(for: "\"state\":\"callback\""), "\(service.events)")
        // `cp` creates the file before it has written it: wait for a whole record, not for the name.
        let end = Date().addingTimeInterval(30)
        var copied: DictationRecord? = nil
        while copied == nil, Date() < end {
            copied = DictationRecord.read(path: called.path)
            if copied == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let delivered = try #require(copied, "the callback did not run")
        #expect(delivered.status == "finished")
        #expect(delivered.text.hasPrefix("He might even have been made"), "\(delivered.text)")

        // Back again: the client reads what it missed.
        let back = try microphone.client(["dictate", "--result"])
        #expect(back.status == 0, "\(back.error)")
        #expect(Self.lastLine(back.output) == delivered.text)
        #expect(service.stop() == 0)
    }

    @Test func aSecondHandoffWhileOneRecordsIsBusy() throws {
        let microphone = try Microphone(hearing: [])
        // The microphone reads a FIFO: the first hand-off waits on it until the test speaks.
        let fifo = microphone.home.url.appendingPathComponent("in.raw")
        try FileManager.default.removeItem(at: fifo)
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(try microphone.setup.auth("grant").status == 0)
        let service = try microphone.start()
        defer { _ = service.stop() }

        let first = Process()
        first.executableURL = ServeTests.clientBinary
        first.arguments = ["--socket", microphone.setup.socket, "dictate", "--handoff"]
        first.environment = ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": microphone.runtime.path]) { $1 }
        let output = Pipe()
        first.standardOutput = output
        first.standardError = FileHandle.nullDevice
        try first.run()
        #expect(service.wait(for: "\"state\":\"starting\""))

        let second = try microphone.client(["dictate", "--handoff"])
        #expect(second.status == 1)
        #expect(second.error.contains("busy") && second.error.contains("hand-off for \(ServeTests.appID)"), "\(second.error)")

        // The first one hears the sentence and finishes.
        let speech = try Self.spokenSentence()
        let writer = try FileHandle(forWritingTo: fifo)
        var bytes = Data(capacity: speech.count * 2)
        for sample in speech { bytes.append(le: UInt16(bitPattern: sample)) }
        writer.write(bytes)
        try writer.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(Self.lastLine(text).hasPrefix("He might even have been made"), "\(text)")

        // The microphone is free again. The client may have its text before the service logs
        // the task's end: wait for the event rather than read the log at once.
        #expect(service.wait(for: "\"state\":\"finished\""))
        #expect(service.stop() == 0)
    }

    /// heed listen and heed serve's hand-offs take the microphone in turn: while heed listen
    /// listens, a hand-off is busy and names it, and so does a second heed listen; once it has
    /// stopped, the hand-off records.
    @Test func heedListenAndAHandoffTakeTheMicrophoneInTurn() throws {
        let microphone = try Microphone(hearing: ListenCommandTests.silence(2))
        #expect(try microphone.setup.auth("grant").status == 0)
        let home = ListenCommandTests.Home(existing: microphone.home, environment: ["XDG_RUNTIME_DIR": microphone.runtime.path])
        let (listener, output) = try ListenCommandTests.start(["--device", "default"], home: home)
        defer { if listener.isRunning { listener.terminate() } }
        #expect(ListenCommandTests.read(output, until: "\"listening\"").contains("\"listening\""))
        let service = try microphone.start()
        defer { _ = service.stop() }

        let refused = try microphone.client(["dictate", "--handoff"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("busy") && refused.error.contains("in use by heed listen (pid \(listener.processIdentifier))"), "\(refused.error)")
        let second = try home.heed(["listen", "--device", "default", "--max-seconds", "1"])
        #expect(second.status == 1)
        #expect(second.error.contains("the microphone 'default' is in use by heed listen (pid \(listener.processIdentifier))"), "\(second.error)")

        kill(listener.processIdentifier, SIGTERM)
        listener.waitUntilExit()
        #expect(listener.terminationStatus == 0)
        // The microphone is free: the hand-off records (and hears nobody in the room noise).
        let recorded = try microphone.client(["dictate", "--handoff"])
        #expect(recorded.status == 1)
        #expect(recorded.error.contains("noSpeech"), "\(recorded.error)")
        #expect(service.stop() == 0)
    }

    @Test func aHandoffThatHearsNobodyFailsWithNoSpeech() throws {
        let microphone = try Microphone(hearing: ListenCommandTests.silence(2))
        #expect(try microphone.setup.auth("grant").status == 0)
        let service = try microphone.start()
        defer { _ = service.stop() }
        let result = try microphone.client(["dictate", "--handoff"])
        #expect(result.status == 1)
        #expect(result.error.contains("noSpeech"), "\(result.error)")
        let record = try microphone.record()
        #expect(record.status == "failed")
        #expect(record.reason?.hasPrefix("noSpeech") == true)
        let back = try microphone.client(["dictate", "--result"])
        #expect(back.status == 1)
        #expect(back.error.contains("failed"))
        #expect(service.stop() == 0)
    }

    // MARK: Who may

    @Test func handoffsNeedSpeechRecognitionAndAMicrophoneUsageDescription() throws {
        // No microphoneUsageDescription: refused, naming the key, even when authorized.
        let bare = try Microphone(hearing: try Self.spokenSentence(), microphoneUsage: false)
        #expect(try bare.setup.auth("grant").status == 0)
        var service = try bare.start()
        var result = try bare.client(["dictate", "--handoff"])
        #expect(result.status == 1)
        #expect(result.error.contains("noUsageDescription") && result.error.contains("'microphoneUsageDescription'"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: bare.resultFile.path), "a refused hand-off records nothing")
        _ = service.stop()

        // Not decided, then denied: the speech-recognition permission comes first.
        let microphone = try Microphone(hearing: try Self.spokenSentence())
        service = try microphone.start()
        defer { _ = service.stop() }
        result = try microphone.client(["dictate", "--handoff"])
        #expect(result.status == 1)
        #expect(result.error.contains("notDetermined"), "\(result.error)")
        #expect(try microphone.setup.auth("deny").status == 0)
        result = try microphone.client(["dictate", "--handoff"])
        #expect(result.status == 1)
        #expect(result.error.contains("denied"), "\(result.error)")
        result = try microphone.client(["transcribe", Self.sentence, "--dictation"])
        #expect(result.status == 1)
        #expect(result.error.contains("denied"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: microphone.resultFile.path))
        #expect(service.stop() == 0)
    }
}
