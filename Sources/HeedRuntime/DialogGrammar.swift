public import HeedCore
public import HeedIntents
import HeedSpeech

/// The small grammar one dialog turn is recognized with: only the answers that turn can use.
///
/// A turn's grammar is tiny, so recognition is fast and a stray word is rejected rather than
/// read as a command. "cancel", "never mind", "stop" and "forget it" are in every one.
public enum DialogGrammar {
    static let cancelPhrases = YesOrNo.cancelPhrases
    /// Yes and no as a question is answered (the parser reads them all).
    static let yesOrNoPhrases = SpokenBoolean.answerWords

    /// The grammar for an expected answer.
    ///
    /// - Parameters:
    ///   - expected: what the question wants.
    ///   - catalog: the intents, for the values of a parameter's type.
    ///   - vocabulary: registered terms by type, for parameters of a vocabulary type.
    ///   - openSlots: the vocabulary's open slots as the command grammar already has them
    ///     (`Grammar.openSlots`), so that a turn does not normalise every term again; by
    ///     default made from `vocabulary` (``IntentCatalog/openSlots(_:)``).
    ///   - hasPronunciation: whether the recognizer can say a word; options with other words
    ///     are left to their position ("the second one").
    /// - Returns: the grammar, named after what it recognizes.
    public static func grammar(
        for expected: ExpectedAnswer,
        catalog: IntentCatalog,
        vocabulary: [String: [String]],
        openSlots: [OpenSlot]? = nil,
        hasPronunciation: (String) -> Bool
    ) -> Grammar {
        switch expected {
        case .yesOrNo:
            return Grammar(name: "answer:yesOrNo", wordGraph: WordGraph(phrases: (yesOrNoPhrases + cancelPhrases).map(words)))
        case .choice(let options):
            var phrases = options.map(words).filter { !$0.isEmpty && $0.allSatisfy(hasPronunciation) }
            // As many positions as there are options, in the words the parser reads them in.
            let ordinals = (0..<options.count).map { ParameterValue.ordinal(.position($0 + 1)).spokenWords }
            for ordinal in ordinals.map(words) + [["last"]] {
                for prefix in [[], ["the"]] {
                    phrases.append(prefix + ordinal)
                    phrases.append(prefix + ordinal + ["one"])
                }
            }
            return Grammar(name: "answer:choice", wordGraph: WordGraph(phrases: phrases + cancelPhrases.map(words)))
        case .value(let intent, let parameter):
            let name = "answer:\(intent).\(parameter)"
            guard let answers = catalog.answerCatalog(intent: intent, parameter: parameter) else {
                return Grammar(name: name, wordGraph: WordGraph(phrases: cancelPhrases.map(words)))
            }
            // A large vocabulary is an open slot here too ("Which playlist?" among 10,000).
            let openSlots = openSlots ?? IntentCatalog.openSlots(vocabulary)
            var graph = answers.automaton(vocabulary: vocabulary, openTypes: Set(openSlots.map(\.type))).wordGraph
            graph.addPhrases(cancelPhrases.map(words))
            var grammar = Grammar(name: name, wordGraph: graph)
            let saidTypes = Set(graph.arcs.compactMap { OpenSlot.parse($0.word)?.type })
            grammar.openSlots = openSlots.filter { saidTypes.contains($0.type) }
            return grammar
        }
    }

    private static func words(_ text: String) -> [String] { TextNormalizer.words(text) }
}

extension WordGraph {
    /// This graph with `words` in front, which may also be said alone: the wake phrase, then
    /// optionally a command in the same breath.
    public func prefixed(by words: [String]) -> WordGraph {
        var graph = self
        var state = stateCount
        graph.stateCount += words.count + 1
        graph.start = state
        for word in words {
            graph.arcs.append(Arc(from: state, to: state + 1, word: word))
            state += 1
        }
        graph.finals.insert(state)
        graph.arcs += arcs.filter { $0.from == start }.map { Arc(from: state, to: $0.to, word: $0.word) }
        return graph
    }

    /// A graph that accepts exactly these phrases (each a list of words).
    public init(phrases: [[String]]) {
        self.init(stateCount: 1, start: 0, finals: [], arcs: [])
        addPhrases(phrases)
    }

    /// Adds phrases as chains of new states from the start state to a final state.
    public mutating func addPhrases(_ phrases: [[String]]) {
        let final = stateCount
        stateCount += 1
        finals.insert(final)
        // Each phrase once, in the order given: the same grammar every run.
        var seen: Set<[String]> = []
        for phrase in phrases where !phrase.isEmpty && seen.insert(phrase).inserted {
            var state = start
            for (index, word) in phrase.enumerated() {
                let next: Int
                if index == phrase.count - 1 {
                    next = final
                } else {
                    next = stateCount
                    stateCount += 1
                }
                arcs.append(Arc(from: state, to: next, word: word))
                state = next
            }
        }
    }
}
