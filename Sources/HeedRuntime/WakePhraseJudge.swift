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

/// Finds the wake phrase at the start of an utterance: `heed listen --activation wake` and the
/// Wyoming door's `detect` both spot it this way.
///
/// The utterance is recognized with the command grammar prefixed by the phrase (the commands
/// around it keep the phrase's words from being stretched over a command said in the same
/// breath); when it starts with the phrase, the audio up to the phrase's end is recognized again
/// with a grammar of the phrase alone, which gives the calibrated confidence of a whole utterance.
public struct WakePhraseSpotter: Sendable {
    /// The phrase's words.
    public let words: [String]
    /// The confidence (0–1) the phrase must reach.
    public let threshold: Double

    static let wakeGrammar = "wake"
    static let phraseGrammar = "wake:phrase"

    /// The threshold when none is given: lower hears the phrase more readily, and false wakes too.
    public static let defaultThreshold = 0.5

    /// A spotter for a phrase.
    public init(phrase: String, threshold: Double = defaultThreshold) {
        words = TextNormalizer.words(phrase)
        self.threshold = threshold
    }

    /// What one utterance held.
    public struct Spotting: Sendable {
        /// The utterance recognized with the phrase-prefixed command grammar.
        public var spotted: RecognitionResult
        /// The phrase's confidence; 0 when the utterance does not start with it.
        public var confidence: Double
        /// Where the phrase ends in the utterance (seconds), when it starts with it.
        public var phraseEnd: Double?
        /// Whether the phrase was heard: it starts the utterance with at least the threshold.
        public var woke: Bool
    }

    /// Loads the spotter's grammars into a recognizer, leaving its active grammar as it was.
    /// Words of the phrase the dictionary lacks ("mycroft") are pronounced as espeak-ng guesses.
    /// - Parameters:
    ///   - recognizer: The recognizer that will spot.
    ///   - commands: The command grammar; it must be a word graph.
    /// - Throws: ``RecognizerError`` when the grammar is no word graph or a word has no pronunciation.
    public func load(into recognizer: any SpeechRecognizer, commands: Grammar) throws(RecognizerError) {
        guard let graph = commands.wordGraph else {
            throw RecognizerError(.grammarInvalid, "the command grammar is not a word graph; a wake phrase needs one")
        }
        let unknown = try recognizer.wordsWithoutPronunciation(words)
        var guesses: [String: [String]] = [:]
        for word in unknown {
            let phones = GraphemeToPhoneme.guess(word)
            guard !phones.isEmpty else { throw RecognizerError(.wordsMissing, "the wake phrase word \"\(word)\" has no pronunciation") }
            guesses[word] = [phones.joined(separator: " ")]
        }
        recognizer.addPronunciations(guesses)
        var wake = Grammar(name: Self.wakeGrammar, wordGraph: graph.prefixed(by: words))
        // A command said in the same breath names a registered title the way the commands do.
        wake.openSlots = commands.openSlots
        // Other talk goes into the recognizer's loop rather than onto the phrase and a command.
        wake.hearsOtherSpeech = commands.hearsOtherSpeech
        try recognizer.loadGrammar(wake)
        try recognizer.loadGrammar(Grammar(name: Self.phraseGrammar, wordGraph: WordGraph(phrases: [words])))
    }

    /// Spots the phrase at the start of an utterance (16 kHz), then activates `grammar` again.
    /// - Parameters:
    ///   - utterance: The utterance's audio.
    ///   - recognizer: A recognizer the spotter's grammars were loaded into.
    ///   - grammar: The grammar to leave active afterwards.
    /// - Returns: What was spotted.
    /// - Throws: ``RecognizerError`` when decoding fails.
    public func spot(_ utterance: AudioBuffer, with recognizer: any SpeechRecognizer, thenActivate grammar: String) throws(RecognizerError)
        -> Spotting
    {
        try recognizer.activateGrammar(named: Self.wakeGrammar)
        let spotted = try recognizer.recognize(utterance)
        let wakeWords = spotted.words.prefix(words.count)
        var spotting = Spotting(spotted: spotted, confidence: 0, phraseEnd: nil, woke: false)
        if wakeWords.map(\.word) == words, let last = wakeWords.last {
            let end = min(utterance.samples.count, Int((last.end + 0.1) * Double(utterance.sampleRate)))
            try recognizer.activateGrammar(named: Self.phraseGrammar)
            spotting.confidence = try recognizer.recognize(AudioBuffer(samples: Array(utterance.samples[..<end]), sampleRate: utterance.sampleRate))
                .confidence
            spotting.phraseEnd = last.end
            spotting.woke = spotting.confidence >= threshold
        }
        try recognizer.activateGrammar(named: grammar)
        return spotting
    }
}
