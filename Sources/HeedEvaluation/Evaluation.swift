public import HeedAudio
public import HeedCore
public import HeedIntents
import Foundation
import Synchronization

/// Accuracy, rejection, speed and memory of a recognizer over a labelled corpus.
public struct EvaluationReport: Sendable, Codable {
    /// One recording's outcome.
    public struct Item: Sendable, Codable {
        public var file: String
        public var expected: String?
        public var text: String
        public var confidence: Double
        public var acousticMargin: Double
        public var rejected: Bool
        /// Whether the expected transcript is a sentence of the grammar (`nil`: no transcript).
        public var inGrammar: Bool?
        public var latencyMs: Double
        /// The intent parsed from `text` (none when rejected), with `--intents`.
        public var intent: String? = nil
        /// Its parameter values as label strings.
        public var parameters: [String: String]? = nil
        /// Whether the intent and every labelled slot are right (rows with an intent label).
        public var intentCorrect: Bool? = nil
        /// Whether the recording is a command to accept or speech to reject; `nil` when the
        /// row says neither (see ``Evaluation/role(of:inGrammar:)``).
        public var role: Role? = nil
        /// For a positive: whether `text` is right, accepted or not: with intents, whether it
        /// parses to the transcript's intent and values, else to the intent label; without,
        /// whether it is the transcript. `nil` when the row has neither.
        public var right: Bool? = nil
        /// Seconds of audio.
        public var durationSeconds: Double = 0
        /// The recording's estimated signal-to-noise ratio in dB, as recognized (noise mixed in).
        public var snrDecibels: Double? = nil
        /// What the confidence was computed from (``RecognitionResult/confidenceFeatures``).
        public var features: [String: Double]? = nil
        /// Whether the recording was suppressed (`--denoise`): then heard twice, as mixed and
        /// suppressed, where the grammar has a point in noise. `nil` when not suppressed.
        public var denoised: Bool? = nil
        /// The lower threshold it is held to, heard twice (``RecognitionResult/inNoisePoint``);
        /// `nil` when heard once.
        public var inNoisePoint: Double? = nil
    }

    /// What a recording is for in the rejection measurement.
    public enum Role: String, Sendable, Codable {
        /// A command: it should be accepted, and heard right.
        case positive
        /// Not a command of the grammar: it should be rejected.
        case negative
    }

    /// A recording whose outcome is wrong, or that could not be read.
    public struct Failure: Sendable, Codable {
        public enum Kind: String, Sendable, Codable {
            /// In-grammar speech heard as other words.
            case misrecognized
            /// In-grammar speech heard right but rejected.
            case falseReject
            /// Out-of-grammar speech accepted as a command.
            case falseAccept
            /// The audio could not be read or decoded.
            case unreadable
            /// The intent or a labelled slot is wrong, or there is no intent.
            case intentMismatch
        }
        public var kind: Kind
        public var file: String
        public var line: Int
        public var expected: String?
        public var heard: String?
        public var confidence: Double?
        public var message: String?
    }

    public var manifest: String
    public var utterances: Int
    /// Rows whose transcript the grammar accepts.
    public var inGrammarUtterances: Int
    /// Rows whose transcript the grammar cannot produce: they should be rejected.
    public var outOfGrammarUtterances: Int
    /// In-grammar rows heard exactly right (rejected or not).
    public var sentenceAccuracy: Double?
    /// Word error rate over in-grammar rows.
    public var wer: Double?
    /// In-grammar rows rejected, as a fraction of in-grammar rows.
    public var falseRejectRate: Double?
    /// Out-of-grammar rows accepted, as a fraction of out-of-grammar rows.
    public var falseAcceptRate: Double?
    /// Rows labelled with an intent.
    public var intentUtterances: Int? = nil
    /// Rows whose intent and every labelled slot are right; a rejected result has no intent
    /// (the Picovoice benchmark's rule: extra slots are not penalised).
    public var intentAccuracy: Double? = nil
    /// The same, counting rejected results' parses too.
    public var intentAccuracyIgnoringRejection: Double? = nil
    /// Wrong or missing values per labelled slot.
    public var slotErrors: [String: Int]? = nil
    /// The noise condition, when noise was mixed in.
    public var noise: String? = nil
    /// Mean confidence of right results, wrong in-grammar results and out-of-grammar results.
    public var meanConfidence: ConfidenceSummary
    /// Decode CPU seconds over audio seconds.
    public var rtf: Double
    public var audioSeconds: Double
    public var p50LatencyMs: Double
    public var p95LatencyMs: Double
    public var maxLatencyMs: Double
    public var loadSeconds: Double
    public var peakRSSMegabytes: Double
    /// Acceptance of positives and false accepts on negatives; `nil` when the manifest has neither.
    public var rejection: RejectionReport? = nil
    public var errors: [Failure]
    public var results: [Item]

