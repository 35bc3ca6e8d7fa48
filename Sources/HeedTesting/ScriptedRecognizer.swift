public import HeedCore
import Synchronization

/// A recognizer that hears what a test says it hears: the logic above recognition (the
/// listener's loop, windows, thresholds, dialog turns) without PocketSphinx.
///
/// Each utterance recognized with a grammar gets the next line scripted for that grammar's
/// name, else the next line scripted for any grammar (`ScriptedRecognizer.anyGrammar`), else
/// nothing (an empty result). What it was asked is kept in ``log``, which the test keeps: the
/// recognizer itself is handed to its owner.
public final class ScriptedRecognizer: SpeechRecognizer {
    /// What the recognizer hears in one utterance.
    public struct Line: Sendable, Hashable {
        public var text: String
        public var confidence: Double

        public init(_ text: String, confidence: Double) {
            self.text = text
            self.confidence = confidence
        }
    }

    /// What a scripted recognizer was asked, in order.
    public final class Log: Sendable {
        private let entries = Mutex<[String]>([])

        public init() {}

        /// `recognize GRAMMAR`, `load GRAMMAR`, `activate GRAMMAR`, `live GRAMMAR`, `finish GRAMMAR` entries.
        public var all: [String] { entries.withLock { $0 } }

        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    /// The script key for lines any grammar may take.
    public static let anyGrammar = "*"

    public let log: Log
    public let dictionaryPath = "(scripted)"
    public private(set) var activeGrammar: String
    private var script: [String: [Line]]
    private var grammars: [String: Grammar]
    private var pronunciations: [String: [String]] = [:]
    private let unsayable: Set<String>
    private var live: (samples: Int, active: Bool) = (0, false)

    /// A grammar loaded under `name`, as it was given.
    public func grammar(named name: String) -> Grammar? { grammars[name] }

    /// Creates a recognizer with `grammar` active.
    ///
    /// - Parameters:
    ///   - grammar: the active grammar.
    ///   - script: lines by grammar name, in the order they are heard.
    ///   - unsayable: words it reports it cannot pronounce.
    ///   - log: where it records what it was asked.
    public init(grammar: Grammar, script: [String: [Line]], unsayable: Set<String> = [], log: Log = Log()) {
        self.activeGrammar = grammar.name
        self.grammars = [grammar.name: grammar]
        self.script = script
        self.unsayable = unsayable
        self.log = log
    }

    public func recognize(_ audio: AudioBuffer) throws(RecognizerError) -> RecognitionResult {
        log.append("recognize \(activeGrammar)")
        return result(of: next(), audio: audio)
    }

    /// The point a result heard twice in noise is held to (``HeedCore/RecognitionResult/inNoisePoint``);
    /// `nil`: none, as for a grammar of single words.
    public var inNoisePoint: Double?

    /// One scripted line, as for audio heard once (a script says what was heard, not how often),
    /// held to ``inNoisePoint``.
    public func recognize(_ captured: AudioBuffer, suppressed: AudioBuffer) throws(RecognizerError) -> RecognitionResult {
        var result = try recognize(suppressed)
        result.inNoisePoint = inNoisePoint
        return result
    }

    /// The next scripted line, as the live utterance's result.
    public func finishLiveDecoding() throws(RecognizerError) -> RecognitionResult {
        guard live.active else { throw RecognizerError(.decodeFailed, "no live utterance to finish") }
        log.append("finish \(activeGrammar)")
        let samples = live.samples
        live = (0, false)
        return result(of: next(), audio: AudioBuffer(samples: Array(repeating: 0, count: samples), sampleRate: AudioBuffer.recognitionSampleRate))
    }

    private func result(of line: Line, audio: AudioBuffer) -> RecognitionResult {
        let words = line.text.split(separator: " ")
        let step = words.isEmpty ? 0 : audio.duration / Double(words.count)
        return RecognitionResult(
            text: line.text, score: 0, acousticMargin: 0, confidence: line.confidence, rejected: line.text.isEmpty,
            alternatives: [],
            words: words.enumerated().map { index, word in
                WordSegment(word: String(word), start: Double(index) * step, end: Double(index + 1) * step, confidence: line.confidence)
            },
            durationSeconds: audio.duration, decodeSeconds: 0)
    }

    public func accepts(_ text: String) -> Bool {
        grammars[activeGrammar]?.wordGraph?.accepts(text.split(separator: " ").map(String.init)) ?? false
    }

    public func loadGrammar(_ grammar: Grammar, activate: Bool) throws(RecognizerError) {
        log.append("load \(grammar.name)")
        grammars[grammar.name] = grammar
        if activate { activeGrammar = grammar.name }
    }

    public func activateGrammar(named name: String) throws(RecognizerError) {
        guard grammars[name] != nil else { throw RecognizerError(.grammarInvalid, "no grammar named \(name) is loaded") }
        log.append("activate \(name)")
        activeGrammar = name
    }

    public func wordsWithoutPronunciation(_ words: [String]) throws(RecognizerError) -> [String] {
        words.filter { unsayable.contains($0) && pronunciations[$0] == nil }
    }

    public func addPronunciations(_ pronunciations: [String: [String]]) {
        self.pronunciations.merge(pronunciations) { _, new in new }
    }

    public func startLiveDecoding(after words: [String]) throws(RecognizerError) {
        log.append("live \(activeGrammar)")
        live = (0, true)
    }

    public func decodeLive(_ chunk: [Int16]) throws(RecognizerError) {
        if live.active { live.samples += chunk.count }
    }

    /// The first word of the line the utterance will be heard as, once a quarter second is in.
    public var liveHypothesis: String {
        guard live.active, live.samples >= AudioBuffer.recognitionSampleRate / 4 else { return "" }
        return peek().text.split(separator: " ").first.map(String.init) ?? ""
    }

    /// Never: a scripted utterance ends when the endpointer says.
    public var liveQuietAfterSentence: Double? { nil }

    /// Never: a scripted utterance always holds its words.
    public var liveQuietWithoutWords: Double? { nil }

    /// Seconds of a live utterance during which its words are an unfinished sentence (0: never).
    public var unfinishedSeconds = 0.0

    /// While the live utterance is shorter than ``unfinishedSeconds``.
    public var liveSentenceUnfinished: Bool {
        live.active && Double(live.samples) < unfinishedSeconds * Double(AudioBuffer.recognitionSampleRate)
    }

    public func stopLiveDecoding() { live = (0, false) }

    private func key() -> String? {
        if script[activeGrammar]?.isEmpty == false { return activeGrammar }
        if script[Self.anyGrammar]?.isEmpty == false { return Self.anyGrammar }
        return nil
    }

    private func peek() -> Line { key().flatMap { script[$0]?.first } ?? Line("", confidence: 0) }

    private func next() -> Line {
        guard let key = key(), let line = script[key]?.first else { return Line("", confidence: 0) }
        script[key]?.removeFirst()
        return line
    }
}
