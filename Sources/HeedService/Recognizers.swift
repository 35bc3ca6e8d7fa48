public import Foundation
public import HeedAudio
package import HeedClient
package import HeedIntents
public import HeedSpeech
package import HeedCore
public import HeedState
public import HeedRuntime
public import Logging
import Synchronization

/// What the service recognizes with: the intents grammar, Heed's grammars folder, clients'
/// phrase lists, and the recognizers loaded for them.
///
/// PocketSphinx decoders are single-threaded, so each task checks one out for itself and
/// gives it back when it ends; idle decoders are kept, a few per grammar, for the next task.
public final class Recognizers: Sendable {
    /// How decoders are made and which grammars there are.
    public struct Setup: Sendable {
        /// The intents grammar and its parser; `nil` when the service has no intents.
        public var intents: RecognitionSetup?
        /// The decoder configuration for the intents grammar (with the vocabulary's pronunciations).
        public var intentsConfiguration: PocketSphinxRecognizer.Configuration
        /// The decoder configuration for named grammars and phrase lists.
        public var grammarConfiguration: PocketSphinxRecognizer.Configuration
        /// Where named grammars (`NAME.gram`) are.
        public var grammarsFolder: URL?
        /// Noise suppression of a task's whole audio before the final decode.
        public var denoise: DenoiseMode
        /// The suppressor's settings.
        public var denoiseSettings: NoiseSuppressor.Settings
        /// The decoder configuration of dictation (the language model); `nil`: no dictation.
        public var dictationConfiguration: PocketSphinxRecognizer.Configuration?
        /// The registered vocabulary, whose words dictation adds to the language model.
        public var vocabulary: VocabularySnapshot

        public init(
            intents: RecognitionSetup?, intentsConfiguration: PocketSphinxRecognizer.Configuration,
            grammarConfiguration: PocketSphinxRecognizer.Configuration, grammarsFolder: URL?, denoise: DenoiseMode = .off,
            denoiseSettings: NoiseSuppressor.Settings = .init(), dictationConfiguration: PocketSphinxRecognizer.Configuration? = nil,
            vocabulary: VocabularySnapshot = .empty
        ) {
            self.dictationConfiguration = dictationConfiguration
            self.vocabulary = vocabulary
            self.denoise = denoise
            self.denoiseSettings = denoiseSettings
            self.intents = intents
            self.intentsConfiguration = intentsConfiguration
            self.grammarConfiguration = grammarConfiguration
            self.grammarsFolder = grammarsFolder
        }
    }

    /// The decoders checked out by one task.
    ///
    /// Partial results come from a second decoder of the same grammar, made when a task first
    /// asks for them: a live pass changes the decoder's running cepstral mean, and with it the
    /// whole-utterance result of the next decode (on a fresh decoder, a live pass over a file
    /// made the final decode find nothing). With its own decoder for partials, the final result
    /// is the one `heed recognize` gives, with or without partial results.
    package final class Lease: @unchecked Sendable {
        // Used by one task's thread at a time: handed over through the pool's lock.
        package let recognizer: PocketSphinxRecognizer
        let key: String?
        /// The setup's generation when the decoder was loaded.
        let generation: Int
        package let parser: IntentParser?
        private let grammar: Grammar
        private let configuration: PocketSphinxRecognizer.Configuration
        private let logger: Logger
        private var live: PocketSphinxRecognizer?

        init(
            recognizer: PocketSphinxRecognizer, key: String?, generation: Int, parser: IntentParser?, grammar: Grammar,
            configuration: PocketSphinxRecognizer.Configuration, logger: Logger
        ) {
            self.recognizer = recognizer
            self.key = key
            self.generation = generation
            self.parser = parser
            self.grammar = grammar
            self.configuration = configuration
            self.logger = logger
        }

        /// The decoder for partial results, loaded the first time.
        package func liveRecognizer() throws(RecognizerError) -> PocketSphinxRecognizer {
            if let live { return live }
            let recognizer = try PocketSphinxRecognizer(grammar: grammar, configuration: configuration, logger: logger)
            live = recognizer
            return recognizer
        }
    }

