import HeedCore
import Foundation
import Testing
@testable import HeedIntents

extension WordAutomaton {
    /// Random sentences: a random walk that may stop at a final state and heads for the nearest final state after `maxLength` words.
    fileprivate func samples(_ count: Int, seed: UInt64, maxLength: Int = 30) -> [[String]] {
        var outgoing = [[Arc]](repeating: [], count: stateCount)
        var incoming = [[Int]](repeating: [], count: stateCount)
        for arc in arcs {
            outgoing[arc.from].append(arc)
            incoming[arc.to].append(arc.from)
        }
        var distance = [Int](repeating: Int.max, count: stateCount)
        var queue = Array(finals)
        for final in finals { distance[final] = 0 }
        var position = 0
        while position < queue.count {
            let state = queue[position]
            position += 1
            for source in incoming[state] where distance[source] == Int.max {
                distance[source] = distance[state] + 1
                queue.append(source)
            }
        }
        var generator = SeededGenerator(seed: seed)
        var result: [[String]] = []
        for _ in 0..<count {
            var state = start
            var words: [String] = []
            while true {
                let choices = outgoing[state]
                if finals.contains(state), choices.isEmpty || Int.random(in: 0..<4, using: &generator) == 0 { break }
                let arc: Arc
                if words.count >= maxLength {
                    guard let nearest = choices.min(by: { distance[$0.to] < distance[$1.to] }) else { break }
                    arc = nearest
                } else {
                    guard let random = choices.randomElement(using: &generator) else { break }
                    arc = random
                }
                words.append(arc.word)
                state = arc.to
            }
            result.append(words)
        }
        return result
    }

    /// Every sentence of at most `maxLength` words.
    fileprivate func sentences(maxLength: Int) -> Set<[String]> {
        var outgoing = [[Arc]](repeating: [], count: stateCount)
        for arc in arcs { outgoing[arc.from].append(arc) }
        var result: Set<[String]> = []
        func walk(_ state: Int, _ words: [String]) {
            if finals.contains(state) { result.insert(words) }
            guard words.count < maxLength else { return }
            for arc in outgoing[state] { walk(arc.to, words + [arc.word]) }
        }
        walk(start, [])
        return result
    }

