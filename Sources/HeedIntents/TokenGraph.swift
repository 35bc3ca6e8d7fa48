import HeedCore
/// The templates of all intents compiled into one word graph (a nondeterministic automaton).
///
/// Rules and slots are inlined; a slot is bracketed by `open`/`close` edges so the parser can
/// capture the words spoken for it. `a+` and `a*` become a loop back over `a`'s states, so the
/// graph stays finite. Each template has its own start and accept state.
struct TokenGraph: Sendable {
    struct Edge: Sendable {
        enum Kind: Sendable, Equatable {
            /// Consumes one word.
            case word(Int32)
            /// Moves without a word.
            case epsilon
            /// Moves without a word by leaving out an optional part; ranked below taking it.
            case skip
            /// Starts the words of parameter number `n` of the template's intent.
            case open(Int32)
            /// Ends the words of parameter number `n`.
            case close(Int32)
        }

        var kind: Kind
        var target: Int32
    }

    /// One template's entry in the graph.
    struct Entry: Sendable {
        var intent: Int
        var template: Int
        var start: Int32
        var accept: Int32
        var firstWords: Set<Int32>
    }

    /// Every state's edges, state after state: state `s` has `edgeList[edgeStarts[s]..<edgeStarts[s + 1]]`.
    /// One array for the whole graph rather than one per state: the parser holds this graph for
    /// as long as Heed runs, and an array for each of its 25,000 states cost more than the edges.
    private var edgeList: [Edge] = []
    private var edgeStarts: [Int32] = [0]
    /// The edges while the graph is built, in the order they were made, each with the state it
    /// leaves; empty once it is. One list, laid out by state at the end: a list for each state
    /// while building, made and freed, was a third of the parser's build with 10,000 titles.
    private var building: [(from: Int32, edge: Edge)] = []
    private var statesMade: Int32 = 0
    private(set) var wordIDs: [String: Int32] = [:]
    private(set) var words: [String] = []
    private(set) var entries: [Entry] = []
    /// Entry indices by the word a phrase can start with.
    private(set) var entriesByFirstWord: [Int32: [Int]] = [:]

    /// Compiles every template of `intents`.
    /// - Parameters:
    ///   - intents: The intents, in catalog order.
    ///   - rules: The rules the templates and slots refer to.
    ///   - slotRule: The rule a `{parameter}` slot of an intent stands for; ``RuleTable/slotRule(for:of:)``
    ///     unless the word automaton narrows a slot (see ``WordAutomaton``).
    init(
        intents: [IntentDefinition],
        rules: RuleTable,
        slotRule: (ParameterDefinition, IntentDefinition) -> String = { RuleTable.slotRule(for: $0, of: $1.name) }
    ) {
        for (intentIndex, intent) in intents.enumerated() {
            let slotIndices = Dictionary(uniqueKeysWithValues: intent.parameters.enumerated().map { ($1.name, Int32($0)) })
            for (templateIndex, template) in intent.compiledTemplates.enumerated() {
                let start = addState()
                let accept = add(template.expansion, from: start, rules: rules) { name in
                    guard let index = slotIndices[name], let parameter = intent.parameter(named: name) else { return nil }
                    return (index, slotRule(parameter, intent))
                }
                entries.append(Entry(intent: intentIndex, template: templateIndex, start: start, accept: accept, firstWords: []))
            }
        }
        finishBuilding()
    }

    /// Compiles expansions without slots, such as the public rules of a JSGF file; entry `n` is expansion `n`.
    /// - Parameters:
    ///   - expansions: Resolved expansions; a slot in them accepts nothing.
    ///   - rules: The rules they refer to.
    init(expansions: [Expansion], rules: RuleTable) {
        for (index, expansion) in expansions.enumerated() {
            let start = addState()
            let accept = add(expansion, from: start, rules: rules) { _ in nil }
            entries.append(Entry(intent: index, template: 0, start: start, accept: accept, firstWords: []))
        }
        finishBuilding()
    }

    /// How many states the graph has.
    var stateCount: Int { edgeStarts.count - 1 }

