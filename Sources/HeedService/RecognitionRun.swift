import Foundation
import HeedAudio
import HeedClient
import HeedCore
import HeedIntents
import HeedSpeech

/// One recognition task of a client, on a thread of its own with a decoder of its own.
///
/// States follow `SFSpeechRecognitionTaskState`: `starting` (loading the decoder), `running`
/// (audio is decoded; partial results when asked), `finishing` (the final decode over the
/// whole audio) or `canceling`, then `completed`. Once `starting` is sent, `completed` always
/// ends the task, after the final result, a cancel or an error.
final class RecognitionRun: @unchecked Sendable {
    /// What the connection hands the task.
    private enum Input {
        case audio([Int16])
        case finish
        case cancel(silently: Bool)
    }

    let id: MessageID
    let source: AudioSourceChoice
    let grammar: GrammarChoice
    let partialResults: Bool
    /// The most samples the task takes (`maxDuration` × 16 000).
    let maxSamples: Int
    private let connection: Connection

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var inputs: [Input] = []

    /// Samples between partial results at least: 250 ms.
    static let partialInterval = AudioBuffer.recognitionSampleRate / 4

    init(id: MessageID, source: AudioSourceChoice, grammar: GrammarChoice, partialResults: Bool, maxSamples: Int, connection: Connection) {
        self.id = id
        self.source = source
        self.grammar = grammar
        self.partialResults = partialResults
        self.maxSamples = maxSamples
        self.connection = connection
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "heed serve task \(id)"
        thread.start()
    }

    // MARK: From the connection

    func append(_ samples: [Int16]) { put(.audio(samples)) }
    func finish() { put(.finish) }
    /// Cancels the task; `silently` when the client is gone and nothing can be sent.
    func cancel(silently: Bool) { put(.cancel(silently: silently)) }

    private func put(_ input: Input) {
        condition.lock()
        inputs.append(input)
        condition.signal()
        condition.unlock()
    }

    private func take(waiting: Bool) -> Input? {
        condition.lock()
        defer { condition.unlock() }
        while waiting && inputs.isEmpty { condition.wait() }
        return inputs.isEmpty ? nil : inputs.removeFirst()
    }

    // MARK: The task

    private var silent = false

    private func send(_ message: ServiceMessage) {
        if !silent { connection.send(message) }
    }

    private func setState(_ state: TaskState) {
        send(.state(id, state))
        var event = connection.event("task")
        event.task = id.description
        event.state = state.rawValue
        connection.service.emit(event)
    }

    private func run() {
        setState(.starting)
        recognize()
        // The task's place is free before the client hears `completed`: its next request may take it.
        connection.ended(self)
        setState(.completed)
    }

    /// Everything between `starting` and `completed`.
    private func recognize() {
        let lease: Recognizers.Lease
        do {
            lease = try connection.service.recognizers.checkOut(grammar)
        } catch {
            send(.error(id, error.status, error.message))
            return
        }
        defer { connection.service.recognizers.checkIn(lease) }
        setState(.running)
        let outcome: Outcome
        switch source {
        case .file(let path): outcome = runFile(path, lease)
        default: outcome = runStream(lease)
        }
        switch outcome {
        case .finish(let samples):
            setState(.finishing)
            finalResult(samples, lease)
        case .cancel(let silently):
            silent = silent || silently
            setState(.canceling)
        case .failed(let status, let message):
            send(.error(id, status, message))
        }
    }

    private enum Outcome {
        case finish([Int16])
        case cancel(silently: Bool)
        case failed(ServiceStatus, String)
    }

