import Foundation
import HeedAudio
import HeedClient
import HeedCore
import HeedIntents
import HeedRuntime
import HeedService
import HeedSpeech
import Logging
import Synchronization

/// One Wyoming peer: a thread reads its events and answers each in order.
final class WyomingConnection: Sendable {
    let descriptor: Int32
    let number: Int
    let listener: WyomingListener
    let service: WyomingService
    private let writing = Mutex(())

    init(descriptor: Int32, number: Int, listener: WyomingListener, service: WyomingService) {
        self.descriptor = descriptor
        self.number = number
        self.listener = listener
        self.service = service
        UnixSocket.setSendTimeout(descriptor, seconds: 30)
    }

    func start() {
        service.emit(event("wyomingConnected"))
        let thread = Thread { [self] in
            let session = WyomingSession(connection: self)
            let (reason, framingLost) = session.run()
            session.end()
            if framingLost { lingerAfterError() }
            service.remove(self)
            UnixSocket.close(descriptor)
            var ended = event("wyomingDisconnected")
            ended.message = reason
            service.emit(ended)
        }
        thread.name = "heed serve wyoming \(number)"
        thread.start()
    }

    /// After the `error` that ends a connection whose events cannot be framed any more: the
    /// sending side is ended and what the peer still sends is read and dropped for a moment, so
    /// that closing does not reset the connection before the peer has read the error.
    private func lingerAfterError() {
        UnixSocket.shutdownWriting(descriptor)
        UnixSocket.setReceiveTimeout(descriptor, seconds: 2)
        var bucket = [UInt8](repeating: 0, count: 64 * 1024)
        var left = 64 << 20
        while left > 0 {
            let count = bucket.withUnsafeMutableBytes { raw in (try? UnixSocket.receive(descriptor, into: raw)) ?? 0 }
            if count <= 0 { break }
            left -= count
        }
    }

    /// Ends the connection: its reader sees the end.
    func close() {
        UnixSocket.shutdown(descriptor)
    }

    func event(_ name: String) -> ServiceEvent {
        var event = ServiceEvent(name)
        event.connection = number
        event.appId = listener.clientAppID
        event.socket = listener.address.description
        return event
    }

    /// Sends one event; a peer that went away, or reads nothing for 30 s, is disconnected.
    func send(_ event: WyomingEvent) {
        writing.withLock { _ in
            do {
                try UnixSocket.send(descriptor, event.encoded())
            } catch {
                close()
            }
        }
    }
}

/// The state of one connection, owned by its thread: the request audio goes to, the audio's
/// format, the decoders.
final class WyomingSession {
    private let connection: WyomingConnection
    private var service: WyomingService { connection.service }
    private var configuration: WyomingService.Configuration { service.configuration }

    /// What the audio of the current stream is for.
    private enum Request {
        case transcribe(Transcription)
        case detect(Detection)
    }

    private var request: Request?
    private var audio: AudioInput?
    /// The current stream's request was refused (its `error` went out): its audio is dropped
    /// quietly up to its `audio-stop`, not refused chunk by chunk.
    private var ignoringAudio = false
    /// The wake phrase spotter's decoder, loaded at the first `detect` and kept.
    private var spotterRecognizer: PocketSphinxRecognizer?
    private var reader: WyomingEventReader?
    private var commandGrammarName = ""

    init(connection: WyomingConnection) {
        self.connection = connection
    }

    // MARK: The event loop

    /// Reads and answers events until the peer leaves; returns why the connection ended, and
    /// whether it ended because the stream could not be framed.
    func run() -> (reason: String, framingLost: Bool) {
        let reader = WyomingEventReader(descriptor: connection.descriptor, limits: configuration.limits)
        self.reader = reader
        while true {
            switch reader.next() {
            case .event(let event): handle(event)
            case .skipped(let type, let reason):
                fail("tooLarge", "the '\(type)' event was skipped: \(reason)")
                if type == "audio-chunk" { dropAudio(because: "a chunk of the stream was too large") }
            case .badData(let type, let reason):
                fail("malformed", "the '\(type)' event was ignored: \(reason)")
            case .malformed(let reason):
                fail("malformed", reason + "; the connection is closed, as the events after it cannot be told apart")
                return ("malformed: \(reason)", true)
            case .truncated(let reason):
                return (reason, false)
            case .end:
                return ("the peer closed the connection", false)
            }
        }
    }

