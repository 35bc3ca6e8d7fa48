/// What a recognizer heard in one utterance.
public struct RecognitionResult: Sendable, Hashable, Codable {
    /// The best hypothesis, lower-case words separated by single spaces; empty when nothing was heard.
    public var text: String
    /// The decoder's Viterbi path score of `text`: PocketSphinx's scaled log units (base
    /// 1.0001), unnormalised, higher is better, comparable only within one utterance.
    public var score: Double
    /// Mean acoustic score per word frame of `text` minus that of a free phone loop over
    /// the same audio, or of the frame's best Gaussian without the phone loop (decoder log
    /// units); near 0 or above when the grammar path fits the sound. Confidence comes from it.
    public var acousticMargin: Double
    /// Estimated probability in [0, 1] that `text` is what was said; see ``ConfidenceModel``.
    public var confidence: Double
    /// Whether the audio is judged not to be a command of the grammar.
    public var rejected: Bool
    /// Other hypotheses the grammar allows, best first, without `text`.
    public var alternatives: [Alternative]
    /// The words of `text` with their times.
    public var words: [WordSegment]
    /// Length of the audio in seconds.
    public var durationSeconds: Double
    /// CPU seconds spent decoding, on every thread that decoded (a helper decoder's too).
    public var decodeSeconds: Double
    /// The measurements `confidence` was computed from, by name (recognizer-specific; for
    /// calibration and diagnosis). `nil` when the recognizer gives none.
    public var confidenceFeatures: [String: Double]? = nil
    /// The threshold a result heard twice in noise (``SpeechRecognizer/recognize(_:suppressed:)``)
    /// is held to where a stricter one is asked for: the two hearings agreeing is evidence the
    /// confidence alone lacks (docs/RECOGNITION.md, "Operating points"). `nil` for a result heard
    /// once, or whose grammar has no lower point in noise.
    public var inNoisePoint: Double? = nil

    /// The result judged at another rejection threshold: rejected when nothing was heard or its
    /// confidence is below `threshold` (below ``inNoisePoint`` if that is lower).
    public func judged(at threshold: Double) -> RecognitionResult {
        var result = self
        result.rejected = text.isEmpty || confidence < min(threshold, inNoisePoint ?? threshold)
        return result
    }

    /// A confidence as people read it: two decimals, cut rather than rounded, so that a result
    /// shown at a threshold's value was not rejected at it (0.8699 reads 0.86, not 0.87).
    public static func shown(confidence: Double) -> String {
        // The small margin keeps a confidence of exactly 0.87 from reading 0.86 after the product.
        let value = confidence.isNaN ? 0 : min(1, max(0, confidence))
        let hundredths = Int((value * 100 + 1e-9).rounded(.down))
        return "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
    }

    /// One result from two hearings of the same audio in noise, with the noise suppressor and
    /// without it. When they hear the same command — the same words, or words the grammar's
    /// `meaning` says mean the same ("get me a mocha", "get me mocha") — the suppressed hearing
    /// stands. When they do not, the words of the more confident one stand at the lower of the
    /// two confidences: a command is heard alike either way far more often than other talk is.
    /// The CPU is both hearings'. Not judged: the caller judges it at its threshold.
    public static func heardTwice(
        suppressed: RecognitionResult, captured: RecognitionResult, meaning: SentenceMeaning? = nil
    ) -> RecognitionResult {
        var result = suppressed
        let agree = meaning?.same(captured.text, suppressed.text) ?? (captured.text == suppressed.text)
        if !agree {
            result = captured.confidence > suppressed.confidence ? captured : suppressed
            result.confidence = min(captured.confidence, suppressed.confidence)
        }
        result.decodeSeconds = suppressed.decodeSeconds + captured.decodeSeconds
        return result
    }

    /// Creates a result.
    public init(
        text: String,
        score: Double,
        acousticMargin: Double,
        confidence: Double,
        rejected: Bool,
        alternatives: [Alternative],
        words: [WordSegment],
        durationSeconds: Double,
        decodeSeconds: Double
    ) {
        self.text = text
        self.score = score
        self.acousticMargin = acousticMargin
        self.confidence = confidence
        self.rejected = rejected
        self.alternatives = alternatives
        self.words = words
        self.durationSeconds = durationSeconds
        self.decodeSeconds = decodeSeconds
    }
}

