/// A grammar to recognize with: JSGF text, or a word graph built by Heed.
public struct Grammar: Sendable, Hashable {
    /// What the grammar is written as.
    public enum Source: Sendable, Hashable {
        case jsgf(String)
        case wordGraph(WordGraph)
    }

    /// A name for messages, and how a recognizer that keeps several grammars finds it.
    public var name: String
    /// The grammar itself.
    public let source: Source

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

    /// The word graph, for a grammar made from one.
    public var wordGraph: WordGraph? {
        if case .wordGraph(let graph) = source { graph } else { nil }
    }
}
