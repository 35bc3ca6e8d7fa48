import Foundation
import HeedAudio
import HeedCore
import Testing

/// `heed serve --listen`: the service is the hands-free listener too, the one owner of the
/// microphone. The real service process and the real example client; Heed's microphone is the
/// real ALSA code path, ALSA's `file` plugin reading a FIFO that the test speaks into at its own
/// pace (room noise between what is said, as a room has).
@Suite(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"), .serialized)
struct ServeListenTests {
    /// The room: what the service's microphone hears, written into its FIFO.
    final class Room {
        private let writer: FileHandle

        /// Opens the FIFO for writing once the service has opened its microphone; fails when
        /// the service ends first or takes more than `limit` seconds.
        init(fifo: URL, service: ServeTests.Service, limit: Double = 120) throws {
            let end = Date().addingTimeInterval(limit)
            while true {
                // Without a reader a non-blocking open fails (ENXIO) instead of waiting.
                let descriptor = open(fifo.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if descriptor >= 0 {
                    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
                    writer = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                    return
                }
                guard service.process.isRunning, Date() < end else {
                    throw ServeTests.ServeTestError("the service never opened its microphone: \(service.errorOutput)")
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        func say(_ samples: [Int16]) {
            var bytes = Data(capacity: samples.count * 2)
            for sample in samples { bytes.append(le: UInt16(bitPattern: sample)) }
            writer.write(bytes)
        }

        /// Room noise a quarter of a second at a time until `condition` holds (the listener
        /// notices a request only while it hears something); `false` after `limit` seconds.
        func quiet(until condition: () -> Bool, limit: Double = 60) -> Bool {
            let end = Date().addingTimeInterval(limit)
            while Date() < end {
                if condition() { return true }
                say(ListenCommandTests.silence(0.25))
                Thread.sleep(forTimeInterval: 0.05)
            }
            return condition()
        }

        func close() { try? writer.close() }
    }

    /// A service with `--listen` on a FIFO microphone, its room open, the listener listening;
    /// `speaking`: spoken responses on (Heed asks by voice only when it says the question).
    static func start(_ microphone: DictationServeTests.Microphone, speaking: Bool = false) throws -> (ServeTests.Service, Room) {
        if speaking {
            let config = URL(fileURLWithPath: microphone.setup.config)
            var settings = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any] ?? [:]
            settings["spokenResponses"] = true
            try JSONSerialization.data(withJSONObject: settings).write(to: config)
        }
        let fifo = microphone.home.url.appendingPathComponent("in.raw")
        try FileManager.default.removeItem(at: fifo)
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let service = try ServeTests.Service(
            microphone.setup, extra: ["--device", "default", "--listen", "--signal-device", "none"], microphone: true,
            environment: microphone.environment)
        let room = try Room(fifo: fifo, service: service)
        room.say(ListenCommandTests.silence(1))
        try service.waitListening()
        #expect(service.wait(for: #""listener":{"event":"listening""#))
        return (service, room)
    }

    /// The example client, started in the background with this service's runtime folder.
    static func startClient(_ microphone: DictationServeTests.Microphone, _ arguments: [String]) throws -> (Process, Pipe) {
        let client = Process()
        client.executableURL = ServeTests.clientBinary
        client.arguments = ["--socket", microphone.setup.socket] + arguments
        client.environment = ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": microphone.runtime.path]) { $1 }
        let output = Pipe()
        client.standardOutput = output
        client.standardError = output
        try client.run()
        return (client, output)
    }

    /// The events of the service's listener (`{"event":"listener","listener":{...}}`).
    static func listenerEvents(_ service: ServeTests.Service) -> [[String: Any]] {
        ServeTests.lines(service.events).compactMap { $0["listener"] as? [String: Any] }
    }

    static func finish(_ client: (Process, Pipe)) -> (status: Int32, output: String) {
        let text = String(decoding: client.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        client.0.waitUntilExit()
        return (client.0.terminationStatus, text)
    }

    /// A person saying "yes" (Speech Commands: real speech).
    static func realWord(_ word: String) throws -> [Int16]? {
        guard let corpora = Fixtures.corpora else { return nil }
        let folder = URL(fileURLWithPath: corpora).appendingPathComponent("speech_commands_v001_sample/wav/\(word)")
        guard let file = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().first(where: { $0.hasSuffix(".wav") })
        else { return nil }
        return try AudioFile.read(folder.appendingPathComponent(file).path).samples
    }

    /// With no terminal and no notification server, a notDetermined client's question is put by
    /// voice: the listener says it (into the ALSA file device) with the client's usage
    /// description, hears a person's "yes", and the answer is remembered.
    @Test(.enabled(if: Fixtures.corpora != nil, "needs ../shared/corpora (Speech Commands) for a person saying yes"))
    func aClientsQuestionIsAskedAndAnsweredByVoice() throws {
        let microphone = try DictationServeTests.Microphone(hearing: [])
        let yes = try #require(try Self.realWord("yes"))
        let (service, room) = try Self.start(microphone, speaking: true)
        defer {
            room.close()
            _ = service.stop()
        }
        let client = try Self.startClient(microphone, ["authorize"])
        #expect(room.quiet(until: { service.events.contains(#""event":"speech""#) }), "no question: \(service.events)")
        let question = try #require(
            Self.listenerEvents(service).first { $0["event"] as? String == "speech" })
        #expect((question["text"] as? String)?.contains("Transcribes what you give it.") == true, "\(question)")
        #expect(question["spoken"] as? Bool == true, "\(question)")
        let played = try FileManager.default.attributesOfItem(atPath: microphone.home.output.path)[.size] as? Int ?? 0
        #expect(played > 16_000, "the question was not played: \(played) bytes")
        room.say(ListenCommandTests.silence(0.5) + yes)
        #expect(room.quiet(until: { !client.0.isRunning }))
        let answered = Self.finish(client)
        #expect(answered.status == 0, "\(answered.output)")
        #expect(answered.output.contains("authorized"), "\(answered.output)")
        // Remembered: the next request is not asked again.
        #expect(try microphone.setup.auth("status").output.contains("authorized"))
        let again = try microphone.client(["authorize"])
        #expect(again.status == 0, "\(again.error)")
        // The listener reads its FIFO until the room closes: only then does it see the stop.
        room.close()
        #expect(service.stop() == 0)
    }

    /// Nobody answers: the question ends after the answer timeout, and the client is told it is
    /// still notDetermined and how to decide.
    @Test func aQuestionNobodyAnswersLeavesTheClientUndecided() throws {
        let microphone = try DictationServeTests.Microphone(hearing: [])
        let (service, room) = try Self.start(microphone, speaking: true)
        defer {
            room.close()
            _ = service.stop()
        }
        let client = try Self.startClient(microphone, ["authorize"])
        // Eight seconds of answer timeout, twice over for the second asking: room noise only.
        #expect(room.quiet(until: { !client.0.isRunning }, limit: 120))
        let answered = Self.finish(client)
        #expect(answered.status == 1)
        #expect(answered.output.contains("notDetermined") && answered.output.contains("heed auth speech-recognition grant"), "\(answered.output)")
        #expect(service.events.contains(#""event":"speech""#))
        // The listener reads its FIFO until the room closes: only then does it see the stop.
        room.close()
        #expect(service.stop() == 0)
    }

    /// The listener holds the device: a separate heed listen is refused; a hand-off borrows the
    /// microphone between commands, gets the sentence, and gives it back; the listener hears the
    /// next command. With spoken responses off, nobody is asked by voice.
    @Test func aHandoffBorrowsTheListenersMicrophone() throws {
        let microphone = try DictationServeTests.Microphone(hearing: [])
        let (service, room) = try Self.start(microphone)
        defer {
            room.close()
            _ = service.stop()
        }
        // Heed does not speak: a question only shown is not asked (nothing in the room may answer it).
        let unasked = try microphone.client(["authorize"])
        #expect(unasked.status == 1)
        #expect(unasked.error.contains("nobody to ask"), "\(unasked.error)")
        #expect(!service.events.contains(#""event":"speech""#))
        #expect(try microphone.setup.auth("grant").status == 0)
        let home = ListenCommandTests.Home(existing: microphone.home, environment: ["XDG_RUNTIME_DIR": microphone.runtime.path])
        let refused = try home.heed(["listen", "--device", "default", "--dry-run"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("heed serve --listen"), "\(refused.error)")

        let client = try Self.startClient(microphone, ["dictate", "--handoff"])
        #expect(room.quiet(until: { service.events.contains(#""event":"microphoneLent""#) }), "\(service.events)")
        room.say(try DictationServeTests.spokenSentence())
        #expect(room.quiet(until: { !client.0.isRunning }))
        let dictated = Self.finish(client)
        #expect(dictated.status == 0, "\(dictated.output)")
        #expect(DictationServeTests.lastLine(dictated.output).hasPrefix("He might even have been made"), "\(dictated.output)")
        #expect(room.quiet(until: { service.events.contains(#""event":"microphoneBack""#) }))
        // The sentence was the hand-off's: the listener heard none of it.
        let heardBefore = Self.listenerEvents(service).filter {
            $0["event"] as? String == "speechStarted"
        }
        #expect(heardBefore.isEmpty, "\(service.events)")

        // A command said in this room's own quiet (espeak-ng, as in the listener's other tests).
        // The bundled real "pause" brings its room's noise, 20 dB over this one, and a click: the
        // utterance then began at that step and was heard as nothing now and then, depending on
        // how far the noise floor had come down since the loan (docs/MEASUREMENTS.md, "Known
        // problems").
        try #require(Fixtures.hasEspeak, "needs espeak-ng")
        room.say(try Speech.utterance("pause", voice: "en-us", before: 0.3))
        #expect(room.quiet(until: { service.events.contains(#""isFinal":true"#) }), "\(service.events)")
        let final = try #require(
            Self.listenerEvents(service).first { $0["event"] as? String == "final" })
        // Heard as "pause" or "pause it": the same intent.
        #expect((final["text"] as? String)?.hasPrefix("pause") == true, "\(final); the listener's events: \(Self.listenerEvents(service))")
        // The listener reads its FIFO until the room closes: only then does it see the stop.
        room.close()
        #expect(service.stop() == 0)
    }
}
