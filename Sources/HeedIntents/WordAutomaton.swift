public import HeedCore
import Synchronization

/// Every sentence a grammar accepts, as a compact automaton over words: the form a recognizer loads
/// directly as a finite-state grammar (sphinxbase `fsg_model_init`/`fsg_model_trans_add`), without
/// the null transitions and rule inlining of `jsgf_build_fsg`.
///
/// The automaton is built from the same ``TokenGraph`` the text parser walks, so it accepts what the
/// parser accepts, with these differences:
/// - The empty sentence is never accepted (the parser rejects empty text too).
/// - An `integer` parameter with `minimum` or `maximum` whose range holds at most
///   ``rangeValueLimit`` integers accepts only the spoken forms of those integers (as the parser
///   does after decoding). Other ranges, and ranges of `number` parameters, are not narrowed: the
///   automaton accepts every spoken number and the parser rejects the out-of-range ones.
/// - The parser rejects a path that opens the same parameter twice (a template that can say one
///   parameter in two places); the automaton does not track parameters.
///
/// The automaton has no null (epsilon) arcs. It is deterministic (no state has two arcs with the
/// same word) and minimal, unless determinizing would pass ``determinizedStateLimit`` states: then it
/// is the nondeterministic automaton without null arcs, and ``isDeterministic`` is `false`.
/// State `start` is never final. States are numbered breadth-first from `start` = 0 and arcs are
/// sorted by state, then word.
///
/// A recognizer FSG has one final state; ``withSingleFinalState()`` gives that form.
public struct WordAutomaton: Sendable, Hashable {
    /// The recognizer's form: the same states and arcs.
    public var wordGraph: WordGraph { WordGraph(stateCount: stateCount, start: start, finals: finals, arcs: arcs) }

    /// A transition that consumes one word: the recognizer's word-graph arc.
    public typealias Arc = WordGraph.Arc

    /// The number of states, `0..<stateCount`.
    public var stateCount: Int
    /// The initial state; never final.
    public var start: Int
    /// The accepting states.
    public var finals: Set<Int>
    /// Every transition; none is a null transition.
    public var arcs: [Arc]
    /// The distinct words of ``arcs``, sorted.
    public var words: [String]
    /// Whether no state has two arcs with the same word; `false` only after the state-limit fallback
    /// or ``withSingleFinalState()``.
    public var isDeterministic: Bool

    /// The most states subset construction may create; past it the automaton stays nondeterministic.
    public static let determinizedStateLimit = 250_000
    /// The most integers a `minimum`…`maximum` range may hold for the automaton to spell them out.
    public static let rangeValueLimit = 1_000

    init(stateCount: Int, start: Int, finals: Set<Int>, arcs: [Arc], isDeterministic: Bool) {
        self.stateCount = stateCount
        self.start = start
        self.finals = finals
        self.arcs = arcs
        self.words = Array(Set(arcs.map(\.word))).sorted()
        self.isDeterministic = isDeterministic
    }

    /// Whether the automaton accepts a sentence.
    ///
    /// To check many sentences, ``Acceptor`` indexes the arcs once.
    /// - Parameter words: Lower-case words, as ``TextNormalizer/words(_:)`` makes them.
    /// - Returns: `true` when some path from `start` reads exactly these words and ends in a final state.
    public func accepts(_ words: [String]) -> Bool { Acceptor(self).accepts(words) }

    /// The same language with exactly one final state (none when nothing is accepted), and still no null arcs.
    ///
    /// sphinxbase's FSG has a single final state. Every arc into another final state is duplicated
    /// to end in the one final state that has no outgoing arcs (added when there is none), and the
    /// other states stop being final. The result is generally not deterministic (two arcs with the
    /// same word leave a state), which FSG search allows. It adds at most one state, and one arc per
    /// arc that enters a final state with outgoing arcs; a minimal deterministic automaton has at
    /// most one final state without outgoing arcs, so nothing else changes. When ``finals`` already
    /// has one state, the automaton is returned as it is.
    /// - Returns: An automaton whose ``finals`` has at most one state.
    public func withSingleFinalState() -> WordAutomaton {
        guard finals.count > 1 else { return self }
        var outgoing = [Int](repeating: 0, count: stateCount)
        for arc in arcs { outgoing[arc.from] += 1 }
        let final = finals.filter { outgoing[$0] == 0 }.min() ?? stateCount
        var newArcs = Set(arcs)
        for arc in arcs where finals.contains(arc.to) && arc.to != final {
            newArcs.insert(Arc(from: arc.from, to: final, word: arc.word))
        }
        let result = WordAutomaton(
            stateCount: max(stateCount, final + 1),
            start: start,
            finals: [final],
            arcs: Array(newArcs),
            isDeterministic: false
        )
        return result.trimmed()
    }

