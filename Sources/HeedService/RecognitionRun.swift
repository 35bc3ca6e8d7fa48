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
    let kind: Recognizers.Kind
    let partialResults: Bool
    /// The most samples the task takes (`maxDuration` × 16 000).
    let maxSamples: Int
    /// For `source: "microphone"`: the hand-off, its microphone reserved.
    let handoff: Handoff?
    private let connection: Connection

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var inputs: [Input] = []

    /// Samples between partial results at least: 250 ms.
    static let partialInterval = AudioBuffer.recognitionSampleRate / 4

    init(
        id: MessageID, source: AudioSourceChoice, kind: Recognizers.Kind, partialResults: Bool, maxSamples: Int, handoff: Handoff?,
        connection: Connection
    ) {
        self.id = id
        self.source = source
        self.kind = kind
        self.partialResults = partialResults
        self.maxSamples = maxSamples
        self.handoff = handoff
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
    /// A hand-off whose client went away: it goes on, for the shared storage and the callback.
    private var clientGone = false
    /// When the microphone heard the speaker stop (a hand-off), for the latency in the log.
    private var speechEndedAt: ContinuousClock.Instant?
    /// Whether the decoder went back to the pool and the task's place in the service is free:
    /// both happen just before the final result goes out, so that a client's next request,
    /// sent as soon as it has its result, finds them.
    private var resourcesReturned = false

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
        if let handoff {
            // A client that went away while the text was made is gone too.
            while let input = take(waiting: false) {
                if case .cancel(silently: true) = input { clientGone = true }
            }
            if clientGone { handoff.runCallback() }
            handoff.release()
        }
        // The task's place is free before the client hears `completed`: its next request may take it.
        if !resourcesReturned { connection.service.releaseTask() }
        connection.ended(self)
        setState(.completed)
    }

    /// Everything between `starting` and `completed`.
    private func recognize() {
        let lease: Recognizers.Lease
        do {
            lease = try connection.service.recognizers.checkOut(kind)
        } catch {
            fail(error.status, error.message)
            return
        }
        defer { if !resourcesReturned { connection.service.recognizers.checkIn(lease) } }
        let outcome: Outcome
        switch source {
        case .file(let path):
            setState(.running)
            outcome = runFile(path, lease)
        case .microphone:
            outcome = runMicrophone(lease)
        case .stream:
            setState(.running)
            outcome = runStream(lease)
        }
        switch outcome {
        case .finish(let samples):
            setState(.finishing)
            handoff?.store("processing")
            finalResult(samples, lease)
        case .decoded(let result):
            setState(.finishing)
            handoff?.store("processing")
            sendFinal(result, lease)
        case .cancel(let silently):
            silent = silent || silently
            setState(.canceling)
            handoff?.store("failed", reason: "canceled: the client cancelled the hand-off")
        case .failed(let status, let message):
            fail(status, message)
        }
    }

    /// Sends an error; a hand-off's record says `failed` with the status and sentence.
    private func fail(_ status: ServiceStatus, _ message: String) {
        // The shared storage says it first: a client told of the failure finds it there too.
        handoff?.store("failed", reason: "\(status.rawValue): \(message)")
        send(.error(id, status, message))
        handoff?.log("failed: \(status.rawValue)", state: "failed")
    }

    private enum Outcome {
        case finish([Int16])
        /// Decoded live as the audio came (a hand-off).
        case decoded(HeedCore.RecognitionResult)
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

    /// Records from Heed's microphone for a hand-off: the device is opened, the user is told
    /// that Heed listens, and the endpointer (natural pauses allowed) finds where the speaker
    /// stops. A client that goes away does not stop it.
    private func runMicrophone(_ lease: Recognizers.Lease) -> Outcome {
        guard let handoff else { return .failed(.unavailable, "no microphone was reserved") }
        // The speech is decoded as it comes, so that the text is ready as soon as the speaker
        // stops (docs/MEASUREMENTS.md#dictation); partial results come from the same pass. The
        // decoder is loaded before Heed says it listens: none of the speech waits for it.
        guard var live = PartialResults(lease) else { return .failed(.unavailable, "cannot load a decoder for the microphone") }
        defer { live.stop() }
        let capture: any AudioSource
        do {
            capture = try handoff.openMicrophone()
        } catch {
            return .failed(.unavailable, "Heed's microphone (\(handoff.device)) cannot be opened: \(error.description)")
        }
        handoff.signalListening()
        try? capture.discard(seconds: 0)
        setState(.running)
        handoff.store("recording")
        handoff.log("recording for \(handoff.appID) on \(handoff.device)", state: "recording")
        let seconds = Double(maxSamples) / Double(AudioBuffer.recognitionSampleRate)
        var endpointer = Endpointer(configuration: .dictation(maximumUtterance: seconds))
        var decodedForPartials = 0
        var heardSpeech = false
        // From the speaker's pause (`likelyEnd`) the live pass waits: if the pause ends the
        // dictation, the pass has heard what the endpointer's utterance holds, and not a second
        // of room noise after it (it made words of it: "himself so").
        var paused = false
        let noSpeechTimeout = min(seconds, connection.service.configuration.noSpeechTimeout)
        while true {
            while let input = take(waiting: false) {
                switch input {
                case .cancel(silently: true):
                    // The client went away: the hand-off goes on, for the shared storage.
                    silent = true
                    clientGone = true
                case .cancel: return .cancel(silently: false)
                case .finish:
                    // Stop now: what was said so far.
                    let samples = endpointer.currentSamples
                    return samples.isEmpty ? .failed(.noSpeech, "the hand-off was finished before anything was said") : .finish(samples)
                case .audio: break  // the microphone is the source
                }
            }
            let chunk: [Int16]
            do {
                chunk = try capture.read(maximumFrames: 1024)
            } catch {
                return .failed(.unavailable, "Heed's microphone failed: \(error.description)")
            }
            for event in endpointer.process(chunk) {
                switch event {
                case .speechStarted: heardSpeech = true
                case .likelyEnd: paused = true
                case .speechResumed: paused = false
                case .speechEnded(let utterance) where utterance.ending == .tooShort:
                    // A click or a cough: listen on.
                    live.stop()
                    live = PartialResults(live.recognizer)
                    decodedForPartials = 0
                    paused = false
                case .speechEnded:
                    speechEndedAt = .now
                    do {
                        return .decoded(try live.finish())
                    } catch {
                        return .failed(.unavailable, "decoding failed: \(error)")
                    }
                }
            }
            if endpointer.inSpeech, !paused {
                let samples = endpointer.currentSamples
                if samples.count > decodedForPartials {
                    if let text = live.decode(Array(samples[decodedForPartials...])), partialResults { sendPartial(text) }
                    decodedForPartials = samples.count
                }
            }
            if !heardSpeech, !endpointer.inSpeech, endpointer.position >= noSpeechTimeout {
                return .failed(.noSpeech, "Heed's microphone heard no speech in \(Int(noSpeechTimeout)) seconds")
            }
        }
    }

    private func sendPartial(_ text: String) {
        var message = ServiceMessage(id: id, type: .partial)
        message.isFinal = false
        if kind.isDictation {
            message.transcription = DictationText.format(text)
            message.spokenText = text
        } else {
            message.transcription = text
        }
        send(message)
    }

    private func finalResult(_ samples: [Int16], _ lease: Recognizers.Lease) {
        let result: HeedCore.RecognitionResult
        let started = ContinuousClock.now
        do {
            result = try connection.service.recognizers.finalResult(samples, with: lease)
        } catch {
            fail(.unavailable, "decoding failed: \(error)")
            return
        }
        sendFinal(result, lease, decoding: ContinuousClock.now - started)
    }

    /// - Parameter decoding: how long the final decode took, for the service's log.
    private func sendFinal(_ result: HeedCore.RecognitionResult, _ lease: Recognizers.Lease, decoding: Duration? = nil) {
        var message = ServiceMessage(id: id, type: .final)
        message.isFinal = true
        message.transcription = kind.isDictation ? DictationText.format(result.text) : result.text
        if kind.isDictation { message.spokenText = result.text }
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
        if let handoff {
            message.resultFile = handoff.resultFile.path
            handoff.store("finished", text: message.transcription ?? "", confidence: result.confidence)
        }
        resourcesReturned = true
        connection.service.recognizers.checkIn(lease)
        connection.service.releaseTask()
        send(message)
        if let handoff {
            let milliseconds = speechEndedAt.map { (ContinuousClock.now - $0).milliseconds }
            handoff.log("result sent\(clientGone ? " to the shared storage (the client is gone)" : "")", state: "finished", milliseconds: milliseconds)
        }
        // The service's log says that a result went out, never what was said.
        var event = connection.event("final")
        event.task = id.description
        event.milliseconds = decoding?.milliseconds
        connection.service.emit(event)
    }
}

