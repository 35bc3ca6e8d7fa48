public import HeedCore
public import HeedIntents
public import HeedSpeech
public import HeedState
public import Logging

/// Intents and the registered vocabulary, made into what recognizing them takes: the grammar
/// (checked against the pronunciation dictionary) and the parser of what it hears. Every
/// command builds its recognition from one, and the listener builds a new one when the
/// vocabulary or what is going on changes.
public struct RecognitionSetup: Sendable {
    /// The intents the grammar holds (for the listener: those of the current context).
    public let catalog: IntentCatalog
    /// The registered vocabulary the grammar and the parser were made with.
    public let vocabulary: VocabularySnapshot
    /// The compiled grammar, named `intents`.
    public let grammar: Grammar
    /// Turns a recognized sentence into an intent.
    public let parser: IntentParser

    /// Compiles the grammar and the parser.
    ///
    /// - Throws: ``SourceError`` at the first template, rule or term with a word the dictionary
    ///   cannot pronounce (all such words listed), ``RecognizerError`` when the dictionary
    ///   cannot be read.
    public init(
        catalog: IntentCatalog, vocabulary: VocabularySnapshot = .empty,
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath
    ) throws {
        self.catalog = catalog
        self.vocabulary = vocabulary
        let parser = catalog.parser(vocabulary: vocabulary.terms)
        grammar = try catalog.recognitionGrammar(
            vocabulary: vocabulary.terms, dictionaryPath: dictionaryPath, additionalPronunciations: vocabulary.additionalPronunciations
        ).meaning(by: parser)
        self.parser = parser
    }

    /// A setup whose words are not checked against a pronunciation dictionary: for a recognizer
    /// that needs none (HeedTesting's scripted recognizer).
    public init(unchecked catalog: IntentCatalog, vocabulary: VocabularySnapshot = .empty) {
        self.catalog = catalog
        self.vocabulary = vocabulary
        let parser = catalog.parser(vocabulary: vocabulary.terms)
        grammar = IntentCatalog.commandGrammar(catalog.automaton(vocabulary: vocabulary.terms)).meaning(by: parser)
        self.parser = parser
    }

    /// The decoder configuration for this grammar: `configuration` with the vocabulary's
    /// pronunciations.
    public func configuration(_ configuration: PocketSphinxRecognizer.Configuration) -> PocketSphinxRecognizer.Configuration {
        var configuration = configuration
        configuration.additionalPronunciations = vocabulary.additionalPronunciations
        return configuration
    }

    /// Loads a recognizer whose active grammar is this one.
    public func makeRecognizer(configuration: PocketSphinxRecognizer.Configuration, logger: Logger) throws -> PocketSphinxRecognizer {
        try PocketSphinxRecognizer(grammar: grammar, configuration: self.configuration(configuration), logger: logger)
    }
}

extension Grammar {
    /// This grammar with its sentences meaning what `parser` makes of them: the intent and
    /// its spoken values, so that "give me a mocha" and "get me mocha" are the same command.
    func meaning(by parser: IntentParser) -> Grammar {
        var grammar = self
        grammar.meaning = SentenceMeaning { parser.parse($0).first?.jsonText }
        return grammar
    }
}

extension IntentCatalog {
    /// The recognizer's grammar of the intents' word automaton: a command grammar, decoded beside
    /// the recognizer's loop for other speech.
    static func commandGrammar(_ automaton: WordAutomaton, openSlots: [OpenSlot] = []) -> Grammar {
        var grammar = Grammar(name: "intents", wordGraph: automaton.wordGraph)
        grammar.openSlots = openSlots
        grammar.hearsOtherSpeech = true
        return grammar
    }

    /// The recognizer's grammar for these intents, checked against the pronunciation dictionary:
    /// their minimal word automaton, loaded as a finite-state grammar without null transitions.
    ///
    /// - Parameters:
    ///   - vocabulary: registered terms by vocabulary type.
    ///   - dictionaryPath: the CMU-format dictionary the recognizer will use.
    ///   - additionalPronunciations: pronunciations of words the dictionary lacks (vocabulary).
    /// - Returns: the compiled JSGF grammar.
    /// - Throws: ``SourceError`` at the first template, rule or term that uses a word without
    ///   a pronunciation (all such words are listed), or ``RecognizerError`` when the
    ///   dictionary cannot be read.
    func recognitionGrammar(
        vocabulary: [String: [String]] = [:],
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath,
        additionalPronunciations: [String: [String]] = [:]
    ) throws -> Grammar {
        let openSlots = Self.openSlots(vocabulary)
        let automaton = automaton(vocabulary: vocabulary, openTypes: Set(openSlots.map(\.type)))
        // An open slot's terms come from the vocabulary store, which registers only terms it can
        // pronounce (the recognizer checks them again when it loads them).
        let missing = try PocketSphinxRecognizer.wordsWithoutPronunciation(
            automaton.words.filter { OpenSlot.parse($0) == nil },
            dictionaryPath: dictionaryPath,
            additionalPronunciations: additionalPronunciations
        )
        guard !missing.isEmpty else { return Self.commandGrammar(automaton, openSlots: openSlots) }
        // Only to say where each word comes from: the JSGF compiler keeps the words' locations.
        let compiled = grammar(vocabulary: vocabulary)
        if let first = missing.compactMap({ word in compiled.words[word].map { (word, $0) } }).min(by: { $0.1 < $1.1 }) {
            let all = missing.map { word in compiled.words[word].map { "'\(word)' (\($0))" } ?? "'\(word)'" }
            throw SourceError(
                .reference,
                "no pronunciation for '\(first.0)' in \(dictionaryPath); words without one: \(all.joined(separator: ", "))",
                at: first.1
            )
        }
        throw SourceError(
            .reference, "no pronunciation in \(dictionaryPath) for: \(missing.joined(separator: ", "))",
            at: SourceLocation(path: dictionaryPath, line: 1, column: 1))
    }

    /// The vocabulary types with at least ``OpenSlot/minimumTerms`` terms, as open slots.
    public static func openSlots(_ vocabulary: [String: [String]]) -> [OpenSlot] {
        vocabulary.filter { $0.value.count >= OpenSlot.minimumTerms }.sorted { $0.key < $1.key }.map { type, terms in
            var seen: Set<[String]> = []
            return OpenSlot(type: type, terms: terms.map(TextNormalizer.words).filter { !$0.isEmpty && seen.insert($0).inserted })
        }
    }
}