    /// What a task recognizes with.
    package enum Kind: Sendable, Hashable {
        /// A grammar: the intents, a named one, or the client's phrases.
        case grammar(GrammarChoice)
        /// Dictation, with the request's contextual strings.
        case dictation(contextualStrings: [String])

        var isDictation: Bool {
            if case .dictation = self { true } else { false }
        }
    }

    /// Why a grammar cannot be used.
    package struct Refusal: Error {
        package var status: ServiceStatus
        package var message: String
    }

    private struct Pool {
        var setup: Setup
        /// Counts replacements: a decoder of an older setup is not kept.
        var generation = 0
        var idle: [String: [Lease]] = [:]
    }

    private let pool: Mutex<Pool>

    /// The setup new tasks use.
    package var setup: Setup { pool.withLock { $0.setup } }
    private let logger: Logger
    /// Idle decoders kept per grammar.
    private let keep: Int

    /// Creates the pool.
    /// - Parameters:
    ///   - setup: The grammars and decoder configurations.
    ///   - logger: Receives the decoders' diagnostics.
    ///   - idleDecoders: Idle decoders kept per grammar for the next tasks (each holds its
    ///     grammar's search, tens of MB); a task that finds none loads one.
    public init(setup: Setup, logger: Logger, idleDecoders: Int = 2) {
        self.pool = Mutex(Pool(setup: setup))
        self.logger = logger
        self.keep = idleDecoders
    }

    /// Replaces the setup (SIGHUP: intents or vocabulary changed). Idle decoders are freed;
    /// running tasks finish with the decoders they have, which are then freed too.
    public func replace(_ setup: Setup) {
        pool.withLock { pool in
            pool.setup = setup
            pool.generation += 1
            pool.idle = [:]
        }
    }

    /// Checks out a decoder for a grammar, loading one when none is idle.
    /// - Throws: ``Refusal`` for an unknown grammar or words without a pronunciation.
    package func checkOut(_ kind: Kind) throws(Refusal) -> Lease {
        let key = Self.key(kind)
        let (setup, generation, idle) = pool.withLock { pool in
            (pool.setup, pool.generation, key.flatMap { pool.idle[$0]?.popLast() })
        }
        if let idle { return idle }
        let grammar: Grammar
        let configuration: PocketSphinxRecognizer.Configuration
        var parser: IntentParser?
        switch kind {
        case .dictation(let contextualStrings):
            guard let dictation = setup.dictationConfiguration else {
                throw Refusal(status: .unavailable, message: "this service was started without dictation")
            }
            grammar = .dictation(vocabulary: setup.vocabulary, contextualStrings: contextualStrings)
            configuration = dictation
        case .grammar(.intents):
            guard let intents = setup.intents else {
                throw Refusal(status: .unavailable, message: "this service was started without intents; ask for a grammar or phrases")
            }
            grammar = intents.grammar
            configuration = setup.intentsConfiguration
            parser = intents.parser
        case .grammar(.named(let name)):
            grammar = try named(name)
            configuration = setup.grammarConfiguration
        case .grammar(.phrases(let phrases)):
            grammar = try Self.phraseGrammar(phrases, dictionaryPath: setup.grammarConfiguration.dictionaryPath)
            configuration = setup.grammarConfiguration
        }
        do {
            let recognizer = try PocketSphinxRecognizer(grammar: grammar, configuration: configuration, logger: logger)
            return Lease(
                recognizer: recognizer, key: key, generation: generation, parser: parser, grammar: grammar, configuration: configuration,
                logger: logger)
        } catch {
            let status: ServiceStatus = error.code == .grammarInvalid || error.code == .wordsMissing ? .invalidGrammar : .unavailable
            throw Refusal(status: status, message: "cannot load a recognizer: \(error)")
        }
    }