    /// No null arcs, no two arcs with the same word from a state, arcs within the states.
    fileprivate func checkShape(deterministic: Bool = true) {
        #expect(arcs.allSatisfy { !$0.word.isEmpty && !$0.word.contains(" ") })
        #expect(arcs.allSatisfy { (0..<stateCount).contains($0.from) && (0..<stateCount).contains($0.to) })
        #expect(!finals.contains(start))
        #expect(words == Array(Set(arcs.map(\.word))).sorted())
        if deterministic {
            #expect(isDeterministic)
            #expect(Set(arcs.map { "\($0.from) \($0.word)" }).count == arcs.count)
        }
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The vocabulary of the throughput benchmark.
private let vocabulary = ["playlistTitle": ["Morning Jazz", "Road Trip"], "workoutName": ["Interval Run"]]

@Suite struct AutomatonTests {
    private static let shipped: IntentCatalog? = try? Package.shipped()
    private static let both: IntentCatalog? = try? IntentCatalog.load(intents: [Package.intents, Package.coffee], grammars: [Package.grammars])

    /// Sizes and build times; printed, not asserted beyond sanity bounds.
    @Test func sizeReport() throws {
        let catalogs: [(String, IntentCatalog)] = [
            ("shipped", try Package.shipped()), ("coffee", try Package.barista()),
            ("both", try #require(Self.both)),
        ]
        for (name, catalog) in catalogs {
            var automaton: WordAutomaton?
            let elapsed = ContinuousClock().measure { automaton = catalog.automaton(vocabulary: vocabulary) }
            let result = try #require(automaton)
            let single = result.withSingleFinalState()
            let graph = TokenGraph(intents: catalog.intents, rules: RuleTable(rules: catalog.rules, intents: catalog.intents, vocabulary: vocabulary, symbolicVocabulary: false))
            print(
                "automaton \(name): \(result.stateCount) states, \(result.arcs.count) arcs, \(result.words.count) words, \(result.finals.count) finals;"
                    + " single-final form \(single.stateCount) states, \(single.arcs.count) arcs;"
                    + " token graph \(graph.stateCount) states; built in \(String(format: "%.3f", seconds(elapsed))) s"
            )
            result.checkShape()
            // Minimal: far smaller than the token graph it comes from.
            #expect(result.stateCount <= 2_000)
            #expect(result.stateCount < graph.stateCount)
        }
    }

    /// A catalog keeps the automaton it made last: made again with only an open type's terms
    /// changed it is the same, and with another open type or other terms of a spelled-out type it
    /// is made anew and says them (not the last one's).
    @Test func anOpenTypesTermsLeaveTheAutomatonAsItWas() throws {
        let catalog = try Package.shipped()
        let open: Set<String> = ["playlistTitle"]
        let first = catalog.automaton(vocabulary: ["playlistTitle": ["Morning Jazz"], "workoutName": ["Interval Run"]], openTypes: open)
        let again = catalog.automaton(vocabulary: ["playlistTitle": ["Road Trip", "Rainy Day"], "workoutName": ["Interval Run"]], openTypes: open)
        #expect(again == first)
        let otherWorkout = catalog.automaton(vocabulary: ["playlistTitle": ["Road Trip"], "workoutName": ["Hill Sprints"]], openTypes: open)
        #expect(otherWorkout != first)
        #expect(otherWorkout.words.contains("sprints") && !otherWorkout.words.contains("interval"))
        let closed = catalog.automaton(vocabulary: ["playlistTitle": ["Road Trip"], "workoutName": ["Hill Sprints"]])
        #expect(closed.words.contains("road") && !closed.words.contains { $0.hasPrefix("{playlistTitle}") })
        #expect(first.words.contains { $0.hasPrefix("{playlistTitle}") } && !first.words.contains("jazz"))
        // The same as a catalog that never made one.
        #expect(try Package.shipped().automaton(vocabulary: ["playlistTitle": ["Road Trip"], "workoutName": ["Hill Sprints"]], openTypes: open) == otherWorkout)
    }

    /// Every sentence the parser tests accept, the automaton accepts; the rejected ones it rejects.
    @Test func parserSentencesAreAccepted() throws {
        let catalog = try #require(Self.both)
        let automaton = catalog.automaton(vocabulary: vocabulary)
        let acceptor = WordAutomaton.Acceptor(automaton)
        let parser = catalog.parser(vocabulary: vocabulary)
        var sentences = [
            "set a timer for ten minutes", "Set a pasta timer for ten minutes.", "start a five minute egg timer", "set a timer",
            "timer for an hour and a half", "cancel the timer", "how much time is left", "how long is left on my timer", "pause",
            "pause the music", "resume", "continue the music please", "next track", "play the previous song",
            "set the volume to fifty percent", "volume a hundred", "start a thirty minute run workout", "start a run workout for thirty minutes",
            "begin a yoga workout", "start a bike ride for an hour", "pause my workout", "resume the workout", "end workout", "cancel my workout",
            "stop", "start", "add milk to my shopping list", "put toilet paper on the grocery list", "create a new note",
            "set a pasta timer for an hour and a half", "start a run workout for two hours ten minutes and five seconds",
            "set the volume to seventy five percent", "how much time is left on my timer", "play the playlist morning jazz",
            "can I get a large dark roast double shot americano with lots of almond milk and some brown sugar",
            "may I have a twelve ounce iced mocha", "set a timer for ninety nine seconds",
            "may I have a large iced mocha with some cream and sugar please", "set a timer for 25 minutes", "volume 0",
        ]
        for carrier in BaristaTests.carriers {
            for (slot, values) in BaristaTests.labels {
                for value in values {
                    var slots = ["coffeeDrink": "latte"]
                    slots[slot] = value
                    sentences.append(BaristaTests.sentence(carrier: carrier, slots: slots, modifierOrder: ["size", "roast", "numberOfShots"]))
                }
            }
        }
        for sentence in sentences {
            #expect(!parser.parse(sentence).isEmpty, "parser: \(sentence)")
            #expect(acceptor.accepts(TextNormalizer.words(sentence)), "automaton: \(sentence)")
        }
        let rejected = [
            "set the volume to a hundred and one", "order a pizza", "", "pause pause", "get me a large large latte",
            "what is the weather like", "set a timer for", "volume two hundred", "set a timer for ten",
        ]
        for sentence in rejected {
            #expect(parser.parse(sentence).isEmpty, "parser: \(sentence)")
            #expect(!acceptor.accepts(TextNormalizer.words(sentence)), "automaton: \(sentence)")
        }
    }

    /// Random sentences of the automaton all parse, for the shipped intents, the coffee example and both.
    @Test(arguments: ["shipped", "coffee", "both"])
    func sampledSentencesParse(name: String) throws {
        let catalog =
            switch name {
            case "shipped": try Package.shipped()
            case "coffee": try Package.barista()
            default: try #require(Self.both)
            }
        let automaton = catalog.automaton(vocabulary: vocabulary)
        let parser = catalog.parser(vocabulary: vocabulary)
        var failures: [String] = []
        for words in automaton.samples(600, seed: UInt64(name.count)) {
            let sentence = words.joined(separator: " ")
            if parser.parse(sentence).isEmpty { failures.append(sentence) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// An integer parameter with a small range accepts exactly the in-range forms the parser accepts.
    @Test func integerRangeIsSpelledOut() throws {
        let narrowed = try singleSlotCatalog(type: "integer", extra: #", "minimum": 0, "maximum": 100"#).automaton()
        let full = try singleSlotCatalog(type: "integer").automaton()
        narrowed.checkShape()
        full.checkShape()
        // Every form of 0...100 has at most two words after "say"; "say a hundred" and "say one hundred" both count.
        let expected = full.sentences(maxLength: 4).filter { words in
            guard let value = SpokenNumbers.integer(from: words.dropFirst().map { Substring($0) }) else { return false }
            return (0...100).contains(value)
        }
        #expect(narrowed.sentences(maxLength: 10) == expected)
        #expect(expected.contains(["say", "a", "hundred"]) && expected.contains(["say", "one", "hundred"]))
        #expect(expected.count == 102)
        // The full integer rule keeps every form up to 999,999.
        #expect(full.accepts("say nine hundred and ninety nine thousand nine hundred ninety nine".split(separator: " ").map(String.init)))
        #expect(!narrowed.accepts(["say", "one", "hundred", "and", "one"]))
        // A wide range is not spelled out: the parser checks it.
        let wide = try singleSlotCatalog(type: "integer", extra: #", "minimum": 0, "maximum": 5000"#).automaton()
        #expect(wide == full)
    }

    /// `+` and `*` become loops, in templates and in rule files.
    @Test func repeatsAreLoops() throws {
        let text = intentFile(
            """
                { "name": "praise", "templates": ["say (very)+ good", "say <names>"] }
            """
        )
        let rules = [("g.gram", "#JSGF V1.0;\ngrammar g;\n<names> = (ann | bob) (and (ann | bob))*;\n")]
        let catalog = try load(text, rules: rules).get()
        let automaton = catalog.automaton()
        automaton.checkShape()
        let acceptor = WordAutomaton.Acceptor(automaton)
        for sentence in ["say very good", "say very very very very good", "say ann", "say bob and ann and ann and bob"] {
            #expect(acceptor.accepts(sentence.split(separator: " ").map(String.init)), "\(sentence)")
            #expect(!catalog.parse(sentence).isEmpty, "\(sentence)")
        }
        for sentence in ["say good", "say very", "say ann and", "say and bob"] {
            #expect(!acceptor.accepts(sentence.split(separator: " ").map(String.init)), "\(sentence)")
            #expect(catalog.parse(sentence).isEmpty, "\(sentence)")
        }
        // A loop needs a cycle, and the minimal automaton has few states.
        #expect(automaton.arcs.contains { $0.to <= $0.from })
        #expect(automaton.stateCount <= 7)
    }

    /// The state-limit fallback: no null arcs, the same language, not deterministic.
    @Test func fallbackWithoutDeterminizing() throws {
        let catalog = try Package.shipped()
        let table = RuleTable(rules: catalog.rules, intents: catalog.intents, vocabulary: vocabulary, symbolicVocabulary: false)
        let builder = AutomatonBuilder(graph: TokenGraph(intents: catalog.intents, rules: table))
        let nfa = builder.build(stateLimit: 10)
        let dfa = builder.build()
        #expect(!nfa.isDeterministic)
        nfa.checkShape(deterministic: false)
        print("automaton shipped (no range narrowing): \(dfa.stateCount) states, \(dfa.arcs.count) arcs; fallback NFA: \(nfa.stateCount) states, \(nfa.arcs.count) arcs")
        let nfaAcceptor = WordAutomaton.Acceptor(nfa)
        for words in dfa.samples(300, seed: 7) { #expect(nfaAcceptor.accepts(words), "\(words)") }
        let dfaAcceptor = WordAutomaton.Acceptor(dfa)
        for words in nfa.samples(300, seed: 8) { #expect(dfaAcceptor.accepts(words), "\(words)") }
    }

    /// The single-final form keeps the language, has one final state without outgoing arcs, and no null arcs.
    @Test func singleFinalState() throws {
        let automaton = try #require(Self.shipped).automaton()
        #expect(automaton.finals.count > 1)
        let single = automaton.withSingleFinalState()
        single.checkShape(deterministic: false)
        let final = try #require(single.finals.first)
        #expect(single.finals.count == 1)
        #expect(!single.arcs.contains { $0.from == final })
        let singleAcceptor = WordAutomaton.Acceptor(single)
        for words in automaton.samples(400, seed: 3) { #expect(singleAcceptor.accepts(words), "\(words)") }
        let acceptor = WordAutomaton.Acceptor(automaton)
        for words in single.samples(400, seed: 4) { #expect(acceptor.accepts(words), "\(words)") }
        #expect(!single.accepts(["pause", "the"]))
    }

    private static func pocketSphinxGrammar(_ path: String, fallback: String) -> String {
        (try? String(contentsOfFile: "/usr/share/pocketsphinx/test/data/\(path)", encoding: .utf8)) ?? fallback
    }

    /// PocketSphinx's cards test grammar (`#JSGF v1.0;`, lower-case v) converts.
    @Test func cardsGrammar() throws {
        let text = Self.pocketSphinxGrammar("cards/cards.gram", fallback: """
            #JSGF v1.0;
            grammar cards;
            public <cards> = <cards_3> | <cards_2> | <card> | <cards_same_suit> | <cards_no_suit>;
            <cards_3> = <card> <card> <card>;
            <cards_2> = <card> <card>;
            <cards_same_suit> = <rank> <card>;
            <cards_no_suit> = <rank> <rank>;
            <card> = <rank> [ of ] <suits>;
            <suits> = clubs | hearts | diamonds | spades;
            <rank> = ace | two | three | four | five | six | seven | eight | nine | ten | jack | queen | king | lady;
            """)
        let automaton = try IntentCatalog.automaton(jsgf: text, path: "cards.gram")
        automaton.checkShape()
        print("automaton cards.gram: \(automaton.stateCount) states, \(automaton.arcs.count) arcs")
        var accepted = ["ten of clubs", "eight of spades four of clubs seven of hearts", "ace king", "queen hearts", "two three of diamonds", "lady of spades jack hearts"]
        if let transcription = try? String(contentsOfFile: "/usr/share/pocketsphinx/test/data/cards/cards.transcription", encoding: .utf8) {
            // Lines are `<s> words </s> (fileid)`.
            accepted += transcription.split(separator: "\n").map { line in
                (line.split(separator: "(").first ?? "").split(separator: " ").filter { !$0.hasPrefix("<") }.joined(separator: " ")
            }.filter { !$0.isEmpty }
        }
        for sentence in accepted { #expect(automaton.accepts(TextNormalizer.words(sentence)), "\(sentence)") }
        for sentence in ["of clubs", "ten of", "ten", "clubs", "ten of clubs ten of clubs ten of clubs ten of clubs", "ace king queen", "ten of of clubs", ""] {
            #expect(!automaton.accepts(TextNormalizer.words(sentence)), "\(sentence)")
        }
    }

    /// PocketSphinx's goforward grammar has two public rules: the automaton is their union.
    @Test func goForwardGrammar() throws {
        let text = Self.pocketSphinxGrammar("goforward.gram", fallback: """
            #JSGF V1.0;
            grammar goforward;
            public <move> = go forward ten meters;
            public <move2> = go <direction> <distance> [meter | meters];
            <direction> = forward | backward;
            <distance> = one | two | three | four | five | six | seven | eight | nine | ten;
            """)
        let automaton = try IntentCatalog.automaton(jsgf: text, path: "goforward.gram")
        automaton.checkShape()
        print("automaton goforward.gram: \(automaton.stateCount) states, \(automaton.arcs.count) arcs")
        for sentence in ["go forward ten meters", "go backward three", "go forward two meter", "go backward ten meters"] {
            #expect(automaton.accepts(TextNormalizer.words(sentence)), "\(sentence)")
        }
        for sentence in ["go left ten meters", "go forward", "forward ten meters", "go forward eleven meters", "go forward ten meters meters"] {
            #expect(!automaton.accepts(TextNormalizer.words(sentence)), "\(sentence)")
        }
        #expect(automaton.stateCount == 5)
    }

    @Test func standaloneGrammarErrors() throws {
        #expect(throws: SourceError.self) { try IntentCatalog.automaton(jsgf: "#JSGF V1.0;\ngrammar g;\n<a> = b;\n", path: "g.gram") }
        #expect(throws: SourceError.self) { try IntentCatalog.automaton(jsgf: "#JSGF V1.0;\ngrammar g;\npublic <a> = <missing>;\n", path: "g.gram") }
        // Tags do not change the language; the empty sentence is left out.
        let tagged = try IntentCatalog.automaton(jsgf: "#JSGF V1.0;\ngrammar g;\npublic <a> = [yes {y} | no {n}];\n", path: "g.gram")
        #expect(tagged.accepts(["yes"]) && tagged.accepts(["no"]) && !tagged.accepts([]))
    }

    /// How fast the automaton checks sentences next to the parser; printed, not asserted.
    @Test func acceptThroughput() throws {
        let catalog = try #require(Self.both)
        let automaton = catalog.automaton(vocabulary: vocabulary)
        let acceptor = WordAutomaton.Acceptor(automaton)
        let parser = catalog.parser(vocabulary: vocabulary)
        let sentences = automaton.samples(500, seed: 11)
        let texts = sentences.map { $0.joined(separator: " ") }
        var accepted = 0
        let automatonTime = ContinuousClock().measure {
            for _ in 0..<4 { for words in sentences where acceptor.accepts(words) { accepted += 1 } }
        }
        var parsed = 0
        let parserTime = ContinuousClock().measure {
            for text in texts where !parser.parse(text).isEmpty { parsed += 1 }
        }
        print(
            "acceptThroughput: automaton \(Int(Double(4 * sentences.count) / seconds(automatonTime))) sentences/s,"
                + " parser \(Int(Double(texts.count) / seconds(parserTime))) sentences/s"
        )
        #expect(accepted == 4 * sentences.count && parsed == texts.count)
    }
}
