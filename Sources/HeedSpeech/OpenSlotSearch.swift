import HeedCore

/// What the recognizer needs of a grammar's open slots (``OpenSlot``): every term with the phones
/// it is said with, to find the terms closest to what the grammar pass heard in a slot, and to
/// build the second pass's grammar of those terms.
struct OpenSlotSearch {
    /// One open slot's terms.
    struct Terms {
        var words: [[String]]
        /// Each term's phones (each word's first pronunciation), as indices into ``ModelPhones/speech``.
        var phones: [[UInt8]]
        /// Term indices by first word, for matching a sentence against the terms.
        var byFirstWord: [String: [Int]]
    }

    /// How many of the closest terms the second pass chooses among.
    static let shortlistSize = 50

    /// The probability of going into a slot's phone loop. Free, the loop explains any speech
    /// better than the grammar's words: "pause" was heard as "play" and phones, and the search
    /// then reached no sentence. Once inside, phones are free, so that they follow what was said.
    /// Chosen on 7 real commands and 64 synthetic playlist commands among 10,000 titles
    /// (docs/VOCABULARY.md); a fresh set of titles confirmed it.
    static let entryProbability = 1e-4

    /// The probability of each arc of a grammar with open slots: ``entryProbability`` for a phone
    /// into a slot, 1 for every other arc.
    static func arcProbability(in graph: WordGraph) -> (WordGraph.Arc) -> Double {
        let inner = Set(graph.arcs.filter { OpenSlot.parse($0.word) != nil }.map(\.to))
        return { arc in OpenSlot.parse(arc.word) != nil && !inner.contains(arc.from) ? entryProbability : 1 }
    }

    /// Terms by vocabulary type.
    let slots: [String: Terms]
    /// The first pass's graph, to check sentences with terms in their slots.
    private let graph: WordGraph
    private let arcsByState: [[WordGraph.Arc]]

    /// - Parameters:
    ///   - slots: The grammar's open slots.
    ///   - graph: The grammar, slots as phone loops.
    ///   - pronunciation: A word's phones as the decoder says it ("HH EH L OW"), or `nil`.
    init(slots: [OpenSlot], graph: WordGraph, pronunciation: (String) -> String?) {
        var phonesOfWord: [String: [UInt8]] = [:]
        func phones(_ word: String) -> [UInt8] {
            if let known = phonesOfWord[word] { return known }
            let phones = Self.codes(ofPhones: pronunciation(word) ?? "")
            phonesOfWord[word] = phones
            return phones
        }
        var terms: [String: Terms] = [:]
        for slot in slots {
            var byFirstWord: [String: [Int]] = [:]
            for (index, words) in slot.terms.enumerated() { byFirstWord[words[0], default: []].append(index) }
            terms[slot.type] = Terms(words: slot.terms, phones: slot.terms.map { $0.flatMap(phones) }, byFirstWord: byFirstWord)
        }
        self.slots = terms
        self.graph = graph
        var arcsByState = Array(repeating: [WordGraph.Arc](), count: graph.stateCount)
        for arc in graph.arcs { arcsByState[arc.from].append(arc) }
        self.arcsByState = arcsByState
    }

    /// Whether the first pass heard something in an open slot.
    static func saysSlot(_ words: [String]) -> Bool { words.contains { OpenSlot.parse($0) != nil } }

