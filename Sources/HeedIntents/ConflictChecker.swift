public import HeedCore
/// A phrase that templates of two different intents both accept.
public struct IntentConflict: Sendable, Hashable, CustomStringConvertible {
    /// One side of a conflict: an intent and the template that accepts the phrase.
    public struct Side: Sendable, Hashable {
        /// The intent's name.
        public var intent: String
        /// The template as written.
        public var template: String
        /// Where the template is written.
        public var location: SourceLocation
    }

    /// The side declared first in the catalog.
    public var first: Side
    /// The side declared later.
    public var second: Side
    /// A short phrase both accept (fewest graph steps). A vocabulary slot appears as `{type}`, e.g. `{playlistTitle}`,
    /// since conflicts are checked for every term that may be registered.
    public var example: String

    /// `path:line:column: error: …` at the later template, naming the earlier one.
    public var description: String {
        "\(second.location): error: \"\(example)\" is accepted by both \(second.intent) (\(second.location)) "
            + "and \(first.intent) (\(first.location))"
    }
}

/// Finds conflicts by walking two templates' graphs in step (a product automaton), breadth first,
/// so the example found is short.
enum ConflictChecker {
    static func conflicts(intents: [IntentDefinition], rules: [LoadedRule]) -> [IntentConflict] {
        let table = RuleTable(rules: rules, intents: intents, vocabulary: [:], symbolicVocabulary: true)
        let graph = TokenGraph(intents: intents, rules: table)
        var conflicts: [IntentConflict] = []
        for (firstIndex, first) in graph.entries.enumerated() {
            for second in graph.entries[(firstIndex + 1)...]
            where second.intent != first.intent && !first.firstWords.isDisjoint(with: second.firstWords) {
                guard let example = commonPhrase(graph, first, second) else { continue }
                conflicts.append(
                    IntentConflict(
                        first: side(intents, first),
                        second: side(intents, second),
                        example: example.map { graph.words[Int($0)] }.joined(separator: " ")
                    )
                )
            }
        }
        return conflicts
    }

    private static func side(_ intents: [IntentDefinition], _ entry: TokenGraph.Entry) -> IntentConflict.Side {
        let intent = intents[entry.intent]
        let template = intent.compiledTemplates[entry.template]
        return IntentConflict.Side(intent: intent.name, template: template.text, location: template.location)
    }

    /// A short word sequence both templates accept, or `nil`.
    private static func commonPhrase(_ graph: TokenGraph, _ first: TokenGraph.Entry, _ second: TokenGraph.Entry) -> [Int32]? {
        struct Pair: Hashable {
            var first: Int32
            var second: Int32
        }
        let start = Pair(first: first.start, second: second.start)
        var parents: [Pair: (parent: Pair, word: Int32?)] = [:]
        var queue = [start]
        var visited: Set<Pair> = [start]
        var head = 0

        func enqueue(_ pair: Pair, from parent: Pair, word: Int32?) {
            guard visited.insert(pair).inserted else { return }
            parents[pair] = (parent, word)
            queue.append(pair)
        }

        while head < queue.count {
            let pair = queue[head]
            head += 1
            if pair.first == first.accept && pair.second == second.accept {
                var words: [Int32] = []
                var current = pair
                while let step = parents[current] {
                    if let word = step.word { words.append(word) }
                    current = step.parent
                }
                return words.reversed()
            }
            let firstEdges = graph.edges(from: pair.first)
            let secondEdges = graph.edges(from: pair.second)
            for edge in firstEdges {
                guard case .word(let word) = edge.kind else {
                    enqueue(Pair(first: edge.target, second: pair.second), from: pair, word: nil)
                    continue
                }
                for other in secondEdges where other.kind == .word(word) {
                    enqueue(Pair(first: edge.target, second: other.target), from: pair, word: word)
                }
            }
            for edge in secondEdges {
                if case .word = edge.kind { continue }
                enqueue(Pair(first: pair.first, second: edge.target), from: pair, word: nil)
            }
        }
        return nil
    }
}
