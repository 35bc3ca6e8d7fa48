public import HeedCore
public import HeedIntents
public import HeedSpeech

extension IntentCatalog {
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
    public func recognitionGrammar(
        vocabulary: [String: [String]] = [:],
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath,
        additionalPronunciations: [String: [String]] = [:]
    ) throws -> Grammar {
        let automaton = automaton(vocabulary: vocabulary)
        let missing = try PocketSphinxRecognizer.wordsWithoutPronunciation(
            automaton.words,
            dictionaryPath: dictionaryPath,
            additionalPronunciations: additionalPronunciations
        )
        guard !missing.isEmpty else { return Grammar(name: "intents", wordGraph: automaton.wordGraph) }
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
}