    /// Drops states that are not on a path from `start` to a final state, and renumbers breadth-first.
    func trimmed() -> WordAutomaton {
        var outgoing = [[Arc]](repeating: [], count: stateCount)
        var incoming = [[Int]](repeating: [], count: stateCount)
        for arc in arcs {
            outgoing[arc.from].append(arc)
            incoming[arc.to].append(arc.from)
        }
        var live = [Bool](repeating: false, count: stateCount)
        var stack = Array(finals)
        for state in stack { live[state] = true }
        while let state = stack.popLast() {
            for source in incoming[state] where !live[source] {
                live[source] = true
                stack.append(source)
            }
        }
        var number = [Int](repeating: -1, count: stateCount)
        var order = [start]
        number[start] = 0
        var position = 0
        var newArcs: [Arc] = []
        while position < order.count {
            let state = order[position]
            position += 1
            for arc in outgoing[state].sorted(by: { ($0.word, $0.to) < ($1.word, $1.to) }) where live[arc.to] {
                if number[arc.to] < 0 {
                    number[arc.to] = order.count
                    order.append(arc.to)
                }
                newArcs.append(Arc(from: number[state], to: number[arc.to], word: arc.word))
            }
        }
        return WordAutomaton(
            stateCount: order.count,
            start: 0,
            finals: Set(finals.compactMap { number[$0] >= 0 ? number[$0] : nil }),
            arcs: newArcs,
            isDeterministic: isDeterministic
        )
    }
}

extension WordAutomaton {
    /// Checks sentences against an automaton whose arcs are indexed once.
    struct Acceptor {
        private let next: [[String: [Int]]]
        private let start: Int
        private let finals: Set<Int>

        init(_ automaton: WordAutomaton) {
            var next = [[String: [Int]]](repeating: [:], count: automaton.stateCount)
            for arc in automaton.arcs { next[arc.from][arc.word, default: []].append(arc.to) }
            self.next = next
            start = automaton.start
            finals = automaton.finals
        }

        /// Whether the automaton accepts exactly these words.
        func accepts(_ words: [String]) -> Bool {
            var states: Set<Int> = [start]
            for word in words {
                var following: Set<Int> = []
                for state in states { following.formUnion(next[state][word] ?? []) }
                if following.isEmpty { return false }
                states = following
            }
            return !states.isDisjoint(with: finals)
        }
    }
}

extension IntentCatalog {
    /// Compiles every sentence the catalog's grammar accepts into a compact word automaton for the recognizer.
    ///
    /// It accepts the sentences ``grammar(vocabulary:)`` and ``parser(vocabulary:)`` accept, built from the
    /// same rule table and token graph; see ``WordAutomaton`` for the few differences (integer ranges are
    /// spelled out, the empty sentence is left out). Load it as the recognizer's FSG instead of the JSGF text.
    /// - Parameters:
    ///   - vocabulary: Registered terms by vocabulary type, as for ``grammar(vocabulary:)``.
    ///   - openTypes: Vocabulary types to say as a loop of phones instead of their terms (``OpenSlot``).
    /// - Returns: The minimal deterministic automaton, or the nondeterministic one without null arcs when
    ///   determinizing passes ``WordAutomaton/determinizedStateLimit`` states.
    ///
    /// The terms of open types are not in it: made again with only those changed, the catalog's
    /// last automaton is given back.
    public func automaton(vocabulary: [String: [String]] = [:], openTypes: Set<String> = []) -> WordAutomaton {
        let closedVocabulary = vocabulary.filter { !openTypes.contains($0.key) }
        if let made = lastAutomaton.made.withLock({ $0 }), made.openTypes == openTypes, made.closedVocabulary == closedVocabulary {
            return made.automaton
        }
        let automaton = makeAutomaton(vocabulary: closedVocabulary, openTypes: openTypes)
        lastAutomaton.made.withLock { $0 = AutomatonOfLastUse.Made(closedVocabulary: closedVocabulary, openTypes: openTypes, automaton: automaton) }
        return automaton
    }