    /// Mean confidences by outcome; `nil` where there is no such result.
    public struct ConfidenceSummary: Sendable, Codable {
        public var correct: Double?
        public var wrong: Double?
        public var outOfGrammar: Double?
    }
}

/// Runs a recognizer over every recording of a manifest.
public struct Evaluation: Sendable {
    /// Background noise mixed into every recording.
    public struct NoiseCondition: Sendable {
        /// The mixer holding the noise recording.
        public var mixer: NoiseMixer
        /// The signal-to-noise ratio in dB.
        public var snr: Double
        /// Names the noise in the report.
        public var name: String

        /// Creates a condition.
        public init(mixer: NoiseMixer, snr: Double, name: String) {
            self.mixer = mixer
            self.snr = snr
            self.name = name
        }

        /// `audio` with the noise mixed in, from an offset seeded by the recording's path as the
        /// manifest writes it: the same recording gets the same noise in every command.
        public func apply(to audio: AudioBuffer, recording path: String) -> AudioBuffer {
            mixer.mix(audio, snr: snr, seed: path.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 })
        }
    }

    private let manifest: CorpusManifest
    private let intents: IntentParser?
    private let noise: NoiseCondition?
    private let allNegative: Bool
    private let threshold: Double?
    private let lenientThreshold: Double?
    private let curveThresholds: [Double]?
    private let endpointing: Endpointer.Configuration?
    private let live: Bool
    private let denoising: (mode: DenoiseMode, settings: NoiseSuppressor.Settings)

    /// Creates an evaluation of `manifest`.
    ///
    /// - Parameters:
    ///   - manifest: the labelled recordings.
    ///   - intents: parses each result into an intent, scored against `intent_slots_json`.
    ///   - noise: mixed into every recording before recognition.
    ///   - allNegative: every row is speech to reject, whatever its labels.
    ///   - threshold: the recognizer's rejection threshold, named in the report.
    ///   - lenientThreshold: also measure acceptance and false accepts at this (lenient) point.
    ///   - curveThresholds: also measure acceptance and false accepts at these thresholds.
    ///   - endpointing: recognize what the listener's endpointer cuts out of each recording
    ///     (its longest utterance), instead of the whole recording.
    ///   - live: decode each recording as it would stream in, a chunk at a time
    ///     (``SpeechRecognizer/startLiveDecoding()``), instead of as one whole utterance.
    ///   - denoising: when to pass each recording (after the noise is mixed in) through the noise suppressor.
    public init(
        manifest: CorpusManifest,
        intents: IntentParser? = nil,
        noise: NoiseCondition? = nil,
        allNegative: Bool = false,
        threshold: Double? = nil,
        lenientThreshold: Double? = nil,
        curveThresholds: [Double]? = nil,
        endpointing: Endpointer.Configuration? = nil,
        live: Bool = false,
        denoising: (mode: DenoiseMode, settings: NoiseSuppressor.Settings) = (.off, .init())
    ) {
        self.endpointing = endpointing
        self.live = live
        self.denoising = denoising
        self.manifest = manifest
        self.intents = intents
        self.noise = noise
        self.allNegative = allNegative
        self.threshold = threshold
        self.lenientThreshold = lenientThreshold
        self.curveThresholds = curveThresholds
    }

    /// A recording decoded as a stream: 20 ms chunks, then the live pass's result, and when the
    /// last chunk had been decoded: a stream's chunks come as the speaker talks, so what it waits
    /// for is the time from there to the result.
    static func decodeLive(_ audio: AudioBuffer, with recognizer: some SpeechRecognizer) throws(RecognizerError)
        -> (result: RecognitionResult, lastChunkDecoded: ContinuousClock.Instant)
    {
        // Another rate gets the whole-utterance path's error.
        guard audio.sampleRate == AudioBuffer.recognitionSampleRate else { return (try recognizer.recognize(audio), .now) }
        let chunk = AudioBuffer.recognitionSampleRate / 50
        try recognizer.startLiveDecoding()
        for start in stride(from: 0, to: audio.samples.count, by: chunk) {
            try recognizer.decodeLive(Array(audio.samples[start..<min(audio.samples.count, start + chunk)]))
        }
        let lastChunkDecoded = ContinuousClock.now
        return (try recognizer.finishLiveDecoding(), lastChunkDecoded)
    }

    /// The longest utterance the endpointer finds in a recording, fed to it in chunks as the
    /// listener reads a device, as a cut of that recording (or of another of the same length);
    /// 0.1 s of silence when it finds none.
    static func longestUtterance(in audio: AudioBuffer, _ configuration: Endpointer.Configuration) -> (AudioBuffer) -> AudioBuffer {
        var endpointer = Endpointer(configuration: configuration)
        var utterances: [Endpointer.Utterance] = []
        var offset = 0
        while offset <= audio.samples.count {
            let end = min(audio.samples.count, offset + 1024)
            let events = end == offset ? endpointer.finish() : endpointer.process(Array(audio.samples[offset..<end]))
            // What the listener would recognize: not clicks, not cut-off talk.
            for case .speechEnded(let utterance) in events where utterance.ending == .complete || utterance.ending == .streamEnded {
                utterances.append(utterance)
            }
            if end == offset { break }
            offset = end
        }
        guard let longest = utterances.max(by: { $0.samples.count < $1.samples.count }) else {
            return { AudioBuffer(samples: [Int16](repeating: 0, count: 1600), sampleRate: $0.sampleRate) }
        }
        let start = min(audio.samples.count, Int((longest.start * Double(audio.sampleRate)).rounded()))
        let end = min(audio.samples.count, start + longest.samples.count)
        return { AudioBuffer(samples: Array($0.samples[start..<end]), sampleRate: $0.sampleRate) }
    }

    /// Whether a row is a command or speech to reject.
    ///
    /// The `expect` column wins; then a transcript is a positive when the grammar can
    /// produce it and a negative when it cannot; then a row with an intent label is a
    /// positive. Other rows have no role.
    public static func role(of entry: CorpusManifest.Entry, inGrammar: Bool?) -> EvaluationReport.Role? {
        switch entry.expectation {
        case .accept: return .positive
        case .reject: return .negative
        case nil: break
        }
        if let inGrammar { return inGrammar ? .positive : .negative }
        return IntentLabel(json: entry.labels) == nil ? nil : .positive
    }

    /// What one recording gave.
    private struct Outcome: Sendable {
        var item: EvaluationReport.Item?
        var failures: [EvaluationReport.Failure] = []
        var decodeSeconds = 0.0
        var audioSeconds = 0.0
        var ignoringRejection: Bool?
        var wrongSlots: [String] = []
    }

    /// Recognizes each recording and scores the results, with one recognizer.
    ///
    /// - Parameters:
    ///   - recognizer: the recognizer, loaded with the grammar under test.
    ///   - loadSeconds: how long loading the recognizer took, for the report.
    ///   - progress: called before each recording with its 1-based index, the count and its path.
    /// - Returns: the report; unreadable recordings are listed in its errors, not thrown.
    /// - Throws: ``RecognizerError`` when the decoder itself fails.
    public func run(
        recognizer: inout some SpeechRecognizer,
        loadSeconds: Double,
        progress: (Int, Int, String) -> Void = { _, _, _ in }
    ) throws(RecognizerError) -> EvaluationReport {
        var outcomes: [Outcome] = []
        for (index, entry) in manifest.entries.enumerated() {
            progress(index + 1, manifest.entries.count, entry.relativePath)
            outcomes.append(try evaluate(entry, with: &recognizer))
        }
        return report(outcomes, loadSeconds: loadSeconds)
    }

    /// Recognizes each recording and scores the results with `workers` recognizers at once, each
    /// on a thread of its own (PocketSphinx decoders are single-threaded: one per thread). The
    /// report is the one ``run(recognizer:loadSeconds:progress:)`` gives, in manifest order; the
    /// real-time factor is decoding time over audio time, as with one recognizer.
    ///
    /// - Parameters:
    ///   - workers: how many recognizers decode at once.
    ///   - makeRecognizer: makes one recognizer; called once on each worker's thread.
    ///   - progress: called after each recording with the number done, the count and its path.
    /// - Returns: the report.
    /// - Throws: what `makeRecognizer` throws, or ``RecognizerError`` when a decoder fails.
    public func run<Recognizer: SpeechRecognizer & SendableMetatype>(
        workers: Int,
        makeRecognizer: @escaping @Sendable () throws -> Recognizer,
        progress: @escaping @Sendable (Int, Int, String) -> Void = { _, _, _ in }
    ) throws -> EvaluationReport {
        let entries = manifest.entries
        let state = Mutex<(next: Int, done: Int, outcomes: [Outcome?], error: (any Error)?, loadSeconds: Double)>(
            (0, 0, Array(repeating: nil, count: entries.count), nil, 0))
        let group = DispatchGroup()
        let evaluation = self
        for _ in 0..<max(1, min(workers, entries.count)) {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    let started = ContinuousClock.now
                    var recognizer = try makeRecognizer()
                    let load = (ContinuousClock.now - started).milliseconds / 1000
                    state.withLock { $0.loadSeconds = max($0.loadSeconds, load) }
                    while true {
                        let index = state.withLock { state -> Int? in
                            guard state.error == nil, state.next < entries.count else { return nil }
                            defer { state.next += 1 }
                            return state.next
                        }
                        guard let index else { return }
                        let outcome = try evaluation.evaluate(entries[index], with: &recognizer)
                        let done = state.withLock { state -> Int in
                            state.outcomes[index] = outcome
                            state.done += 1
                            return state.done
                        }
                        progress(done, entries.count, entries[index].relativePath)
                    }
                } catch {
                    state.withLock { if $0.error == nil { $0.error = error } }
                }
            }
            thread.name = "heed-eval"
            thread.start()
        }
        group.wait()
        let (outcomes, error, loadSeconds) = state.withLock { ($0.outcomes, $0.error, $0.loadSeconds) }
        if let error { throw error }
        return report(outcomes.compactMap { $0 }, loadSeconds: loadSeconds)
    }

    /// Reads, recognizes and scores one recording.
    private func evaluate(_ entry: CorpusManifest.Entry, with recognizer: inout some SpeechRecognizer) throws(RecognizerError) -> Outcome {
        var outcome = Outcome()
        var audio: AudioBuffer
        var suppressed: AudioBuffer?
        // The recording's own length: the hours of speech a false accept is counted against.
        var recordingSeconds = 0.0
        var snr: Double?
        do {
            audio = try AudioFile.read(entry.audioPath)
            recordingSeconds = Double(audio.samples.count) / Double(audio.sampleRate)
            if let noise { audio = noise.apply(to: audio, recording: entry.relativePath) }
            snr = SignalToNoise.estimate(audio.samples, sampleRate: audio.sampleRate)
            if denoising.mode.applies(toSNR: snr) { suppressed = NoiseSuppressor.denoise(audio, settings: denoising.settings) }
            if let endpointing {
                // As the listener: its endpointer hears the captured audio, the decode takes the
                // suppressor's output over the same stretch.
                let span = Self.longestUtterance(in: audio, endpointing)
                audio = span(audio)
                suppressed = suppressed.map(span)
            }
        } catch {
            outcome.failures.append(.init(kind: .unreadable, file: entry.relativePath, line: entry.line, message: error.description))
            return outcome
        }
        var started = ContinuousClock.now
        let result: RecognitionResult
        if live {
            (result, started) = try Self.decodeLive(suppressed ?? audio, with: recognizer)
        } else if let suppressed {
            result = try recognizer.recognize(audio, suppressed: suppressed)
        } else {
            result = try recognizer.recognize(audio)
        }
        let latency = (ContinuousClock.now - started).milliseconds
        outcome.decodeSeconds = result.decodeSeconds
        outcome.audioSeconds = result.durationSeconds
        let inGrammar = entry.transcript.map { recognizer.accepts($0) }
        let role = allNegative ? .negative : Self.role(of: entry, inGrammar: inGrammar)
        var item = EvaluationReport.Item(
            file: entry.relativePath,
            expected: entry.transcript,
            text: result.text,
            confidence: result.confidence,
            acousticMargin: result.acousticMargin,
            rejected: result.rejected,
            inGrammar: inGrammar,
            latencyMs: latency
        )
        item.role = role
        item.durationSeconds = recordingSeconds
        item.snrDecibels = snr
        item.features = result.confidenceFeatures
        item.denoised = suppressed != nil ? true : nil
        item.inNoisePoint = result.inNoisePoint
        if role == .positive, let expected = entry.transcript { item.right = result.text == expected }
        if let failure = Self.failure(entry: entry, result: result, inGrammar: inGrammar, role: role) {
            outcome.failures.append(failure)
        }
        if let intents, role != .negative {
            let match = intents.parse(result.text).first
            if role == .positive, let expected = entry.transcript, let wanted = intents.parse(expected).first {
                // A command is understood when its intent and values are ("pause it" for "pause").
                item.right = match == wanted
            }
            item.intent = result.rejected ? nil : match?.intent
            item.parameters = result.rejected ? nil : match.map { Self.labelStrings($0.parameters) }
            if let label = IntentLabel(json: entry.labels) {
                item.intentCorrect = label.matches(match, rejected: result.rejected)
                outcome.ignoringRejection = label.matches(match, rejected: false)
                if role == .positive, entry.transcript == nil { item.right = label.matches(match, rejected: false) }
                outcome.wrongSlots = label.wrongSlots(match, rejected: result.rejected)
                if item.intentCorrect == false {
                    let heard = result.rejected ? "rejected: \"\(result.text)\"" : match.map { Self.describe($0) } ?? "no intent in \"\(result.text)\""
                    outcome.failures.append(.init(kind: .intentMismatch, file: entry.relativePath, line: entry.line, expected: label.description, heard: heard, confidence: result.confidence))
                }
            }
        }
        outcome.item = item
        return outcome
    }

    /// The report over every recording's outcome, in manifest order.
    private func report(_ outcomes: [Outcome], loadSeconds: Double) -> EvaluationReport {
        let items = outcomes.compactMap(\.item)
        var slotErrors: [String: Int] = [:]
        for slot in outcomes.flatMap(\.wrongSlots) { slotErrors[slot, default: 0] += 1 }
        let ignoringRejection = outcomes.compactMap(\.ignoringRejection)
        var report = makeReport(
            items: items, failures: outcomes.flatMap(\.failures), decodeSeconds: outcomes.reduce(0) { $0 + $1.decodeSeconds },
            audioSeconds: outcomes.reduce(0) { $0 + $1.audioSeconds }, loadSeconds: loadSeconds)
        if intents != nil {
            let labelled = items.compactMap(\.intentCorrect)
            report.intentUtterances = labelled.count
            report.intentAccuracy = ratio(labelled.filter { $0 }.count, labelled.count)
            report.intentAccuracyIgnoringRejection = ratio(ignoringRejection.filter { $0 }.count, ignoringRejection.count)
            report.slotErrors = slotErrors
        }
        report.noise = noise.map { "\($0.name) at \($0.snr) dB SNR" }
        let rejectionOutcomes = items.compactMap { item in
            item.role.map {
                RejectionReport.Outcome(
                    role: $0, right: item.right ?? true, heard: !item.text.isEmpty, rejected: item.rejected, confidence: item.confidence,
                    inNoisePoint: item.inNoisePoint, seconds: item.durationSeconds)
            }
        }
        if !rejectionOutcomes.isEmpty {
            report.rejection = RejectionReport(
                outcomes: rejectionOutcomes, threshold: threshold, lenientThreshold: lenientThreshold, curveThresholds: curveThresholds ?? [])
        }
        return report
    }

    /// Parameter values as the corpus labels write them: text as text, numbers as numerals.
    static func labelStrings(_ parameters: [String: ParameterValue]) -> [String: String] {
        parameters.mapValues { value in
            switch value {
            case .enumeration(let text), .vocabulary(let text), .phrase(let text): text
            default: value.jsonText
            }
        }
    }

    private static func describe(_ match: IntentMatch) -> String {
        let slots = labelStrings(match.parameters).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ([match.intent] + slots).joined(separator: " ")
    }

    private static func failure(entry: CorpusManifest.Entry, result: RecognitionResult, inGrammar: Bool?, role: EvaluationReport.Role?) -> EvaluationReport.Failure? {
        if role == .negative, !result.rejected, inGrammar != false {
            // Marked as speech to reject, with no transcript or one the grammar could produce.
            return .init(kind: .falseAccept, file: entry.relativePath, line: entry.line, expected: entry.transcript, heard: result.text, confidence: result.confidence)
        }
        guard let expected = entry.transcript, let inGrammar else { return nil }
        let kind: EvaluationReport.Failure.Kind
        switch (inGrammar, result.text == expected, result.rejected) {
        case (true, false, _): kind = .misrecognized
        case (true, true, true): kind = .falseReject
        case (false, _, false): kind = .falseAccept
        default: return nil
        }
        return .init(kind: kind, file: entry.relativePath, line: entry.line, expected: expected, heard: result.text, confidence: result.confidence)
    }

    private func makeReport(
        items: [EvaluationReport.Item],
        failures: [EvaluationReport.Failure],
        decodeSeconds: Double,
        audioSeconds: Double,
        loadSeconds: Double
    ) -> EvaluationReport {
        let inGrammar = items.filter { $0.inGrammar == true }
        let outOfGrammar = items.filter { $0.inGrammar == false }
        let correct = inGrammar.filter { $0.text == $0.expected }
        let wrong = inGrammar.filter { $0.text != $0.expected }
        let referenceWords = inGrammar.reduce(0) { $0 + ($1.expected?.split(separator: " ").count ?? 0) }
        let wordErrors = inGrammar.reduce(0) { $0 + Transcript.wordErrors(reference: $1.expected ?? "", hypothesis: $1.text) }
        let latencies = items.map(\.latencyMs).sorted()
        return EvaluationReport(
            manifest: manifest.path,
            utterances: manifest.entries.count,
            inGrammarUtterances: inGrammar.count,
            outOfGrammarUtterances: outOfGrammar.count,
            sentenceAccuracy: ratio(correct.count, inGrammar.count),
            wer: ratio(wordErrors, referenceWords),
            falseRejectRate: ratio(inGrammar.filter(\.rejected).count, inGrammar.count),
            falseAcceptRate: ratio(outOfGrammar.filter { !$0.rejected }.count, outOfGrammar.count),
            meanConfidence: .init(
                correct: mean(correct.map(\.confidence)),
                wrong: mean(wrong.map(\.confidence)),
                outOfGrammar: mean(outOfGrammar.map(\.confidence))
            ),
            rtf: audioSeconds > 0 ? decodeSeconds / audioSeconds : 0,
            audioSeconds: audioSeconds,
            p50LatencyMs: percentile(latencies, 0.50),
            p95LatencyMs: percentile(latencies, 0.95),
            maxLatencyMs: latencies.last ?? 0,
            loadSeconds: loadSeconds,
            peakRSSMegabytes: peakResidentMegabytes(),
            errors: failures,
            results: items
        )
    }
}