    /// Frees what the connection holds.
    func end() {
        if case .transcribe(let transcription) = request { transcription.close() }
        request = nil
    }

    private func send(_ event: WyomingEvent) { connection.send(event) }

    /// An `error` event: what went wrong, and a code (a permission status, `malformed`, `tooLarge`, …).
    private func fail(_ code: String, _ text: String) {
        send(WyomingEvent("error", ["text": .string(text), "code": .string(code)]))
        var event = connection.event("wyomingError")
        event.status = code
        event.message = text
        service.emit(event)
    }

    private func handle(_ event: WyomingEvent) {
        switch event.type {
        case "ping": send(WyomingEvent("pong", ["text": event.data["text"] ?? .null]))
        case "describe":
            send(WyomingInfo.event(version: configuration.version, wakePhrase: configuration.wakePhrase, partialResults: configuration.partialResults))
        case "select-program":
            let name = event.string("name") ?? ""
            if name != "heed", name != configuration.wakePhrase {
                fail("unsupported", "no program '\(name)': Heed's programs are all named 'heed' (see describe)")
            }
        case "transcribe": transcribe(event)
        case "detect": detect(event)
        case "audio-start": audioStart(event)
        case "audio-chunk": audioChunk(event)
        case "audio-stop": audioStop()
        case "recognize": recognize(event)
        case "transcript": handleCommand(event)
        case "intent":
            fail("unsupported", "Heed handles commands as text: send the words in a 'transcript' event, not an 'intent'")
        case "synthesize", "synthesize-start", "synthesize-chunk", "synthesize-stop":
            fail("unsupported", "Heed has no text to speech over Wyoming; describe lists what it offers (asr, intent, handle, wake)")
        default:
            fail("unsupported", "Heed does not handle '\(event.type)' events; describe lists what it offers (asr, intent, handle, wake)")
        }
    }

    // MARK: Permission

    /// Whether the listener's client identity may use speech recognition; if not, says why in an `error`.
    private func permitted() -> Bool {
        let answer = service.permission.status(ofAppID: connection.listener.clientAppID)
        guard answer.status != .authorized else { return true }
        let text = "\(answer.status.rawValue): " + (answer.message ?? "speech recognition is not authorized")
        fail(answer.status.rawValue, text)
        var event = connection.event("wyomingRefused")
        event.status = answer.status.rawValue
        event.message = answer.message
        service.emit(event)
        return false
    }

    // MARK: Speech to text

    private func transcribe(_ event: WyomingEvent) {
        if let language = event.string("language"), !language.lowercased().hasPrefix("en") {
            replaceRequest()
            ignoringAudio = true
            return fail("unsupported", "Heed recognizes English (en), not '\(language)'")
        }
        startTranscription()
    }

    @discardableResult
    private func startTranscription() -> Bool {
        replaceRequest()
        ignoringAudio = true
        guard permitted() else { return false }
        do {
            let lease = try service.recognizers.checkOut(.grammar(.intents))
            request = .transcribe(
                Transcription(lease: lease, recognizers: service.recognizers, partialSlots: service.partialSlots))
            ignoringAudio = false
            return true
        } catch {
            fail(error.status.rawValue, error.message)
            return false
        }
    }

    /// A new request ends the one before it (its audio never stopped).
    private func replaceRequest() {
        if case .transcribe(let transcription) = request { transcription.close() }
        request = nil
        audio = nil
        ignoringAudio = false
    }

    private func audioStart(_ event: WyomingEvent) {
        guard !ignoringAudio else { return }
        guard let format = AudioInput(event, fail: fail) else { return }
        if request == nil {
            // Audio without a request is transcribed, as Wyoming's speech-to-text services do.
            guard startTranscription() else { return }
        }
        audio = format
        if case .transcribe(let transcription) = request, transcription.streaming {
            send(WyomingEvent("transcript-start", ["language": .string("en")]))
        }
    }

