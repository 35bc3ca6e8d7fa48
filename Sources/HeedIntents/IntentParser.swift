import HeedCore
/// Turns text into ranked intent matches, using templates compiled once into a ``TokenGraph``.
///
/// Only whole-sentence matches count. Matches are ranked, best first, by:
/// 1. more template words matched outside slots (the more specific template wins),
/// 2. fewer optional parts left out,
/// 3. the intent's order in the catalog (files in name order, intents in file order),
/// 4. the template's order in its intent.
/// The same intent with the same values is reported once, at its best rank.
public struct IntentParser: Sendable {
    /// Converts the words captured by a slot into a typed value.
    enum SlotDecoder: Sendable {
        case builtin(ParameterType)
        case table([String: ParameterValue])
        case phrase
    }

    struct Slot: Sendable {
        var name: String
        var decoder: SlotDecoder
        var range: ClosedRange<Double>?
    }

    private let graph: TokenGraph
    private let intentNames: [String]
    private let slots: [[Slot]]
    /// The most accepted paths one sentence may produce; a guard against pathological grammars.
    static let pathLimit = 256

    init(intents: [IntentDefinition], rules: [LoadedRule], vocabulary: [String: [String]]) {
        let table = RuleTable(rules: rules, intents: intents, vocabulary: vocabulary, symbolicVocabulary: false)
        graph = TokenGraph(intents: intents, rules: table)
        intentNames = intents.map(\.name)
        slots = intents.map { intent in
            intent.parameters.map { parameter in
                let range: ClosedRange<Double>? =
                    parameter.minimum == nil && parameter.maximum == nil
                    ? nil : (parameter.minimum ?? -.infinity)...(parameter.maximum ?? .infinity)
                return Slot(name: parameter.name, decoder: Self.decoder(for: parameter.type, vocabulary: vocabulary), range: range)
            }
        }
    }

    private static func decoder(for type: ParameterType, vocabulary: [String: [String]]) -> SlotDecoder {
        switch type {
        case .integer, .number, .boolean, .duration, .ordinal:
            return .builtin(type)
        case .enumeration(let cases):
            return .table(synonymTable(cases, as: ParameterValue.enumeration))
        case .vocabulary(let type, let fallback):
            var table = synonymTable(fallback, as: ParameterValue.vocabulary)
            for term in (vocabulary[type] ?? []).reversed() {
                table[TextNormalizer.words(term).joined(separator: " ")] = .vocabulary(term)
            }
            return .table(table)
        case .phrase:
            return .phrase
        }
    }

    private static func synonymTable(_ cases: [EnumerationCase], as value: (String) -> ParameterValue) -> [String: ParameterValue] {
        var table: [String: ParameterValue] = [:]
        for enumerationCase in cases {
            for synonym in enumerationCase.synonyms where table[synonym] == nil { table[synonym] = value(enumerationCase.value) }
        }
        return table
    }

    /// Parses a sentence.
    /// - Parameter text: What was said or typed, in any case; punctuation is ignored.
    /// - Returns: The matches, best first; empty when no template accepts the whole sentence.
    public func parse(_ text: String) -> [IntentMatch] {
        let words = TextNormalizer.words(text)
        var ids: [Int32] = []
        ids.reserveCapacity(words.count)
        for word in words {
            guard let id = graph.wordIDs[word] else { return [] }
            ids.append(id)
        }
        guard let first = ids.first, let entries = graph.entriesByFirstWord[first] else { return [] }

        var candidates: [(rank: (Int, Int, Int, Int), match: IntentMatch)] = []
        var search = PathSearch(graph: graph, words: ids)
        for entryIndex in entries {
            let entry = graph.entries[entryIndex]
            for path in search.paths(from: entry.start, to: entry.accept) {
                guard let parameters = values(of: path, intent: entry.intent, words: words) else { continue }
                let rank = (-path.literalWords, path.skips, entry.intent, entry.template)
                candidates.append((rank, IntentMatch(intent: intentNames[entry.intent], parameters: parameters)))
            }
        }
        candidates.sort { $0.rank < $1.rank }
        var seen: Set<IntentMatch> = []
        return candidates.compactMap { seen.insert($0.match).inserted ? $0.match : nil }
    }

    private func values(of path: PathSearch.Path, intent: Int, words: [String]) -> [String: ParameterValue]? {
        var values: [String: ParameterValue] = [:]
        for capture in path.captures {
            let slot = slots[intent][Int(capture.slot)]
            let spoken = words[capture.start..<capture.end]
            guard let value = Self.decode(spoken, with: slot.decoder) else { return nil }
            if let range = slot.range {
                let number: Double? =
                    switch value {
                    case .integer(let integer): Double(integer)
                    case .number(let number): number
                    default: nil
                    }
                if let number, !range.contains(number) { return nil }
            }
            values[slot.name] = value
        }
        return values
    }