/// How many commands are accepted and how much other speech is let through, at the
/// operating threshold and, optionally, along a curve of thresholds.
///
/// Acceptance is positives heard right and accepted over all positives (a positive with
/// no transcript or intent label counts as right); false accepts are negatives accepted,
/// per hour of negative audio. On the curve a result is accepted when it has words and its
/// confidence is at least the threshold (or its lower point in noise, heard twice), which is
/// how ``RecognitionResult/judged(at:)`` rejects.
public struct RejectionReport: Sendable, Codable, Hashable {
    /// One result, as far as rejection is concerned.
    public struct Outcome: Sendable, Hashable {
        public var role: EvaluationReport.Role
        /// For a positive, whether the words (or intent) are right, accepted or not.
        public var right: Bool
        /// Whether any words were heard.
        public var heard: Bool
        public var rejected: Bool
        public var confidence: Double
        /// The lower threshold a result heard twice in noise is held to (``RecognitionResult/inNoisePoint``).
        public var inNoisePoint: Double?
        /// Seconds of audio.
        public var seconds: Double

        /// Creates an outcome.
        public init(
            role: EvaluationReport.Role, right: Bool, heard: Bool, rejected: Bool, confidence: Double, inNoisePoint: Double? = nil, seconds: Double
        ) {
            self.role = role
            self.right = right
            self.heard = heard
            self.rejected = rejected
            self.confidence = confidence
            self.inNoisePoint = inNoisePoint
            self.seconds = seconds
        }