    /// The edges leaving a state (once the graph is built).
    func edges(from state: Int32) -> ArraySlice<Edge> {
        edgeList[Int(edgeStarts[Int(state)])..<Int(edgeStarts[Int(state) + 1])]
    }

    private mutating func addState() -> Int32 {
        statesMade += 1
        return statesMade - 1
    }

    private mutating func connect(_ from: Int32, _ to: Int32, _ kind: Edge.Kind) {
        building.append((from, Edge(kind: kind, target: to)))
    }

    /// Lays the states' edges out in one array, each state's in the order they were made, and
    /// finds the words each entry can start with.
    private mutating func finishBuilding() {
        var starts = [Int32](repeating: 0, count: Int(statesMade) + 1)
        for (from, _) in building { starts[Int(from) + 1] += 1 }
        for state in 0..<Int(statesMade) { starts[state + 1] += starts[state] }
        var next = starts
        edgeList = Array(repeating: Edge(kind: .epsilon, target: 0), count: building.count)
        for (from, edge) in building {
            edgeList[Int(next[Int(from)])] = edge
            next[Int(from)] += 1
        }
        edgeStarts = starts
        building = []
        for index in entries.indices {
            entries[index].firstWords = firstWords(from: entries[index].start)
            for word in entries[index].firstWords { entriesByFirstWord[word, default: []].append(index) }
        }
    }

    private mutating func wordID(_ word: String) -> Int32 {
        if let id = wordIDs[word] { return id }
        let id = Int32(words.count)
        words.append(word)
        wordIDs[word] = id
        return id
    }

    /// Adds the states of an expansion after `start`.
    /// - Returns: The state reached at the end of the expansion.
    private mutating func add(
        _ expansion: Expansion,
        from start: Int32,
        rules: RuleTable,
        slot: (String) -> (index: Int32, rule: String)?
    ) -> Int32 {
        switch expansion {
        case .word(let word, _):
            let end = addState()
            connect(start, end, .word(wordID(word)))
            return end
        case .sequence(let items):
            return items.reduce(start) { add($1, from: $0, rules: rules, slot: slot) }
        case .choice(let alternatives):
            let end = addState()
            for alternative in alternatives {
                connect(add(alternative, from: start, rules: rules, slot: slot), end, .epsilon)
            }
            return end
        case .optional(let item):
            let end = addState()
            connect(add(item, from: start, rules: rules, slot: slot), end, .epsilon)
            connect(start, end, .skip)
            return end
        case .repeated(let item, let atLeastOnce, _):
            // A loop back to a state of its own, so the sibling alternatives of `start` are not repeated.
            // Loading checked that the item always says a word, so the loop always consumes one.
            let loop = addState()
            connect(start, loop, .epsilon)
            let itemEnd = add(item, from: loop, rules: rules, slot: slot)
            let end = addState()
            connect(itemEnd, end, .epsilon)
            connect(itemEnd, loop, .epsilon)
            if !atLeastOnce { connect(start, end, .skip) }
            return end
        case .rule(let name, _):
            // Loading checked that rules exist and are not recursive; a missing one accepts nothing.
            guard let body = rules[name] else { return addState() }
            return add(body, from: start, rules: rules, slot: { _ in nil })
        case .slot(let name, _):
            guard let (index, rule) = slot(name), let body = rules[rule] else { return addState() }
            let inside = addState()
            connect(start, inside, .open(index))
            let end = addState()
            connect(add(body, from: inside, rules: rules, slot: { _ in nil }), end, .close(index))
            return end
        }
    }

    /// The words that can come first from a state.
    func firstWords(from state: Int32) -> Set<Int32> {
        var result: Set<Int32> = []
        var visited: Set<Int32> = [state]
        var stack = [state]
        while let current = stack.popLast() {
            for edge in edges(from: current) {
                if case .word(let word) = edge.kind {
                    result.insert(word)
                } else if visited.insert(edge.target).inserted {
                    stack.append(edge.target)
                }
            }
        }
        return result
    }
}
