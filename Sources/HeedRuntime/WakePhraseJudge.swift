public import HeedCore
public import HeedIntents
public import HeedSpeech

/// What Heed thinks of a wake phrase before it listens for it.
///
/// A wake phrase is spotted by the recognizer among everything said in the room, so it should
/// be long enough to be rare in talk, and nothing a user says as a command should sound like it.
/// The judge looks at the phrase's pronunciation and at the command grammar; it never refuses a
/// phrase (the user decides), it warns with the reason.
public struct WakePhraseJudgement: Sendable, Hashable {
    /// The phrase, as words.
    public var words: [String]
    /// Its phones, word by word, from the dictionary or guessed.
    public var phones: [[String]]
    /// The words whose pronunciation is guessed (not in the dictionary).
    public var guessedWords: [String]
    /// Why the phrase may wake Heed when nobody meant it, or be missed; empty for a good phrase.
    public var warnings: [String]

    /// The fewest phones a phrase should have: "alexa" and "hey siri" have 6, "ok google" 8.
    public static let minimumPhones = 6

    /// Judges a phrase against the command grammar.
    /// - Parameters:
    ///   - phrase: The wake phrase as the user wrote it.
    ///   - commands: The command grammar's automaton (``IntentCatalog/automaton(vocabulary:)``).
    ///   - pronouncer: Gives the words' phones.
    /// - Returns: The judgement.
    /// - Throws: ``RecognizerError`` when the dictionary cannot be read.
    public static func judge(_ phrase: String, commands: WordAutomaton, pronouncer: Pronouncer) throws(RecognizerError) -> WakePhraseJudgement {
        let words = TextNormalizer.words(phrase)
        let pronunciations = try pronouncer.pronunciations(Set(words))
        let phones = words.map { pronunciations[$0]?.phones ?? [] }
        let guessed = words.filter { pronunciations[$0]?.source != .dictionary }
        var warnings: [String] = []
        let count = phones.joined().count
        if count < minimumPhones {
            warnings.append(
                "it has \(count) phones; a phrase of \(minimumPhones) or more (\"alexa\" and \"hey siri\" have 6) is rarer in talk "
                    + "and heard more surely")
        }
        if words.count == 1 {
            warnings.append("it is one word: talk says single words more often than two together")
        }
        if commands.accepts(words) {
            warnings.append("it is itself a command: saying the command would wake Heed")
        } else if Self.startsSentence(words, in: commands) {
            warnings.append("commands start with it: a command said without the wake phrase could wake Heed")
        }
        let commandWords = Set(commands.words)
        if !words.isEmpty, words.allSatisfy(commandWords.contains) {
            warnings.append("every word of it is a command word, which people say to Heed all the time")
        }
        for word in guessed {
            let sounds = (pronunciations[word]?.phones ?? []).joined(separator: " ")
            warnings.append(
                "\"\(word)\" is not in the dictionary: its pronunciation is guessed (\(sounds.isEmpty ? "none" : sounds)); "
                    + "check it with: heed vocab pronounce \(word)")
        }
        return WakePhraseJudgement(words: words, phones: phones, guessedWords: guessed, warnings: warnings)
    }

    /// Whether some sentence of the automaton begins with `words` (and goes on).
    private static func startsSentence(_ words: [String], in automaton: WordAutomaton) -> Bool {
        var outgoing: [Int: [WordAutomaton.Arc]] = [:]
        for arc in automaton.arcs { outgoing[arc.from, default: []].append(arc) }
        var states: Set<Int> = [automaton.start]
        for word in words {
            states = Set(states.flatMap { outgoing[$0, default: []].filter { $0.word == word }.map(\.to) })
            if states.isEmpty { return false }
        }
        return states.contains { !(outgoing[$0] ?? []).isEmpty }
    }
}