        /// Whether it is accepted at `threshold`, as ``RecognitionResult/judged(at:)`` judges.
        func accepted(at threshold: Double) -> Bool {
            heard && confidence >= min(threshold, inNoisePoint ?? threshold)
        }
    }

    /// The counts at one threshold.
    public struct Point: Sendable, Codable, Hashable {
        /// The rejection threshold; `nil` at the operating point of a recognizer whose threshold is not known.
        public var threshold: Double?
        /// Positives heard right and accepted.
        public var acceptedRight: Int
        /// Positives accepted, right or not.
        public var accepted: Int
        /// Negatives accepted.
        public var falseAccepts: Int
        /// `acceptedRight` over all positives.
        public var acceptance: Double?
        /// `acceptedRight` over the positives heard right: what rejection alone throws away.
        public var acceptanceOfHeardRight: Double?
        /// `accepted` over all positives.
        public var acceptanceIgnoringRight: Double?
        /// `falseAccepts` over the hours of negative audio.
        public var falseAcceptsPerHour: Double?
    }

    public var positives: Int
    /// Positives heard right, accepted or not: the most that acceptance can reach.
    public var positivesRight: Int
    public var negatives: Int
    /// Seconds of negative audio: the denominator of false accepts per hour.
    public var negativeSeconds: Double
    /// As the recognizer decided.
    public var operatingPoint: Point
    /// At the lenient point (windows, chosen recordings), when one was given.
    public var lenientPoint: Point?
    /// Empty unless thresholds were asked for.
    public var curve: [Point]