    private func makeAutomaton(vocabulary: [String: [String]], openTypes: Set<String>) -> WordAutomaton {
        var table = RuleTable(rules: rules, intents: intents, vocabulary: vocabulary, symbolicVocabulary: false, openTypes: openTypes)
        let ranges = IntegerRanges(intents: intents, rules: table)
        for (name, expansion) in ranges.rules { table.define(name, as: expansion) }
        let graph = TokenGraph(intents: intents, rules: table) { parameter, intent in
            ranges.rule(for: parameter, of: intent) ?? RuleTable.slotRule(for: parameter, of: intent.name)
        }
        return AutomatonBuilder(graph: graph).build()
    }

    /// Compiles the public rules of a standalone JSGF grammar file into a word automaton.
    ///
    /// The file is read as a rule file (see ``load(intents:grammars:)``): its `<rule>` references are its
    /// own rules or the built-in `heed_…` rules, and `import` is not supported. Tags `{...}` and weights
    /// are ignored. The automaton accepts the union of the public rules; the empty sentence is left out.
    /// - Parameters:
    ///   - jsgf: The file's text, starting `#JSGF V1.0;`.
    ///   - path: The path to report in errors.
    /// - Returns: The minimal deterministic automaton (see ``WordAutomaton`` for the state limit).
    /// - Throws: ``SourceError`` for a syntax or reference error, or a grammar without a public rule.
    public static func automaton(jsgf: String, path: String) throws -> WordAutomaton {
        let source = SourceText(path: path, text: jsgf)
        let file = try RuleFileParser.parse(source)
        let scope = try RuleScope(files: [file])
        let publicRules = scope.rules.filter { $0.grammar == file.grammar && $0.definition.isPublic }
        guard !publicRules.isEmpty else {
            throw SourceError(.ruleSyntax, "grammar \(file.grammar) has no public rule", at: file.grammarLocation, in: source)
        }
        let table = RuleTable(rules: scope.rules, intents: [], vocabulary: [:], symbolicVocabulary: false)
        let graph = TokenGraph(expansions: publicRules.map { .rule($0.symbol, $0.definition.location) }, rules: table)
        return AutomatonBuilder(graph: graph).build()
    }
}

/// Spells out small `minimum`…`maximum` ranges of integer parameters as rules of their own.
///
/// Each integer in range becomes every spoken form `<heed_integer>` accepts for it: "a hundred" and
/// "one hundred", with and without "and". A form is kept only when the built-in rule accepts it and
/// ``SpokenNumbers`` reads it back as the same integer, so the narrowed slot accepts a subset of
/// what the parser accepts, and exactly the parser's in-range forms.
struct IntegerRanges {
    /// New rules by symbol.
    private(set) var rules: [String: Expansion] = [:]
    /// Rule symbols by intent name and parameter name.
    private var symbols: [String: [String: String]] = [:]

    init(intents: [IntentDefinition], rules table: RuleTable) {
        var symbolsByRange: [[Int]: String] = [:]
        var integerAcceptor: WordAutomaton.Acceptor?
        for intent in intents {
            for parameter in intent.parameters where parameter.type == .integer {
                guard parameter.minimum != nil || parameter.maximum != nil else { continue }
                let largest = Double(SpokenNumbers.maximumInteger)
                let low = Int(min(max(0, (parameter.minimum ?? 0).rounded(.up)), largest + 1))
                let high = Int(max(min(largest, (parameter.maximum ?? largest).rounded(.down)), -1))
                guard high - low < WordAutomaton.rangeValueLimit else { continue }
                let symbol = "heed_range_\(intent.name)_\(parameter.name)"
                if let existing = symbolsByRange[[low, high]] {
                    symbols[intent.name, default: [:]][parameter.name] = existing
                    continue
                }
                let acceptor =
                    integerAcceptor
                    ?? WordAutomaton.Acceptor(
                        AutomatonBuilder(graph: TokenGraph(expansions: [.rule("heed_integer", parameter.location)], rules: table)).build()
                    )
                integerAcceptor = acceptor
                var alternatives: [Expansion] = []
                if low <= high {
                    for value in low...high {
                        for form in Self.forms(of: value)
                        where acceptor.accepts(form) && SpokenNumbers.integer(from: form.map { Substring($0) }) == value {
                            alternatives.append(.sequence(form.map { .word($0, parameter.location) }))
                        }
                    }
                }
                rules[symbol] = .choice(alternatives)
                symbolsByRange[[low, high]] = symbol
                symbols[intent.name, default: [:]][parameter.name] = symbol
            }
        }
    }

