import HeedCore
import Foundation
import Testing
@testable import HeedIntents

/// Checks that JSGF text is well formed enough for PocketSphinx: header, balanced brackets,
/// every rule defined once, every reference defined, words lower-case.
private func checkSanity(_ jsgf: String) {
    #expect(jsgf.hasPrefix("#JSGF V1.0;\n\ngrammar heed;\n"))
    var defined: [String] = []
    var referenced: Set<String> = []
    for statement in jsgf.split(separator: ";").dropFirst(2) where !statement.allSatisfy(\.isWhitespace) {
        let parts = statement.split(separator: "=", maxSplits: 1)
        #expect(parts.count == 2, "statement without '=': \(statement)")
        guard parts.count == 2 else { continue }
        let head = parts[0].replacingOccurrences(of: "public", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(head.hasPrefix("<") && head.hasSuffix(">"), "bad rule head \(head)")
        defined.append(String(head.dropFirst().dropLast()))
        var stack: [Character] = []
        var name: String?
        for character in parts[1] {
            switch character {
            case "(", "[": stack.append(character)
            case ")": #expect(stack.popLast() == "(", "unbalanced ) in \(head)")
            case "]": #expect(stack.popLast() == "[", "unbalanced ] in \(head)")
            case "<": name = ""
            case ">":
                if let reference = name { referenced.insert(reference) }
                name = nil
            default:
                if name != nil {
                    name?.append(character)
                } else if character.isLetter {
                    #expect(character.isLowercase, "upper-case word in \(head)")
                }
            }
        }
        #expect(stack.isEmpty, "unclosed group in \(head)")
    }
    #expect(Set(defined).count == defined.count, "a rule is defined twice")
    let missing = referenced.subtracting(defined).subtracting(["NULL", "VOID"])
    #expect(missing.isEmpty, "undefined rules: \(missing.sorted())")
}

@Suite struct GrammarTests {
    @Test func shippedGrammarIsSane() throws {
        let catalog = try Package.shipped()
        checkSanity(catalog.grammar().jsgf)
        let withVocabulary = catalog.grammar(vocabulary: ["playlistTitle": ["Morning Jazz", "AC/DC Hits"], "noteTitle": ["Ideas"]])
        checkSanity(withVocabulary.jsgf)
        #expect(withVocabulary.jsgf.contains("<heed_vocab_playlistTitle> = morning jazz | ac dc hits;"))
        #expect(try Package.barista().grammar().jsgf.contains("<heed_intent_orderDrink>"))
        checkSanity(try Package.barista().grammar().jsgf)
    }

    @Test func grammarIsCompact() throws {
        let jsgf = try Package.shipped().grammar().jsgf
        // 30 kB for 37 intents of natural phrasings (docs/MEASUREMENTS.md has the automaton's size,
        // which is what the recognizer searches).
        #expect(jsgf.count < 40_000)
        // The number rules are written once however many intents use them.
        #expect(jsgf.components(separatedBy: "<heed_integer> =").count == 2)
    }

    @Test func emptyVocabularyLeavesOutWhatNeedsIt() throws {
        let jsgf = try Package.shipped().grammar().jsgf
        #expect(!jsgf.contains("heed_intent_playMedia"))
        // A note title is said only after "titled" (or "called", "named"): with no titles registered,
        // those templates are left out.
        #expect(!jsgf.contains("titled"))
        #expect(jsgf.contains("<heed_intent_createNote> = [<heed_rule_intent_phrases_polite>] (create | make | start | take | write) a [new] note [<heed_rule_intent_phrases_thanks>]"))
        let noIntents = try IntentCatalog(intentSources: []).grammar().jsgf
        #expect(noIntents.contains("public <command> = <VOID>;"))
    }

    @Test func exactGrammarOfASmallCatalog() throws {
        let text = intentFile(
            """
                { "name": "greet", "parameters": [{ "name": "who", "type": "enumeration", "cases": [{ "value": "ada", "synonyms": ["Ada", "ada lovelace"] }] }],
                  "templates": ["(hello | hi) [<there>] {who}", "Good Morning"] }
            """
        )
        let rules = [("g.gram", "#JSGF V1.0;\ngrammar g;\n<there> = there;\n<unused> = never;\n")]
        let grammar = try IntentCatalog(intentSources: [("t.json", text)], ruleSources: rules).grammar()
        #expect(
            grammar.jsgf == """
                #JSGF V1.0;

                grammar heed;

                public <command> = <heed_intent_greet>;

                <heed_rule_g_there> = there;
                <heed_slot_greet_who> = ada | ada lovelace;
                <heed_intent_greet> = (hello | hi) [<heed_rule_g_there>] <heed_slot_greet_who>
                    | good morning;

                """
        )
        #expect(grammar.words["there"] == SourceLocation(path: "g.gram", line: 3, column: 11))
        #expect(grammar.words["hello"] == SourceLocation(path: "t.json", line: 5, column: 23))
        #expect(grammar.words["lovelace"]?.path == "t.json")
        #expect(grammar.words["never"] == nil)
        #expect(Set(grammar.words.keys) == ["hello", "hi", "there", "ada", "lovelace", "good", "morning"])
    }

    @Test func wordsIncludeBuiltinsAndVocabulary() throws {
        let grammar = try Package.shipped().grammar(vocabulary: ["playlistTitle": ["Morning Jazz"]])
        #expect(grammar.words["ninety"]?.path == BuiltinRules.path)
        #expect(grammar.words["jazz"] == SourceLocation(path: "vocabulary:playlistTitle", line: 1, column: 1))
        #expect(grammar.words["timer"]?.path.hasSuffix("intents/timer.json") == true)
        #expect(grammar.words.keys.allSatisfy { $0 == $0.lowercased() })
    }
}