    /// The second pass's grammar: the first pass's grammar with, in each open slot, a choice of the
    /// ``shortlistSize`` terms whose phones are closest to what the first pass heard there, instead
    /// of the phone loop.
    ///
    /// When the first pass heard a whole sentence, only the sentences through a slot are kept: it
    /// heard the words around the slot, and the second pass decides the term (a search of the whole
    /// grammar again would cost as much as the first). Not only those through the place the heard
    /// sentence took the slot: a first pass that put "put on the" into the loop as phones heard
    /// "put on …", and the sentence said had "the" (8 of 36 flite commands among 10,000 titles
    /// lost "the" that way, docs/MEASUREMENTS.md). When it reached no end — the free loop
    /// outscored the words that were said ("pause" heard as "play" and phones, then nothing) — the
    /// whole grammar is searched again, the closest terms in the slots that the words heard before
    /// the loop lead to by any words (every slot when the grammar does not begin with those words):
    /// at all eleven places, the terms made that grammar four times the first pass's, and
    /// PocketSphinx goes over every state of it at each frame.
    /// - Parameters:
    ///   - heard: The first pass's words (its best path, whole or not), fillers removed.
    ///   - sentence: Whether they are a whole sentence of the grammar.
    func secondPass(after heard: [String], sentence: Bool) -> WordGraph {
        var runs: [String: [[String]]] = [:]
        var index = 0
        while index < heard.count {
            guard let (type, _) = OpenSlot.parse(heard[index]) else {
                index += 1
                continue
            }
            var phones: [String] = []
            while index < heard.count, let (sameType, phone) = OpenSlot.parse(heard[index]), sameType == type {
                phones.append(phone)
                index += 1
            }
            runs[type, default: []].append(phones)
        }
        var arcs = graph.arcs.filter { OpenSlot.parse($0.word) == nil }
        let firstTermArc = arcs.count
        var stateCount = graph.stateCount
        for (type, terms) in slots {
            var chosen: [Int] = []
            for phones in runs[type] ?? [] {
                for term in shortlist(terms, phones: phones) where !chosen.contains(term) { chosen.append(term) }
            }
            guard !chosen.isEmpty else { continue }
            // A slot starts where a state has phone arcs and no phone arc leads in; it ends in the
            // states one phone or more lead to. Each chosen term goes from the one to the others.
            let inner = Set(graph.arcs.filter { OpenSlot.parse($0.word)?.type == type }.map(\.to))
            var starts = Set(graph.arcs.filter { OpenSlot.parse($0.word)?.type == type && !inner.contains($0.from) }.map(\.from))
            if !sentence {
                let ahead = statesAhead(of: heard.prefix { OpenSlot.parse($0) == nil })
                if !ahead.isDisjoint(with: starts) { starts.formIntersection(ahead) }
            }
            // A term's words after its first lead to the slot's end the same way whichever start
            // it came from, so each term is drawn once per end and every start enters it.
            var afterFirstWord: [[Int]: Int] = [:]
            for start in starts.sorted() {
                for end in statesAfterPhones(of: type, from: start).sorted() {
                    for term in chosen {
                        let words = terms.words[term]
                        guard words.count > 1 else {
                            arcs.append(WordGraph.Arc(from: start, to: end, word: words[0]))
                            continue
                        }
                        if let shared = afterFirstWord[[end, term]] {
                            arcs.append(WordGraph.Arc(from: start, to: shared, word: words[0]))
                            continue
                        }
                        afterFirstWord[[end, term]] = stateCount
                        var from = start
                        for word in words.dropLast() {
                            arcs.append(WordGraph.Arc(from: from, to: stateCount, word: word))
                            from = stateCount
                            stateCount += 1
                        }
                        arcs.append(WordGraph.Arc(from: from, to: end, word: words[words.count - 1]))
                    }
                }
            }
        }
        let all = WordGraph(stateCount: stateCount, start: graph.start, finals: graph.finals, arcs: arcs)
        return Self.withoutIdleStates(sentence ? Self.throughSlots(all, terms: firstTermArc..<arcs.count) : all)
    }

    /// The states the first pass's graph can reach after `words`, by any words after them; every
    /// state when the graph does not begin with them.
    private func statesAhead(of words: some Sequence<String>) -> Set<Int> {
        var states: Set<Int> = [graph.start]
        for word in words {
            states = Set(states.flatMap { arcsByState[$0].filter { $0.word == word }.map(\.to) })
        }
        guard !states.isEmpty else { return Set(0..<graph.stateCount) }
        var frontier = Array(states)
        while let state = frontier.popLast() {
            for arc in arcsByState[state] where OpenSlot.parse(arc.word) == nil && states.insert(arc.to).inserted { frontier.append(arc.to) }
        }
        return states
    }