    /// The narrowed rule of a parameter, or `nil` when it is not narrowed.
    func rule(for parameter: ParameterDefinition, of intent: IntentDefinition) -> String? {
        symbols[intent.name]?[parameter.name]
    }

    /// Every spoken form of an integer in 0...999,999, canonical or not.
    static func forms(of value: Int) -> [[String]] {
        if value == 0 { return [["zero"]] }
        guard value >= 1000 else { return formsBelowThousand(value) }
        let thousands = value / 1000
        let rest = value % 1000
        var heads = formsBelowThousand(thousands).map { $0 + ["thousand"] }
        if thousands == 1 { heads.append(["a", "thousand"]) }
        guard rest > 0 else { return heads }
        let tails = formsBelowThousand(rest).flatMap { [$0, ["and"] + $0] }
        return heads.flatMap { head in tails.map { head + $0 } }
    }

    private static func formsBelowThousand(_ value: Int) -> [[String]] {
        let hundreds = value / 100
        let rest = value % 100
        var restWords: [String] = []
        if rest >= 20 {
            restWords.append(SpokenNumbers.tens[rest / 10])
            if rest % 10 > 0 { restWords.append(SpokenNumbers.units[rest % 10]) }
        } else if rest >= 10 {
            restWords.append(SpokenNumbers.teens[rest - 10])
        } else if rest > 0 {
            restWords.append(SpokenNumbers.units[rest])
        }
        guard hundreds > 0 else { return [restWords] }
        let heads = (hundreds == 1 ? [["a", "hundred"]] : []) + [[SpokenNumbers.units[hundreds], "hundred"]]
        guard rest > 0 else { return heads }
        return heads.flatMap { [$0 + restWords, $0 + ["and"] + restWords] }
    }
}

/// Turns a ``TokenGraph`` into a ``WordAutomaton``: null moves removed by subset construction, then
/// Hopcroft minimization.
struct AutomatonBuilder {
    /// The graph with one extra start state, edges into dead states dropped; word `-1` is a null move.
    private var edges: [[(word: Int32, target: Int32)]]
    private var isAccept: [Bool]
    private let start: Int32
    /// Word ids in sorted word order, and the words.
    private let rank: [Int32]
    private let words: [String]

    init(graph: TokenGraph) {
        var edges: [[(word: Int32, target: Int32)]] = (0..<Int32(graph.stateCount)).map { state in
            graph.edges(from: state).map { edge in
                if case .word(let word) = edge.kind { return (word, edge.target) }
                return (-1, edge.target)
            }
        }
        let start = Int32(edges.count)
        edges.append(graph.entries.map { (-1, $0.start) })
        var isAccept = [Bool](repeating: false, count: edges.count)
        for entry in graph.entries { isAccept[Int(entry.accept)] = true }

        // Keep only edges into states from which an accept state can be reached.
        var incoming = [[Int32]](repeating: [], count: edges.count)
        for (source, list) in edges.enumerated() {
            for edge in list { incoming[Int(edge.target)].append(Int32(source)) }
        }
        var live = isAccept
        var stack = (0..<edges.count).filter { isAccept[$0] }
        while let state = stack.popLast() {
            for source in incoming[state] where !live[Int(source)] {
                live[Int(source)] = true
                stack.append(Int(source))
            }
        }
        for index in edges.indices { edges[index].removeAll { !live[Int($0.target)] } }

        self.edges = edges
        self.isAccept = isAccept
        self.start = start
        let sorted = graph.words.indices.sorted { graph.words[$0] < graph.words[$1] }
        var rank = [Int32](repeating: 0, count: graph.words.count)
        for (position, id) in sorted.enumerated() { rank[id] = Int32(position) }
        self.rank = rank
        words = sorted.map { graph.words[$0] }
    }