/// Partial results from the decoder's live search: one every 250 ms of audio once something is
/// heard, the same text again when nothing changed (as Apple's partial results keep coming: a
/// client sees that the task is alive).
package struct PartialResults {
    let recognizer: PocketSphinxRecognizer
    private var pending = 0
    private var started = false

    /// Partial results from a task's decoder for them; `nil` when it cannot be loaded.
    package init?(_ lease: Recognizers.Lease) {
        guard let recognizer = try? lease.liveRecognizer() else { return nil }
        self.recognizer = recognizer
    }

    /// Partial results of a new utterance on the same decoder.
    init(_ recognizer: PocketSphinxRecognizer) {
        self.recognizer = recognizer
    }

    /// Ends the live pass and returns its result (``PocketSphinxRecognizer/finishLiveDecoding()``).
    mutating func finish() throws(RecognizerError) -> HeedCore.RecognitionResult {
        guard started else { throw RecognizerError(.decodeFailed, "nothing was decoded") }
        started = false
        return try recognizer.finishLiveDecoding()
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
        // What is over the interval counts towards the next one: one is due every 250 ms of
        // audio, whatever the chunks' size.
        pending %= RecognitionRun.partialInterval
        let hypothesis = recognizer.liveHypothesis
        return hypothesis.isEmpty ? nil : hypothesis
    }

    /// Ends live decoding.
    package func stop() {
        if started { recognizer.stopLiveDecoding() }
    }
}