/// An n-best alternative hypothesis.
public struct Alternative: Sendable, Hashable, Codable {
    /// The words.
    public var text: String
    /// The lattice path score in PocketSphinx's log units. Lattice rescoring differs from the
    /// Viterbi pass, so compare it with other alternatives, not with ``RecognitionResult/score``.
    public var score: Double

    /// Creates an alternative.
    public init(text: String, score: Double) {
        self.text = text
        self.score = score
    }
}

/// One recognized word with its time span.
public struct WordSegment: Sendable, Hashable, Codable {
    /// The word, without pronunciation-variant suffix.
    public var word: String
    /// Start, in seconds from the start of the audio.
    public var start: Double
    /// End, in seconds from the start of the audio.
    public var end: Double
    /// Estimated probability in [0, 1] that this word is right.
    public var confidence: Double

    /// Creates a word segment.
    public init(word: String, start: Double, end: Double, confidence: Double) {
        self.word = word
        self.start = start
        self.end = end
        self.confidence = confidence
    }
}

/// Turns audio into a ``RecognitionResult`` with grammars it keeps by name.
///
/// What the listener drives: one utterance at a time (``recognize(_:)``), partial results
/// while someone speaks (live decoding), a grammar for each dialog turn, and pronunciations
/// for words registered while it runs. Not `Sendable`: a recognizer has one owner, which
/// drives it from one thread. ``PocketSphinxRecognizer`` is Heed's; tests script their own.
public protocol SpeechRecognizer: AnyObject {
    /// Recognizes one complete utterance with the active grammar.
    ///
    /// - Parameter audio: mono audio at ``AudioBuffer/recognitionSampleRate``.
    /// - Returns: the result, possibly empty or rejected.
    /// - Throws: ``RecognizerError`` when the decoder fails.
    func recognize(_ audio: AudioBuffer) throws(RecognizerError) -> RecognitionResult

    /// Recognizes one complete utterance heard in noise, as captured and as the noise
    /// suppressor left it (``RecognitionResult/heardTwice(suppressed:captured:meaning:)``), judged at the
    /// recognizer's threshold or, for a grammar that has one, the lower point in noise
    /// (``RecognitionResult/inNoisePoint``).
    ///
    /// - Parameters:
    ///   - captured: the utterance as captured, mono at ``AudioBuffer/recognitionSampleRate``.
    ///   - suppressed: the same samples after the noise suppressor.
    func recognize(_ captured: AudioBuffer, suppressed: AudioBuffer) throws(RecognizerError) -> RecognitionResult

    /// Whether `text` (lower-case words separated by spaces) is a sentence of the active grammar.
    func accepts(_ text: String) -> Bool

    // MARK: Grammars

    /// The name of the grammar utterances are recognized with.
    var activeGrammar: String { get }

    /// Compiles a grammar and keeps it under its name, replacing one of that name.
    ///
    /// - Parameters:
    ///   - grammar: the grammar.
    ///   - activate: whether utterances are recognized with it from now on (a grammar that
    ///     replaces the active one is active anyway).
    /// - Throws: ``RecognizerError`` when it does not compile or a word has no pronunciation;
    ///   the grammars loaded before stay as they were.
    func loadGrammar(_ grammar: Grammar, activate: Bool) throws(RecognizerError)

    /// Recognizes utterances with a grammar loaded before, from now on.
    ///
    /// - Throws: ``RecognizerError`` `.grammarInvalid` when no grammar has that name.
    func activateGrammar(named name: String) throws(RecognizerError)

    // MARK: Pronunciations

    /// The pronunciation dictionary words are looked up in, for messages about missing words.
    var dictionaryPath: String { get }

    /// The words of `words` this recognizer cannot say.
    func wordsWithoutPronunciation(_ words: [String]) throws(RecognizerError) -> [String]

    /// Pronunciations (word → phones) for words of grammars loaded from now on; they win over
    /// the dictionary's.
    func addPronunciations(_ pronunciations: [String: [String]])