    /// - Parameter stateLimit: The most states subset construction may create before falling back.
    func build(stateLimit: Int = WordAutomaton.determinizedStateLimit) -> WordAutomaton {
        if let dfa = determinize(stateLimit: stateLimit) { return minimize(dfa) }
        return removingNullMoves()
    }

    /// A deterministic automaton before minimization: state 0 is the start.
    struct DFA {
        var transitions: [[(word: Int32, target: Int)]] = []
        var isFinal: [Bool] = []
    }

    /// The states reachable from `states` by null moves that read a word or accept, sorted.
    ///
    /// States that only pass on null moves are left out: two sets that differ only in them behave alike.
    private func closure(_ states: some Sequence<Int32>) -> [Int32] {
        var seen: Set<Int32> = []
        var stack: [Int32] = []
        for state in states where seen.insert(state).inserted { stack.append(state) }
        var kernel: [Int32] = []
        while let state = stack.popLast() {
            var reads = isAccept[Int(state)]
            for edge in edges[Int(state)] {
                if edge.word < 0 {
                    if seen.insert(edge.target).inserted { stack.append(edge.target) }
                } else {
                    reads = true
                }
            }
            if reads { kernel.append(state) }
        }
        return kernel.sorted()
    }

    /// Subset construction; `nil` past `stateLimit` states.
    ///
    /// The start state is never final and never re-entered, so the empty sentence is not accepted.
    func determinize(stateLimit: Int) -> DFA? {
        var dfa = DFA()
        var subsets: [[Int32]] = [closure([start])]
        var index: [[Int32]: Int] = [:]
        dfa.transitions.append([])
        dfa.isFinal.append(false)
        var position = 0
        while position < subsets.count {
            var moves: [Int32: [Int32]] = [:]
            for state in subsets[position] {
                for edge in edges[Int(state)] where edge.word >= 0 { moves[rank[Int(edge.word)], default: []].append(edge.target) }
            }
            for word in moves.keys.sorted() {
                let subset = closure(moves[word] ?? [])
                let target: Int
                if let known = index[subset] {
                    target = known
                } else {
                    guard subsets.count < stateLimit else { return nil }
                    target = subsets.count
                    index[subset] = target
                    subsets.append(subset)
                    dfa.transitions.append([])
                    dfa.isFinal.append(subset.contains { isAccept[Int($0)] })
                }
                dfa.transitions[position].append((word, target))
            }
            position += 1
        }
        return dfa
    }

    /// Hopcroft's partition refinement on a partial deterministic automaton.
    ///
    /// Without a dead state, every initial block is a splitter (Valmari and Lehtinen); after that a
    /// split block adds its smaller half, as in Hopcroft's algorithm.
    func minimize(_ dfa: DFA) -> WordAutomaton {
        let count = dfa.transitions.count
        var incoming = [[(word: Int32, source: Int)]](repeating: [], count: count)
        for (source, list) in dfa.transitions.enumerated() {
            for transition in list { incoming[transition.target].append((transition.word, source)) }
        }
        var partition = RefinablePartition(count: count, isFirstBlock: dfa.isFinal)
        var pending = Array(0..<partition.blockCount)
        var isPending = [Bool](repeating: true, count: partition.blockCount)
        while let splitter = pending.popLast() {
            isPending[splitter] = false
            var sources: [Int32: [Int]] = [:]
            for state in partition.members(of: splitter) {
                for edge in incoming[state] { sources[edge.word, default: []].append(edge.source) }
            }
            for word in sources.keys.sorted() {
                for source in sources[word] ?? [] { partition.mark(source) }
                for newBlock in partition.splitMarked() {
                    pending.append(newBlock)
                    isPending.append(true)
                }
            }
        }

        let blockStart = partition.block(of: 0)
        var finals: Set<Int> = []
        var arcs: [WordAutomaton.Arc] = []
        for block in 0..<partition.blockCount {
            guard let representative = partition.members(of: block).first else { continue }
            if dfa.isFinal[representative] { finals.insert(block) }
            for transition in dfa.transitions[representative] {
                arcs.append(WordAutomaton.Arc(from: block, to: partition.block(of: transition.target), word: words[Int(transition.word)]))
            }
        }
        let automaton = WordAutomaton(stateCount: partition.blockCount, start: blockStart, finals: finals, arcs: arcs, isDeterministic: true)
        return automaton.trimmed()
    }