    private static func decode(_ spoken: ArraySlice<String>, with decoder: SlotDecoder) -> ParameterValue? {
        switch decoder {
        case .phrase:
            return .phrase(spoken.joined(separator: " "))
        case .table(let table):
            return table[spoken.joined(separator: " ")]
        case .builtin(let type):
            return ParameterType.decode(spoken.map { Substring($0) }, as: type)
        }
    }
}

extension ParameterType {
    /// Converts spoken words to a value of a scalar type.
    /// - Parameters:
    ///   - words: Lower-case words.
    ///   - type: `integer`, `number`, `boolean`, `duration` or `ordinal`.
    /// - Returns: The value, or `nil` when the words do not say one (or the type is not scalar).
    static func decode(_ words: [Substring], as type: ParameterType) -> ParameterValue? {
        switch type {
        case .integer: SpokenNumbers.integer(from: words).map(ParameterValue.integer)
        case .number: SpokenNumbers.number(from: words).map(ParameterValue.number)
        case .boolean: SpokenBoolean.value(from: words).map(ParameterValue.boolean)
        case .duration: SpokenDuration.seconds(from: words).map { .duration(seconds: $0) }
        case .ordinal: SpokenNumbers.ordinal(from: words).map(ParameterValue.ordinal)
        case .enumeration, .vocabulary, .phrase: nil
        }
    }

    /// Converts spoken text to a value of a scalar type: "an hour and a half" as `duration` is 5400 seconds.
    /// - Parameter text: The spoken words, in any case.
    /// - Returns: The value, or `nil` when the text does not say one, or the type has no fixed spoken forms
    ///   (enumerations, vocabulary and phrases are read by ``IntentParser``).
    public func value(fromSpoken text: String) -> ParameterValue? {
        Self.decode(TextNormalizer.words(text).map { Substring($0) }, as: self)
    }
}

/// Depth-first search for every way a sentence walks a template's graph from start to accept.
struct PathSearch {
    struct Capture {
        var slot: Int32
        var start: Int
        var end: Int
    }

    struct Path {
        var captures: [Capture]
        var literalWords: Int
        var skips: Int
    }

    let graph: TokenGraph
    let words: [Int32]
    /// (state, position) pairs from which the accept state cannot be reached; independent of the path taken there.
    private var dead: Set<Int64> = []
    private var captures: [Capture] = []
    private var literalWords = 0
    private var skips = 0
    private var found: [Path] = []
    private var accept: Int32 = 0

    init(graph: TokenGraph, words: [Int32]) {
        self.graph = graph
        self.words = words
    }

    mutating func paths(from start: Int32, to accept: Int32) -> [Path] {
        self.accept = accept
        found = []
        dead = []
        _ = visit(start, 0)
        return found
    }

    /// Explores from a state at a word position.
    /// - Returns: Whether an accept was found, and whether a branch was cut for a reason that depends on the path
    ///   (a parameter spoken twice), which makes a failure here unfit for the `dead` memo.
    private mutating func visit(_ state: Int32, _ position: Int) -> (found: Bool, pathDependent: Bool) {
        if state == accept && position == words.count {
            found.append(Path(captures: captures, literalWords: literalWords, skips: skips))
            return (true, false)
        }
        let key = Int64(state) << 32 | Int64(position)
        if dead.contains(key) || found.count >= IntentParser.pathLimit { return (false, false) }
        var anyFound = false
        var pathDependent = false
        let inSlot = captures.last.map { $0.end < 0 } ?? false
        for edge in graph.edges(from: state) {
            let result: (found: Bool, pathDependent: Bool)
            switch edge.kind {
            case .word(let word):
                guard position < words.count, words[position] == word else { continue }
                if !inSlot { literalWords += 1 }
                result = visit(edge.target, position + 1)
                if !inSlot { literalWords -= 1 }
            case .epsilon:
                result = visit(edge.target, position)
            case .skip:
                skips += 1
                result = visit(edge.target, position)
                skips -= 1
            case .open(let slot):
                if captures.contains(where: { $0.slot == slot }) {
                    pathDependent = true
                    continue
                }
                captures.append(Capture(slot: slot, start: position, end: -1))
                result = visit(edge.target, position)
                captures.removeLast()
            case .close:
                let index = captures.count - 1
                captures[index].end = position
                result = visit(edge.target, position)
                captures[index].end = -1
            }
            anyFound = anyFound || result.found
            pathDependent = pathDependent || result.pathDependent
        }
        if !anyFound && !pathDependent { dead.insert(key) }
        return (anyFound, pathDependent)
    }
}