    private func audioChunk(_ event: WyomingEvent) {
        guard !ignoringAudio else { return }
        if audio == nil {
            guard let format = AudioInput(event, fail: fail) else { return }
            if request == nil, !startTranscription() { return }
            audio = format
        } else if let rate = event.integer("rate"), let width = event.integer("width"), let channels = event.integer("channels"),
            audio?.differs(rate: rate, width: width, channels: channels) == true
        {
            guard let format = AudioInput(event, fail: fail) else { return }
            audio = format
        }
        guard var input = audio else { return }
        let samples = input.convert(event.payload)
        audio = input
        switch request {
        case .transcribe(let transcription):
            // Partial results cost a live decode of every chunk. A connection that falls more than
            // half a second of audio behind its peer (a busy machine) stops them for this stream,
            // so that the final transcript does not wait behind them; it is not affected.
            if transcription.streaming, let reader, reader.backlog > input.bytesPerSecond / 2 { transcription.stopPartials() }
            let maximum = Int(configuration.maximumSeconds) * AudioBuffer.recognitionSampleRate
            if let delta = transcription.append(samples, maximumSamples: maximum) {
                send(WyomingEvent("transcript-chunk", ["text": .string(delta)]))
            }
        case .detect(let detection):
            spot(detection.append(samples), for: detection)
        case nil:
            break
        }
    }

    private func audioStop() {
        guard !ignoringAudio else {
            ignoringAudio = false
            return
        }
        switch request {
        case .transcribe(let transcription):
            request = nil
            audio = nil
            finish(transcription)
        case .detect(let detection):
            request = nil
            audio = nil
            spot(detection.finish(), for: detection)
            if !detection.detected { send(WyomingEvent("not-detected")) }
        case nil:
            fail("malformed", "'audio-stop' without a request: send transcribe or detect, then audio-start, audio-chunk…, audio-stop")
        }
    }

    private func dropAudio(because reason: String) {
        guard request != nil else { return }
        replaceRequest()
        fail("audioError", "the audio stream was dropped (\(reason)); start again with transcribe or detect")
    }

    private func finish(_ transcription: Transcription) {
        defer { transcription.close() }
        let started = ContinuousClock.now
        let result: HeedCore.RecognitionResult
        do {
            result = try transcription.finalResult()
        } catch {
            return fail("unavailable", "decoding failed: \(error)")
        }
        let decoding = (ContinuousClock.now - started)
        // A rejected recording is no command: its text is empty, as an unheard one.
        let text = result.rejected ? "" : result.text
        if transcription.streaming, let delta = transcription.finalDelta(text) {
            send(WyomingEvent("transcript-chunk", ["text": .string(delta)]))
        }
        send(WyomingEvent("transcript", ["text": .string(text), "language": .string("en")]))
        if transcription.streaming { send(WyomingEvent("transcript-stop")) }
        // The log says that a transcript went out and how long decoding took, never what was said.
        var event = connection.event("wyomingTranscript")
        event.milliseconds = decoding.milliseconds
        service.emit(event)
    }

    // MARK: Wake phrase

    private func detect(_ event: WyomingEvent) {
        replaceRequest()
        ignoringAudio = true
        if case .array(let names)? = event.data["names"] {
            let wanted = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
            if !wanted.isEmpty, !wanted.contains(configuration.wakePhrase), !wanted.contains("heed") {
                return fail(
                    "unsupported",
                    "Heed spots only its wake phrase '\(configuration.wakePhrase)', not \(wanted.map { "'\($0)'" }.joined(separator: ", "))")
            }
        }
        guard permitted() else { return }
        if spotterRecognizer == nil {
            let setup = service.recognizers.setup
            guard let grammar = setup.intents?.grammar else {
                return fail("unavailable", "this Heed was started without intents: the wake phrase is spotted with the command grammar")
            }
            do {
                let recognizer = try PocketSphinxRecognizer(grammar: grammar, configuration: setup.intentsConfiguration, logger: service.logger)
                commandGrammarName = recognizer.activeGrammar
                try spotter.load(into: recognizer, commands: grammar)
                spotterRecognizer = recognizer
            } catch {
                return fail("unavailable", "cannot load the wake phrase spotter: \(error)")
            }
        }
        request = .detect(Detection())
        ignoringAudio = false
    }