    /// Gives a decoder back; it is kept for the next task of its grammar, or freed.
    package func checkIn(_ lease: Lease) {
        guard let key = lease.key else { return }
        pool.withLock { pool in
            if lease.generation == pool.generation, pool.idle[key, default: []].count < keep { pool.idle[key, default: []].append(lease) }
        }
    }

    /// The final result of a task's whole audio (16 kHz mono): the lease's decoder over all of
    /// it through the noise suppressor as the setup says, as `heed recognize` decodes a file.
    /// - Throws: ``RecognizerError`` when decoding fails.
    package func finalResult(_ samples: [Int16], with lease: Lease) throws(RecognizerError) -> HeedCore.RecognitionResult {
        let setup = setup
        let audio = AudioBuffer(samples: samples, sampleRate: AudioBuffer.recognitionSampleRate)
        return try setup.denoise.hear(audio, with: lease.recognizer, settings: setup.denoiseSettings).result
    }

    /// Decoders of phrase lists, and of dictation with contextual strings, are not kept: each
    /// client's list is its own.
    private static func key(_ kind: Kind) -> String? {
        switch kind {
        case .grammar(.intents): "intents"
        case .grammar(.named(let name)): "grammar:" + name
        case .grammar(.phrases): nil
        case .dictation(let contextualStrings): contextualStrings.isEmpty ? "dictation" : nil
        }
    }

    private func named(_ name: String) throws(Refusal) -> Grammar {
        let available = (try? FileManager.default.contentsOfDirectory(atPath: setup.grammarsFolder?.path ?? ""))?
            .filter { $0.hasSuffix(".gram") }.map { String($0.dropLast(5)) }.sorted() ?? []
        let allowed = name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F }
        guard allowed, !name.isEmpty, available.contains(name), let folder = setup.grammarsFolder else {
            throw Refusal(
                status: .invalidGrammar,
                message: "no grammar '\(name)': give \"intents\", {\"phrases\": [...]} or one of Heed's grammars: "
                    + (available.isEmpty ? "(none installed)" : available.joined(separator: ", ")))
        }
        do {
            return try Grammar.file(folder.appendingPathComponent(name + ".gram").path)
        } catch {
            throw Refusal(status: .invalidGrammar, message: "\(error)")
        }
    }

    /// A JSGF grammar whose sentences are the client's phrases.
    static func phraseGrammar(_ phrases: [String], dictionaryPath: String) throws(Refusal) -> Grammar {
        let sentences = phrases.map(TextNormalizer.words).filter { !$0.isEmpty }
        guard !sentences.isEmpty, sentences.count <= 1000 else {
            throw Refusal(status: .invalidGrammar, message: "'phrases' must hold 1 to 1000 phrases with words")
        }
        let words = Set(sentences.joined())
        for word in words where !word.unicodeScalars.allSatisfy({ CharacterSet.lowercaseLetters.contains($0) || $0 == "'" }) {
            throw Refusal(status: .invalidGrammar, message: "'\(word)' is not a word Heed can recognize: phrases are letters and apostrophes")
        }
        let missing: [String]
        do {
            missing = try PocketSphinxRecognizer.wordsWithoutPronunciation(words.sorted(), dictionaryPath: dictionaryPath, additionalPronunciations: [:])
        } catch {
            throw Refusal(status: .unavailable, message: "\(error)")
        }
        guard missing.isEmpty else {
            throw Refusal(
                status: .invalidGrammar,
                message: "no pronunciation for \(missing.map { "'\($0)'" }.joined(separator: ", ")) in the dictionary; use other words")
        }
        let alternatives = sentences.map { "(" + $0.joined(separator: " ") + ")" }.joined(separator: " | ")
        return Grammar(name: "phrases", jsgf: "#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = \(alternatives);\n")
    }
}