    // MARK: Live decoding

    /// Starts decoding an utterance as it is spoken, with the active grammar: partial results
    /// while it comes, and a final result from ``finishLiveDecoding()`` soon after its end.
    /// `words` were heard before a pause that the new audio comes after: the sentence checks
    /// (``liveQuietAfterSentence``, ``liveSentenceUnfinished``) take them with the new words as
    /// well as the new words alone, for a speaker who went on after the pause as for one who
    /// began anew (an empty list: the utterance's start).
    func startLiveDecoding(after words: [String]) throws(RecognizerError)

    /// Feeds the next chunk of the live utterance (samples at ``AudioBuffer/recognitionSampleRate``).
    func decodeLive(_ chunk: [Int16]) throws(RecognizerError)

    /// The live utterance's best words so far, possibly empty.
    var liveHypothesis: String { get }

    /// Seconds the live pass has heard only silence and noise since its best words became a whole
    /// sentence of the active grammar; `nil` while they are not one, or speech goes on.
    var liveQuietAfterSentence: Double? { get }

    /// Seconds the live pass has heard only silence and noise, from the utterance's first sample
    /// to the frame just decoded; `nil` once its best path holds a word, or speech the grammar
    /// cannot say (a hiss held longer than a phone lasts is noise, not speech).
    var liveQuietWithoutWords: Double? { get }

    /// Whether the live pass's best words so far begin a sentence of the active grammar without
    /// being one ("set a timer for"): the speaker has more to say.
    var liveSentenceUnfinished: Bool { get }

    /// Ends live decoding and returns the utterance's result, judged as ``recognize(_:)``
    /// judges one (only the work after the search remains to do).
    ///
    /// - Throws: ``RecognizerError`` when no live utterance runs or the decoder fails.
    func finishLiveDecoding() throws(RecognizerError) -> RecognitionResult

    /// Ends live decoding, discarding its result.
    func stopLiveDecoding()
}

extension SpeechRecognizer {
    /// Starts decoding an utterance as it is spoken, from its start.
    public func startLiveDecoding() throws(RecognizerError) {
        try startLiveDecoding(after: [])
    }

    /// Compiles a grammar and keeps it under its name without making it active.
    public func loadGrammar(_ grammar: Grammar) throws(RecognizerError) {
        try loadGrammar(grammar, activate: false)
    }
}

/// Turns text into speech.
public protocol SpeechSynthesizer: Sendable {
    /// Speaks `text`.
    ///
    /// - Returns: mono audio at the synthesizer's own rate.
    /// - Throws: when the engine cannot speak it.
    func synthesize(_ text: String) throws -> AudioBuffer
}

/// A grammar as a word graph: states, and arcs that each say one word.
///
/// The recognizer loads it as a finite-state grammar directly, with no null transitions,
/// which PocketSphinx decodes faster and more reliably than nested JSGF rules.
public struct WordGraph: Sendable, Hashable {
    /// One transition.
    public struct Arc: Sendable, Hashable {
        public var from: Int
        public var to: Int
        public var word: String

        /// Creates an arc.
        public init(from: Int, to: Int, word: String) {
            self.from = from
            self.to = to
            self.word = word
        }
    }

    /// States are `0..<stateCount`.
    public var stateCount: Int
    /// Where every sentence starts.
    public var start: Int
    /// Where sentences may end.
    public var finals: Set<Int>
    /// The transitions.
    public var arcs: [Arc]

    /// Creates a graph.
    public init(stateCount: Int, start: Int, finals: Set<Int>, arcs: [Arc]) {
        self.stateCount = stateCount
        self.start = start
        self.finals = finals
        self.arcs = arcs
    }

    /// Whether the graph says exactly these words, start to a final state.
    public func accepts(_ words: [String]) -> Bool {
        var states: Set<Int> = [start]
        for word in words {
            states = Set(arcs.lazy.filter { states.contains($0.from) && $0.word == word }.map(\.to))
            if states.isEmpty { return false }
        }
        return !states.isDisjoint(with: finals)
    }
}