@Suite struct ConflictTests {
    @Test func overlappingTemplatesAreReported() throws {
        let text = intentFile(
            """
                { "name": "pause", "templates": ["pause [it]"] },
                { "name": "pauseMusic", "templates": ["pause [the] music", "(pause | stop) [it]"] },
                { "name": "timer", "parameters": [{ "name": "d", "type": "duration" }], "templates": ["timer for {d}"] },
                { "name": "alarm", "parameters": [{ "name": "n", "type": "integer" }], "templates": ["timer for {n} minutes"] }
            """
        )
        let conflicts = try IntentCatalog(intentSources: [("t.json", text)]).conflicts()
        #expect(conflicts.map(\.example) == ["pause", "timer for one minutes"])
        #expect(conflicts.first?.first.intent == "pause")
        #expect(conflicts.first?.second.template == "(pause | stop) [it]")
        #expect(
            conflicts.first?.description
                == "t.json:5:64: error: \"pause\" is accepted by both pauseMusic (t.json:5:64) and pause (t.json:4:38)"
        )
    }

    @Test func vocabularySlotsConflictSymbolically() throws {
        let text = intentFile(
            """
                { "name": "playList", "parameters": [{ "name": "p", "type": "vocabulary", "vocabularyType": "playlistTitle" }], "templates": ["play {p}"] },
                { "name": "playAlbum", "parameters": [{ "name": "a", "type": "vocabulary", "vocabularyType": "playlistTitle" }], "templates": ["play {a}"] },
                { "name": "playSong", "parameters": [{ "name": "s", "type": "vocabulary", "vocabularyType": "songTitle" }], "templates": ["play {s}"] }
            """
        )
        let conflicts = try IntentCatalog(intentSources: [("t.json", text)]).conflicts()
        #expect(conflicts.map(\.example) == ["play {playlistTitle}"])
    }

    @Test func shippedAndExampleIntentsTogetherDoNotConflict() throws {
        let catalog = try IntentCatalog.load(intents: [Package.intents, Package.coffee], grammars: [Package.grammars])
        #expect(catalog.conflicts().isEmpty)
    }
}

@Suite struct ResponseTests {
    @Test func rendersValuesInWords() throws {
        let catalog = try Package.shipped()
        let timer = try #require(catalog.intent(named: "setTimer"))
        #expect(timer.response("success", values: ["duration": .duration(seconds: 600)]) == "Timer set for ten minutes.")
        #expect(timer.response("successWithLabel", values: ["duration": .duration(seconds: 5400), "label": .vocabulary("pasta")]) == "pasta timer set for one hour thirty minutes.")
        #expect(timer.response("missing", values: [:]) == nil)
        let volume = try #require(catalog.intent(named: "setVolume"))
        #expect(volume.response("success", values: ["level": .integer(40)]) == "Volume set to 40 percent.")
    }

    @Test func missingValuesAreLeftOut() throws {
        let catalog = try Package.barista()
        let order = try #require(catalog.intent(named: "orderDrink"))
        #expect(order.response("success", values: ["coffeeDrink": .enumeration("latte")]) == "One latte, coming up.")
    }
}
