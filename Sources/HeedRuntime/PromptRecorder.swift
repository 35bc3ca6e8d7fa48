import Foundation
public import HeedAudio
public import HeedCore
public import HeedSpeech
public import Logging

/// The sentences `heed adapt --record` asks the user to read: few, and covering as many of the
/// sounds of the commands as they can.
public enum AdaptationPrompts {
    /// Chooses `count` of `sentences`, greedily: each next one adds the most phones not yet
    /// covered (then the most phone pairs within words), the shorter first on a tie. Sentences
    /// with a word that has no pronunciation are left out.
    ///
    /// - Parameters:
    ///   - sentences: candidate sentences, lower-case words separated by spaces.
    ///   - pronunciations: the phones of each word.
    /// - Returns: The chosen sentences, in the order chosen.
    public static func choose(from sentences: [String], count: Int, pronunciations: [String: [String]]) -> [String] {
        var candidates: [(sentence: String, phones: Set<String>, pairs: Set<String>)] = []
        var seen: Set<String> = []
        for sentence in sentences where seen.insert(sentence).inserted {
            let words = sentence.split(separator: " ").map(String.init)
            let phones = words.compactMap { pronunciations[$0] }
            guard !words.isEmpty, phones.count == words.count else { continue }
            let pairs = phones.flatMap { word in zip(word, word.dropFirst()).map { "\($0) \($1)" } }
            candidates.append((sentence, Set(phones.joined()), Set(pairs)))
        }
        var chosen: [String] = []
        var coveredPhones: Set<String> = []
        var coveredPairs: Set<String> = []
        while chosen.count < count, !candidates.isEmpty {
            let scored = candidates.indices.map { index in
                let candidate = candidates[index]
                let gain = candidate.phones.subtracting(coveredPhones).count * 1000 + candidate.pairs.subtracting(coveredPairs).count
                return (index: index, gain: gain, length: candidate.sentence.count)
            }
            guard let best = scored.min(by: { ($1.gain, $0.length, $0.index) < ($0.gain, $1.length, $1.index) }) else { break }
            let candidate = candidates.remove(at: best.index)
            chosen.append(candidate.sentence)
            coveredPhones.formUnion(candidate.phones)
            coveredPairs.formUnion(candidate.pairs)
        }
        return chosen
    }
}

/// Records the user reading prompts, for `heed adapt --record`: each utterance is found by the
/// endpointer and kept only when the recognizer, listening for the prompts alone, hears the
/// prompt that was asked for with at least the lenient point's confidence.
public final class PromptRecorder {
    /// What happened to one reading.
    public enum Reading: Sendable, Equatable {
        /// Heard as the prompt.
        case accepted(confidence: Double)
        /// Heard as something else, or not confidently: the user is asked again.
        case misread(heard: String, confidence: Double)
    }

    private let source: any AudioSource
    private var endpointer: Endpointer
    private let recognizer: PocketSphinxRecognizer
    private let threshold: Double

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - source: the microphone (or a recording standing in for it).
    ///   - prompts: every prompt that will be asked: the grammar readings are recognized with.
    ///   - configuration: the recognizer's settings (model, dictionary).
    ///   - endpointing: how utterances are found.
    /// - Throws: ``RecognizerError`` when the recognizer cannot be loaded.
    public init(
        source: any AudioSource, prompts: [String], configuration: PocketSphinxRecognizer.Configuration,
        endpointing: Endpointer.Configuration = .standard, logger: Logger
    ) throws(RecognizerError) {
        self.source = source
        endpointer = Endpointer(configuration: endpointing)
        let rule = prompts.map { "(\($0))" }.joined(separator: " | ")
        recognizer = try PocketSphinxRecognizer(
            grammar: Grammar(name: "prompts", jsgf: "#JSGF V1.0;\ngrammar prompts;\npublic <prompt> = \(rule);\n"),
            configuration: configuration, logger: logger)
        threshold = configuration.confidence.lenientPoint
    }

    /// Waits for the next utterance and judges it against `prompt`.
    ///
    /// - Returns: The recording and how it was heard, or `nil` when the source ended.
    /// - Throws: ``AudioError`` from the source, ``RecognizerError`` from the recognizer.
    public func read(_ prompt: String, source location: String) throws -> (recording: AdaptationRecording, reading: Reading)? {
        while true {
            let samples = try source.read(maximumFrames: 1600)
            let events = samples.isEmpty ? endpointer.finish() : endpointer.process(samples)
            for case .speechEnded(let utterance) in events where utterance.ending == .complete || utterance.ending == .streamEnded {
                let result = try recognizer.recognize(utterance.audio)
                let reading: Reading =
                    result.text == prompt && result.confidence >= threshold
                    ? .accepted(confidence: result.confidence) : .misread(heard: result.text, confidence: result.confidence)
                let words = prompt.split(separator: " ").map(String.init)
                return (AdaptationRecording(audio: utterance.audio, words: words, source: location), reading)
            }
            if samples.isEmpty { return nil }
        }
    }
}