    /// The graph with only the start and the states its arcs use, numbered anew. PocketSphinx's
    /// search goes over every state of its grammar at each frame, arcs or not
    /// (`fsg_history_end_frame`), and the sentences through a slot leave the other sentences'
    /// states without arcs.
    private static func withoutIdleStates(_ graph: WordGraph) -> WordGraph {
        var number = Array(repeating: -1, count: graph.stateCount)
        var count = 0
        func renumbered(_ state: Int) -> Int {
            if number[state] < 0 {
                number[state] = count
                count += 1
            }
            return number[state]
        }
        let start = renumbered(graph.start)
        let arcs = graph.arcs.map { WordGraph.Arc(from: renumbered($0.from), to: renumbered($0.to), word: $0.word) }
        let finals = Set(graph.finals.compactMap { number[$0] >= 0 ? number[$0] : nil })
        return WordGraph(stateCount: count, start: start, finals: finals, arcs: arcs)
    }

    /// Only the sentences that say a term: the arcs before a slot that lead to it, the terms, and
    /// the arcs after that lead from it to the end.
    private static func throughSlots(_ graph: WordGraph, terms: Range<Int>) -> WordGraph {
        var forward = Array(repeating: [Int](), count: graph.stateCount)
        var backward = Array(repeating: [Int](), count: graph.stateCount)
        for (index, arc) in graph.arcs.enumerated() where !terms.contains(index) {
            forward[arc.from].append(arc.to)
            backward[arc.to].append(arc.from)
        }
        func reach(from states: some Sequence<Int>, along edges: [[Int]]) -> Set<Int> {
            var reached = Set(states)
            var frontier = Array(reached)
            while let state = frontier.popLast() {
                for next in edges[state] where reached.insert(next).inserted { frontier.append(next) }
            }
            return reached
        }
        let slotArcs = graph.arcs[terms]
        let before = reach(from: [graph.start], along: forward).intersection(reach(from: slotArcs.map(\.from), along: backward))
        let after = reach(from: slotArcs.map(\.to), along: forward).intersection(reach(from: graph.finals, along: backward))
        let arcs = graph.arcs.enumerated().filter { index, arc in
            terms.contains(index) || (before.contains(arc.from) && before.contains(arc.to)) || (after.contains(arc.from) && after.contains(arc.to))
        }.map(\.element)
        return WordGraph(stateCount: graph.stateCount, start: graph.start, finals: graph.finals, arcs: arcs)
    }

    /// The terms whose phones are closest to `phones`, most important first among equals.
    ///
    /// Closeness is an edit distance whose costs follow how the grammar pass mishears: a phone it
    /// heard that the term lacks costs 10, a phone of the term it did not hear 7, and a phone heard
    /// as another of its kind (a vowel for a vowel, `T` for `D`, `S` for `Z`…) 6 rather than 10.
    /// Chosen on synthetic speech (espeak-ng and flite, 64 titles among 10,000): the right title
    /// among the first 20 for 53 of 60 rather than 49 with equal costs (docs/VOCABULARY.md).
    func shortlist(_ terms: Terms, phones: [String]) -> [Int] {
        let heard = phones.compactMap { Self.code(ofPhone: $0.utf8) }
        guard !heard.isEmpty else { return Array(terms.words.indices.prefix(Self.shortlistSize)) }
        let (extra, missed) = (10, 7)
        let substitution = Self.substitutionCosts
        let width = ModelPhones.speech.count
        var row = [Int](repeating: 0, count: heard.count + 1)
        var scored: [(distance: Int, term: Int)] = []
        scored.reserveCapacity(terms.phones.count)
        for (term, target) in terms.phones.enumerated() {
            for column in 0...heard.count { row[column] = column * extra }
            for symbol in target {
                var diagonal = row[0]
                row[0] += missed
                for column in 1...heard.count {
                    let above = row[column]
                    row[column] = min(above + missed, row[column - 1] + extra, diagonal + substitution[Int(symbol) * width + Int(heard[column - 1])])
                    diagonal = above
                }
            }
            scored.append((row[heard.count], term))
        }
        return scored.sorted { ($0.distance, $0.term) < ($1.distance, $1.term) }.prefix(Self.shortlistSize).map(\.term)
    }