    private var spotter: WakePhraseSpotter {
        WakePhraseSpotter(phrase: configuration.wakePhrase, threshold: configuration.wakeThreshold)
    }

    /// Spots the wake phrase in utterances the endpointer ended.
    private func spot(_ utterances: [Endpointer.Utterance], for detection: Detection) {
        guard let recognizer = spotterRecognizer else { return }
        for utterance in utterances {
            let spotting: WakePhraseSpotter.Spotting
            do {
                spotting = try spotter.spot(utterance.audio, with: recognizer, thenActivate: commandGrammarName)
            } catch {
                return fail("unavailable", "spotting the wake phrase failed: \(error)")
            }
            guard spotting.woke, let end = spotting.phraseEnd else { continue }
            detection.detected = true
            send(
                WyomingEvent(
                    "detection", ["name": .string(configuration.wakePhrase), "timestamp": .number(((utterance.start + end) * 1000).rounded())]))
            var event = connection.event("wyomingDetection")
            event.message = "confidence " + RecognitionResult.shown(confidence: spotting.confidence)
            service.emit(event)
        }
    }

    // MARK: Intents and handling

    private func recognize(_ event: WyomingEvent) {
        guard let text = event.string("text") else { return fail("malformed", "'recognize' needs 'text', the words to recognize") }
        guard permitted() else { return }
        guard let parser = service.recognizers.setup.intents?.parser else {
            return fail("unavailable", "this Heed was started without intents")
        }
        guard let match = parser.parse(text).first else {
            return send(WyomingEvent("not-recognized", ["text": .string("No command of Heed's intents matches “\(text)”.")]))
        }
        let entities: [JSONValue] = match.parameters.sorted { $0.key < $1.key }.map { name, value in
            let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(value.jsonText.utf8))) ?? .string(value.displayText)
            return .object(["name": .string(name), "value": json])
        }
        send(WyomingEvent("intent", ["name": .string(match.intent), "entities": .array(entities)]))
    }

    private func handleCommand(_ event: WyomingEvent) {
        guard let text = event.string("text") else { return fail("malformed", "'transcript' needs 'text', the command to carry out") }
        guard permitted() else { return }
        guard let intents = service.recognizers.setup.intents else {
            return fail("unavailable", "this Heed was started without intents")
        }
        guard let match = intents.parser.parse(text).first else {
            return send(WyomingEvent("not-handled", ["text": .string("No command of Heed's intents matches “\(text)”.")]))
        }
        let outcome = Mutex<WyomingUser.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        service.submit(
            WyomingService.HandleJob(match: match, vocabulary: intents.vocabulary) { result in
                outcome.withLock { $0 = result }
                done.signal()
            })
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { return }
        send(WyomingEvent(result.handled ? "handled" : "not-handled", ["text": .string(result.text)]))
        var log = connection.event("wyomingHandled")
        log.status = result.handled ? "handled" : "notHandled"
        service.emit(log)
    }
}

/// The format of a stream's audio and its conversion to 16 kHz mono 16-bit.
struct AudioInput {
    let rate: Int
    let width: Int
    let channels: Int
    private var converter: CaptureConverter?

    /// The format an `audio-start` or `audio-chunk` names; `nil` after an `error` when it is not one Heed takes.
    init?(_ event: WyomingEvent, fail: (String, String) -> Void) {
        guard let rate = event.integer("rate"), let width = event.integer("width"), let channels = event.integer("channels") else {
            fail("malformed", "'\(event.type)' needs 'rate', 'width' and 'channels' (integers)")
            return nil
        }
        guard (1000...384_000).contains(rate), (1...4).contains(width), (1...32).contains(channels) else {
            fail(
                "audioFormat",
                "'\(event.type)' has rate \(rate), width \(width), channels \(channels): Heed takes 1000–384000 Hz, 1–4 bytes a sample, 1–32 channels")
            return nil
        }
        self.rate = rate
        self.width = width
        self.channels = channels
        converter = CaptureConverter(inputRate: rate, channels: channels, outputRate: AudioBuffer.recognitionSampleRate)
    }

    var bytesPerSecond: Int { rate * width * channels }

