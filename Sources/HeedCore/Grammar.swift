/// A grammar to recognize with: JSGF text, a word graph built by Heed, or open-vocabulary
/// dictation with the recognizer's language model.
public struct Grammar: Sendable, Hashable {
    /// What the grammar is written as.
    public enum Source: Sendable, Hashable {
        case jsgf(String)
        case wordGraph(WordGraph)
        /// The recognizer's n-gram language model, with these words added to it.
        case languageModel(words: [String])
    }

    /// A name for messages, and how a recognizer that keeps several grammars finds it.
    public var name: String
    /// The grammar itself.
    public let source: Source
    /// Vocabulary types the word graph says as a loop of phones (``OpenSlot``), with their terms.
    public var openSlots: [OpenSlot] = []
    /// Whether the recognizer puts its loop for other speech beside this word graph's sentences
    /// (HeedSpeech's `OtherSpeechLoop`): a command grammar that listens to a room.
    public var hearsOtherSpeech = false
    /// What its sentences mean, for a grammar whose different sentences can mean the same
    /// command (intents, through their parser): two hearings in noise that differ only in words
    /// that do not change the command agree (``RecognitionResult/heardTwice(suppressed:captured:meaning:)``).
    /// `nil`: sentences agree only word for word.
    public var meaning: SentenceMeaning? = nil

    /// Creates a grammar from JSGF text; all public rules are accepted.
    public init(name: String, jsgf: String) {
        self.name = name
        self.source = .jsgf(jsgf)
    }

    /// Creates a grammar from a word graph.
    public init(name: String, wordGraph: WordGraph) {
        self.name = name
        self.source = .wordGraph(wordGraph)
    }

    /// Open-vocabulary dictation: the recognizer's n-gram language model over its whole
    /// dictionary, with `words` added (the user's vocabulary, a request's contextual strings).
    /// A word the dictionary lacks is pronounced as the recognizer's additional pronunciations
    /// say, else as guessed; words that neither can pronounce are left out.
    /// - Parameter words: Lower-case words.
    public static func dictation(words: [String] = []) -> Grammar {
        Grammar(name: "dictation", source: .languageModel(words: Array(Set(words)).sorted()))
    }

    private init(name: String, source: Source) {
        self.name = name
        self.source = source
    }

    /// Whether this is open-vocabulary dictation rather than a grammar.
    public var isDictation: Bool {
        if case .languageModel = source { true } else { false }
    }

    /// The word graph, for a grammar made from one.
    public var wordGraph: WordGraph? {
        if case .wordGraph(let graph) = source { graph } else { nil }
    }
}

/// What a grammar's sentence means: the same key for sentences that say the same command
/// ("can i get a latte" and "can i get latte"), `nil` for one that says none. Made from the
/// sentences' own source (the intents' parser), so grammars are equal without it.
public struct SentenceMeaning: Sendable, Hashable {
    private let key: @Sendable (String) -> String?

    /// A meaning given by `key`: sentences with the same non-`nil` key mean the same.
    public init(_ key: @escaping @Sendable (String) -> String?) { self.key = key }

    /// Whether two sentences say the same command: the same words, or the same key.
    public func same(_ first: String, _ second: String) -> Bool {
        first == second || key(first).map { $0 == key(second) } ?? false
    }

    public static func == (lhs: SentenceMeaning, rhs: SentenceMeaning) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