    private func runFile(_ path: String, _ lease: Recognizers.Lease) -> Outcome {
        let audio: AudioBuffer
        do {
            audio = try AudioFile.read(path)
        } catch {
            return .failed(.audioError, error.description)
        }
        let samples = Array(audio.samples.prefix(maxSamples))
        guard partialResults else {
            if case .cancel(let silently)? = take(waiting: false) { return .cancel(silently: silently) }
            return .finish(samples)
        }
        guard var partials = PartialResults(lease) else { return .failed(.unavailable, "cannot load a decoder for partial results") }
        defer { partials.stop() }
        var offset = 0
        while offset < samples.count {
            while let input = take(waiting: false) {
                if case .cancel(let silently) = input { return .cancel(silently: silently) }
            }
            let end = min(samples.count, offset + Self.partialInterval)
            if let text = partials.decode(Array(samples[offset..<end])) { sendPartial(text) }
            offset = end
        }
        return .finish(samples)
    }

    private func runStream(_ lease: Recognizers.Lease) -> Outcome {
        var samples: [Int16] = []
        var partials = partialResults ? PartialResults(lease) : nil
        if partialResults, partials == nil { return .failed(.unavailable, "cannot load a decoder for partial results") }
        defer { partials?.stop() }
        while true {
            guard let input = take(waiting: true) else { continue }
            switch input {
            case .cancel(let silently): return .cancel(silently: silently)
            case .finish: return .finish(samples)
            case .audio(let chunk):
                let taken = chunk.prefix(maxSamples - samples.count)
                samples.append(contentsOf: taken)
                if let text = partials?.decode(Array(taken)) { sendPartial(text) }
                // The longest audio a task takes: it finishes by itself, as Apple's one-minute limit.
                if samples.count >= maxSamples { return .finish(samples) }
            }
        }
    }

    private func sendPartial(_ text: String) {
        var message = ServiceMessage(id: id, type: .partial)
        message.isFinal = false
        message.transcription = text
        send(message)
    }

    private func finalResult(_ samples: [Int16], _ lease: Recognizers.Lease) {
        let result: HeedCore.RecognitionResult
        do {
            result = try connection.service.recognizers.finalResult(samples, with: lease)
        } catch {
            send(.error(id, .unavailable, "decoding failed: \(error)"))
            return
        }
        var message = ServiceMessage(id: id, type: .final)
        message.isFinal = true
        message.transcription = result.text
        message.confidence = result.confidence
        message.rejected = result.rejected
        message.alternatives = result.alternatives.map { AlternativeTranscription(transcription: $0.text) }
        message.segments = result.words.map {
            TranscriptionSegment(substring: $0.word, timestamp: $0.start, duration: $0.end - $0.start, confidence: $0.confidence)
        }
        message.audioDuration = result.durationSeconds
        if let parser = lease.parser {
            let match = parser.parse(result.text).first
            message.intent = match.flatMap { try? MessageCoding.decode(JSONValue.self, from: Array($0.jsonText.utf8)) } ?? .null
        }
        send(message)
        // The service's log says that a result went out, never what was said.
        var event = connection.event("final")
        event.task = id.description
        connection.service.emit(event)
    }
}

/// Partial results from the decoder's live search: a new one at most every 250 ms of audio,
/// and only when the hypothesis changed.
package struct PartialResults {
    let recognizer: PocketSphinxRecognizer
    private var pending = 0
    private var last = ""
    private var started = false

    /// Partial results from a task's decoder for them; `nil` when it cannot be loaded.
    package init?(_ lease: Recognizers.Lease) {
        guard let recognizer = try? lease.liveRecognizer() else { return nil }
        self.recognizer = recognizer
    }

    /// Decodes a chunk; returns a partial result when one is due.
    package mutating func decode(_ chunk: [Int16]) -> String? {
        if !started {
            started = (try? recognizer.startLiveDecoding()) != nil
            guard started else { return nil }
        }
        guard (try? recognizer.decodeLive(chunk)) != nil else { return nil }
        pending += chunk.count
        guard pending >= RecognitionRun.partialInterval else { return nil }
        pending = 0
        let hypothesis = recognizer.liveHypothesis
        guard !hypothesis.isEmpty, hypothesis != last else { return nil }
        last = hypothesis
        return hypothesis
    }

    /// Ends live decoding.
    package func stop() {
        if started { recognizer.stopLiveDecoding() }
    }
}