    /// The automaton without null moves and without determinizing: the fallback past the state limit.
    ///
    /// Its states are the start and the targets of word edges; a state gets the word edges of every
    /// state its null moves reach.
    func removingNullMoves() -> WordAutomaton {
        var number: [Int32: Int] = [start: 0]
        var order: [Int32] = [start]
        var finals: Set<Int> = []
        var arcs: Set<WordAutomaton.Arc> = []
        var position = 0
        while position < order.count {
            let state = order[position]
            let from = position
            position += 1
            for member in closure([state]) {
                if isAccept[Int(member)], state != start { finals.insert(from) }
                for edge in edges[Int(member)] where edge.word >= 0 {
                    let to: Int
                    if let known = number[edge.target] {
                        to = known
                    } else {
                        to = order.count
                        number[edge.target] = to
                        order.append(edge.target)
                    }
                    arcs.insert(WordAutomaton.Arc(from: from, to: to, word: words[Int(rank[Int(edge.word)])]))
                }
            }
        }
        let automaton = WordAutomaton(stateCount: order.count, start: 0, finals: finals, arcs: Array(arcs), isDeterministic: false)
        return automaton.trimmed()
    }
}

/// The blocks of a partition of `0..<count`, split by marking elements (Valmari and Lehtinen's refinable partition).
struct RefinablePartition {
    private var elements: [Int]
    private var location: [Int]
    private var blockOfElement: [Int]
    private var first: [Int] = []
    private var end: [Int] = []
    private var marked: [Int] = []
    private var touched: [Int] = []

    /// Two blocks: the elements with `isFirstBlock` set, then the others; an empty one is left out.
    init(count: Int, isFirstBlock: [Bool]) {
        let firstBlock = (0..<count).filter { isFirstBlock[$0] }
        let secondBlock = (0..<count).filter { !isFirstBlock[$0] }
        elements = firstBlock + secondBlock
        location = [Int](repeating: 0, count: count)
        blockOfElement = [Int](repeating: 0, count: count)
        for (position, element) in elements.enumerated() { location[element] = position }
        for part in [firstBlock, secondBlock] where !part.isEmpty {
            let block = first.count
            let start = first.count == 0 ? 0 : firstBlock.count
            first.append(start)
            end.append(start + part.count)
            marked.append(0)
            for element in part { blockOfElement[element] = block }
        }
    }

    var blockCount: Int { first.count }

    func block(of element: Int) -> Int { blockOfElement[element] }

    func members(of block: Int) -> ArraySlice<Int> { elements[first[block]..<end[block]] }

    /// Marks an element for the next ``splitMarked()``; marking twice is harmless.
    mutating func mark(_ element: Int) {
        let block = blockOfElement[element]
        let position = location[element]
        let boundary = first[block] + marked[block]
        guard position >= boundary else { return }
        let other = elements[boundary]
        elements[boundary] = element
        elements[position] = other
        location[element] = boundary
        location[other] = position
        if marked[block] == 0 { touched.append(block) }
        marked[block] += 1
    }

    /// Splits every block with some but not all elements marked, and clears the marks.
    /// - Returns: The new blocks, each the smaller part of the block it came from.
    mutating func splitMarked() -> [Int] {
        var created: [Int] = []
        for block in touched {
            let count = marked[block]
            marked[block] = 0
            let size = end[block] - first[block]
            guard count < size else { continue }
            let newBlock = first.count
            if count <= size - count {
                first.append(first[block])
                end.append(first[block] + count)
                first[block] += count
            } else {
                first.append(first[block] + count)
                end.append(end[block])
                end[block] = first[block] + count
            }
            marked.append(0)
            for position in first[newBlock]..<end[newBlock] { blockOfElement[elements[position]] = newBlock }
            created.append(newBlock)
        }
        touched = []
        return created
    }
}