    /// Counts `outcomes` at the recognizer's own decisions, at `lenientThreshold` and at each of `curveThresholds`.
    public init(outcomes: [Outcome], threshold: Double?, lenientThreshold: Double? = nil, curveThresholds: [Double] = []) {
        let positives = outcomes.filter { $0.role == .positive }
        let negatives = outcomes.filter { $0.role == .negative }
        self.positives = positives.count
        self.positivesRight = positives.filter(\.right).count
        self.negatives = negatives.count
        self.negativeSeconds = negatives.reduce(0) { $0 + $1.seconds }
        let hours = negativeSeconds / 3600
        func point(_ threshold: Double?, _ accepted: (Outcome) -> Bool) -> Point {
            let acceptedPositives = positives.filter(accepted)
            let right = acceptedPositives.filter(\.right).count
            let falseAccepts = negatives.filter(accepted).count
            return Point(
                threshold: threshold,
                acceptedRight: right,
                accepted: acceptedPositives.count,
                falseAccepts: falseAccepts,
                acceptance: ratio(right, positives.count),
                acceptanceOfHeardRight: ratio(right, positives.filter(\.right).count),
                acceptanceIgnoringRight: ratio(acceptedPositives.count, positives.count),
                falseAcceptsPerHour: hours > 0 ? Double(falseAccepts) / hours : nil
            )
        }
        operatingPoint = point(threshold) { !$0.rejected }
        lenientPoint = lenientThreshold.map { threshold in point(threshold) { $0.accepted(at: threshold) } }
        curve = curveThresholds.map { threshold in point(threshold) { $0.accepted(at: threshold) } }
    }

    /// Thresholds 0.05, 0.10, … 0.95.
    public static let standardThresholds = (1...19).map { Double($0) / 20 }
}

private func ratio(_ part: Int, _ whole: Int) -> Double? {
    whole == 0 ? nil : Double(part) / Double(whole)
}

private func mean(_ values: [Double]) -> Double? {
    values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
}

/// The nearest-rank percentile of sorted values.
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count, max(1, rank)) - 1]
}

/// The process's peak resident set size so far, in megabytes (`getrusage`'s `ru_maxrss`).
public func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}