    func differs(rate: Int, width: Int, channels: Int) -> Bool {
        rate != self.rate || width != self.width || channels != self.channels
    }

    /// The payload as 16 kHz mono samples; an incomplete last frame is dropped.
    mutating func convert(_ payload: [UInt8]) -> [Int16] {
        let samples = PCMSamples.int16(littleEndian: payload, width: width)
        return converter?.convert(samples) ?? samples
    }
}

/// One transcription: the audio so far, a decoder from the pool, and the partial results sent.
final class Transcription {
    private let lease: Recognizers.Lease
    private let recognizers: Recognizers
    private var partials: PartialResults?
    private var samples: [Int16] = []
    /// The text sent in `transcript-chunk`s so far.
    private var sent = ""
    /// The words of the last partial result.
    private var previous: [Substring] = []
    private var closed = false
    /// Whether `transcript-start`/`-chunk`/`-stop` go out.
    let streaming: Bool

    private let partialSlots: PartialSlots

    /// - Parameter partialSlots: Partial results stream when a slot is free (and the second
    ///   decoder loads); otherwise only the final transcript goes out.
    init(lease: Recognizers.Lease, recognizers: Recognizers, partialSlots: PartialSlots) {
        self.lease = lease
        self.recognizers = recognizers
        self.partialSlots = partialSlots
        if partialSlots.take() {
            partials = PartialResults(lease)
            if partials == nil { partialSlots.give() }
        }
        streaming = partials != nil
    }

    /// Takes audio; returns the words to send in a `transcript-chunk`, when the partial result grew.
    func append(_ chunk: [Int16], maximumSamples: Int) -> String? {
        let taken = chunk.prefix(max(0, maximumSamples - samples.count))
        guard !taken.isEmpty else { return nil }
        samples.append(contentsOf: taken)
        guard let hypothesis = partials?.decode(Array(taken)) else { return nil }
        // `transcript-chunk`s add to each other and cannot be taken back: only words two partial
        // results in a row agree on go out (a fresh decoder's first hypotheses wander).
        let words = hypothesis.split(separator: " ")
        let agreed = zip(previous, words).prefix { $0 == $1 }.map { String($0.0) }
        previous = words
        return delta(to: agreed.joined(separator: " "))
    }

    /// The words still to send when `hypothesis` extends what was sent.
    private func delta(to hypothesis: String) -> String? {
        if sent.isEmpty {
            guard !hypothesis.isEmpty else { return nil }
            sent = hypothesis
            return hypothesis
        }
        guard hypothesis.count > sent.count, hypothesis.hasPrefix(sent + " ") else { return nil }
        let rest = String(hypothesis.dropFirst(sent.count))
        sent = hypothesis
        return rest
    }

    /// The rest of the final text, when it extends what the chunks said.
    func finalDelta(_ text: String) -> String? {
        delta(to: text)
    }

    /// Ends partial results for this stream; the final transcript is the same without them.
    func stopPartials() {
        guard let partials else { return }
        partials.stop()
        self.partials = nil
        partialSlots.give()
    }

    /// Decodes the whole audio, as `heed recognize` decodes a file.
    func finalResult() throws(RecognizerError) -> HeedCore.RecognitionResult {
        stopPartials()
        return try recognizers.finalResult(samples, with: lease)
    }

    /// Gives the decoder back to the pool.
    func close() {
        guard !closed else { return }
        closed = true
        stopPartials()
        recognizers.checkIn(lease)
    }
}

/// One wake phrase detection: the endpointer that cuts the stream into utterances.
final class Detection {
    /// The endpointer keeps only the utterance under way: a satellite may stream for hours.
    private var endpointer = Endpointer()
    var detected = false

    /// Takes audio; returns the utterances it ended.
    func append(_ samples: [Int16]) -> [Endpointer.Utterance] {
        return Self.utterances(endpointer.process(samples))
    }

    /// The utterance the end of the stream ends.
    func finish() -> [Endpointer.Utterance] {
        Self.utterances(endpointer.finish())
    }

    private static func utterances(_ events: [Endpointer.Event]) -> [Endpointer.Utterance] {
        events.compactMap { if case .speechEnded(let utterance) = $0 { utterance } else { nil } }
    }
}