    /// A pronunciation's phones ("HH EH L OW") as indices into ``ModelPhones/speech``; a phone the
    /// model does not have is left out. Read as bytes: every term of a large vocabulary is read
    /// this way when its grammar is loaded (a string per phone took 60 ms for 10,000 titles).
    static func codes(ofPhones pronunciation: String) -> [UInt8] {
        pronunciation.phoneFields(code(ofPhone:))
    }

    /// A phone's index into ``ModelPhones/speech``, or `nil`.
    static func code(ofPhone name: some Collection<UInt8>) -> UInt8? {
        packed(name).flatMap { phoneCodes[$0] }
    }

    /// Phone indices by the phone's name packed into an integer (``packed(_:)``).
    private static let phoneCodes = Dictionary(uniqueKeysWithValues: ModelPhones.speech.enumerated().map { (packed($1.utf8)!, UInt8($0)) })

    /// A name of one to four bytes as an integer, a byte each; `nil` for a longer or empty one.
    private static func packed(_ name: some Collection<UInt8>) -> UInt32? {
        guard (1...4).contains(name.count) else { return nil }
        return name.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The cost of hearing one phone as another, row by row in ``ModelPhones/speech`` order.
    static let substitutionCosts: [Int] = {
        let kinds: [Set<String>] = [
            ["AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"],
            ["P", "B"], ["T", "D"], ["K", "G"], ["F", "V", "TH", "DH"], ["S", "Z", "SH", "ZH"], ["CH", "JH"],
            ["M", "N", "NG"], ["L", "R", "ER"], ["W", "Y"],
        ]
        return ModelPhones.speech.flatMap { said in
            ModelPhones.speech.map { heard in
                said == heard ? 0 : kinds.contains { $0.contains(said) && $0.contains(heard) } ? 6 : 10
            }
        }
    }()

    /// Whether the grammar says `words`, with a registered term where it has a slot's phone loop.
    func accepts(_ words: [String]) -> Bool {
        var seen: Set<[Int]> = []
        var stack = [(position: 0, state: graph.start)]
        while let (position, state) = stack.popLast() {
            guard seen.insert([position, state]).inserted else { continue }
            if position == words.count {
                if graph.finals.contains(state) { return true }
                continue
            }
            var slotTypes: Set<String> = []
            for arc in arcsByState[state] {
                if let (type, _) = OpenSlot.parse(arc.word) {
                    slotTypes.insert(type)
                } else if arc.word == words[position] {
                    stack.append((position + 1, arc.to))
                }
            }
            for type in slotTypes {
                guard let terms = slots[type] else { continue }
                let ends = statesAfterPhones(of: type, from: state)
                for term in terms.byFirstWord[words[position]] ?? [] {
                    let termWords = terms.words[term]
                    guard words.count - position >= termWords.count, Array(words[position..<(position + termWords.count)]) == termWords
                    else { continue }
                    for end in ends { stack.append((position + termWords.count, end)) }
                }
            }
        }
        return false
    }

    /// The states one or more of a slot's phone words lead to from `state`.
    private func statesAfterPhones(of type: String, from state: Int) -> Set<Int> {
        var reached: Set<Int> = []
        var frontier = [state]
        while let current = frontier.popLast() {
            for arc in arcsByState[current] where OpenSlot.parse(arc.word)?.type == type && reached.insert(arc.to).inserted {
                frontier.append(arc.to)
            }
        }
        return reached
    }
}
