import HeedCore
import Foundation
import Testing
@testable import HeedIntents

@Suite struct JSONSyntaxTests {
    @Test func trailingComma() {
        #expect(
            loadError("{\n  \"domain\": \"x\",\n  \"intents\": [1,]\n}") == """
                intents/test.json:3:17: error: unexpected character ']', expected a value
                  "intents": [1,]
                                ^
                """
        )
    }

    @Test func unterminatedString() {
        #expect(loadError("{\"domain\": \"x") == "intents/test.json:1:14: error: unterminated string\n{\"domain\": \"x\n             ^")
    }

    @Test func missingColonAndBadLiteral() {
        #expect(loadError("{\"domain\" \"x\"}")?.hasPrefix("intents/test.json:1:11: error: expected ':'") == true)
        #expect(loadError("{\"domain\": tru}")?.hasPrefix("intents/test.json:1:12: error: invalid literal, expected 'true'") == true)
        #expect(loadError("{} x")?.hasPrefix("intents/test.json:1:4: error: unexpected text after the JSON value") == true)
        #expect(loadError("")?.hasPrefix("intents/test.json:1:1: error: unexpected end of file, expected a value") == true)
    }

    @Test func duplicateKey() {
        #expect(loadError("{\"domain\": \"a\", \"domain\": \"b\"}")?.hasPrefix("intents/test.json:1:17: error: duplicate key 'domain'") == true)
    }

    @Test func escapesDecode() throws {
        let source = SourceText(path: "x.json", text: #"["a\n\u00e9\ud83d\ude00\"b"]"#)
        guard case .array(let elements) = try LocatedJSONParser.parse(source).kind, case .string(let text) = elements.first?.kind else {
            Issue.record("not an array of one string")
            return
        }
        #expect(text == "a\né😀\"b")
        #expect(elements[0].scalarLocations.map(\.column) == [3, 4, 6, 12, 24, 26, 27])
    }

    @Test func numbers() throws {
        let source = SourceText(path: "x.json", text: "[-1.5e2, 0, 42]")
        guard case .array(let elements) = try LocatedJSONParser.parse(source).kind else {
            Issue.record("not an array")
            return
        }
        let values = elements.compactMap { element -> Double? in
            if case .number(let value) = element.kind { return value }
            return nil
        }
        #expect(values == [-150, 0, 42])
        #expect(loadError("[1.]")?.hasPrefix("intents/test.json:1:2: error: invalid number '1.'") == true)
    }
}

@Suite struct SchemaErrorTests {
    @Test func missingKey() {
        #expect(
            loadError(intentFile("    { \"name\": \"probe\" }")) == """
                intents/test.json:4:5: error: missing key 'templates' in an intent
                    { "name": "probe" }
                    ^
                """
        )
    }

    @Test func wrongType() {
        #expect(
            loadError(intentFile("    { \"name\": \"probe\", \"templates\": \"stop\" }")) == """
                intents/test.json:4:37: error: expected 'templates' (an array), found a string
                    { "name": "probe", "templates": "stop" }
                                                    ^
                """
        )
        #expect(
            loadError(intentFile("    { \"name\": \"probe\", \"templates\": [\"stop\"], \"requiresConfirmation\": \"yes\" }"))?
                .hasPrefix("intents/test.json:4:71: error: expected 'requiresConfirmation' (true or false), found a string") == true
        )
    }

    @Test func unknownKey() {
        #expect(
            loadError(intentFile("    { \"name\": \"probe\", \"template\": [\"stop\"] }"))?
                .hasPrefix("intents/test.json:4:24: error: unknown key 'template' in an intent; expected one of 'activityKind', 'contextual', 'control', 'description', 'name', 'parameters', 'requiresConfirmation', 'responses', 'target', 'templates'") == true
        )
    }

    @Test func unknownParameterType() {
        let text = intentFile("    { \"name\": \"probe\", \"parameters\": [{ \"name\": \"x\", \"type\": \"colour\" }], \"templates\": [\"say {x}\"] }")
        #expect(
            loadError(text) == """
                intents/test.json:4:62: error: unknown parameter type 'colour'; expected one of integer, number, boolean, duration, ordinal, enumeration, vocabulary, phrase
                    { "name": "probe", "parameters": [{ "name": "x", "type": "colour" }], "templates": ["say {x}"] }
                                                                             ^
                """
        )
    }

    @Test func typeSpecificKeys() {
        let text = intentFile("    { \"name\": \"probe\", \"parameters\": [{ \"name\": \"x\", \"type\": \"integer\", \"cases\": [] }], \"templates\": [\"say {x}\"] }")
        #expect(loadError(text)?.hasPrefix("intents/test.json:4:73: error: 'cases' is only allowed for enumeration and vocabulary parameters") == true)
        let noVocabularyType = intentFile("    { \"name\": \"probe\", \"parameters\": [{ \"name\": \"x\", \"type\": \"vocabulary\" }], \"templates\": [\"say {x}\"] }")
        #expect(loadError(noVocabularyType)?.hasPrefix("intents/test.json:4:39: error: missing key 'vocabularyType' in a parameter") == true)
    }

    @Test func duplicateIntentNameAcrossFiles() {
        let first = intentFile("    { \"name\": \"stop\", \"templates\": [\"stop\"] }")
        let second = intentFile("\n    { \"name\": \"stop\", \"templates\": [\"halt\"] }")
        #expect(throws: SourceError.self) { try IntentCatalog(intentSources: [("a.json", first), ("b.json", second)]) }
        do {
            _ = try IntentCatalog(intentSources: [("a.json", first), ("b.json", second)])
        } catch {
            #expect(
                "\(error)" == """
                    b.json:5:15: error: duplicate intent name 'stop' (first defined at a.json:4:15)
                        { "name": "stop", "templates": ["halt"] }
                                  ^
                    """
            )
        }
    }

    @Test func duplicateParameterAndSynonym() {
        let parameters = #"{ "name": "x", "type": "integer" }, { "name": "x", "type": "number" }"#
        #expect(loadError(intentFile("    { \"name\": \"p\", \"parameters\": [\(parameters)], \"templates\": [\"a\"] }"))?
            .hasPrefix("intents/test.json:4:81: error: duplicate parameter 'x' (first declared at intents/test.json:4:45)") == true)
        let cases = #"{ "name": "x", "type": "enumeration", "cases": [{ "value": "a", "synonyms": ["one"] }, { "value": "b", "synonyms": ["one"] }] }"#
        #expect(loadError(intentFile("    { \"name\": \"p\", \"parameters\": [\(cases)], \"templates\": [\"a {x}\"] }"))?
            .hasPrefix("intents/test.json:4:151: error: synonym 'one' already says case 'a'") == true)
    }

    @Test func responsePlaceholdersMustBeDeclared() {
        let text = intentFile("    { \"name\": \"p\", \"templates\": [\"go\"], \"responses\": { \"success\": \"Going to {place}.\" } }")
        #expect(
            loadError(text) == """
                intents/test.json:4:77: error: unknown parameter {place}; declared: none
                    { "name": "p", "templates": ["go"], "responses": { "success": "Going to {place}." } }
                                                                                            ^
                """
        )
    }

    @Test func phraseGrammarCannotHaveSlots() {
        let parameters = #"{ "name": "x", "type": "phrase", "grammar": "a {x}" }"#
        #expect(loadError(intentFile("    { \"name\": \"p\", \"parameters\": [\(parameters)], \"templates\": [\"{x}\"] }"))?
            .hasPrefix("intents/test.json:4:82: error: a phrase grammar cannot contain a parameter {x}") == true)
    }

    @Test func unreadableFile() {
        #expect(throws: SourceError.self) {
            try IntentCatalog.load(intents: [Package.root.appendingPathComponent("no-such-file.json")], grammars: [])
        }
    }
}

@Suite struct ShippedFileTests {
    @Test func everyShippedFileLoads() throws {
        let catalog = try Package.shipped()
        #expect(Set(catalog.intents.map(\.domain)) == ["media", "workout", "timer", "lists", "control"])
        #expect(catalog.intents.count == 37)
        #expect(try Package.barista().intents.map(\.name) == ["orderDrink"])
    }

    @Test func shippedIntentsDoNotConflict() throws {
        #expect(try Package.shipped().conflicts().isEmpty)
    }

    @Test func definitionsKeepTheirFields() throws {
        let catalog = try Package.shipped()
        let timer = try #require(catalog.intent(named: "setTimer"))
        #expect(timer.domain == "timer")
        #expect(timer.parameter(named: "duration")?.isRequired == true)
        #expect(timer.parameter(named: "duration")?.prompt == "For how long?")
        #expect(timer.parameter(named: "label")?.isRequired == false)
        #expect(timer.location.path.hasSuffix("intents/timer.json"))
        #expect(catalog.intent(named: "cancelWorkout")?.requiresConfirmation == true)
        #expect(catalog.intent(named: "setVolume")?.parameter(named: "level")?.maximum == 100)
    }
}

@Suite struct DocumentationTests {
    /// The complete example in docs/INTENTS.md loads and behaves as the document says.
    @Test func intentsReferenceExampleLoads() throws {
        let document = try String(contentsOf: Package.root.appendingPathComponent("docs/INTENTS.md"), encoding: .utf8)
        let example = try #require(document.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let rules = "#JSGF V1.0;\ngrammar intent_phrases;\n<determiner> = the | my | this;   // used as [<determiner>] in templates\n"
        #expect(document.contains(rules))
        let catalog = try IntentCatalog(intentSources: [("intents/timer.json", example)], ruleSources: [("grammars/intent-phrases.gram", rules)])
        #expect(catalog.parse("Set a pasta timer for ten minutes.").first?.jsonText == #"{"intent": "setTimer", "parameters": {"duration": 600, "label": "pasta"}}"#)
        #expect(catalog.intent(named: "setTimer")?.response("success", values: ["duration": .duration(seconds: 600)]) == "Timer set for ten minutes.")
    }
}

@Suite struct ParameterRangeTests {
    @Test func maximumBelowMinimumIsALocatedError() {
        let text = """
            {"domain": "x", "intents": [{"name": "setVolume", "description": "d",
              "parameters": [{"name": "level", "type": "integer", "minimum": 100, "maximum": 0}],
              "templates": ["volume {level}"]}]}
            """
        // Loading used to accept this and the parser then trapped on an empty range.
        let error = loadError(text)
        #expect(error?.hasPrefix("intents/test.json:2:") == true, "\(error ?? "no error")")
        #expect(error?.contains("error: 'maximum' 0 is below 'minimum' 100") == true, "\(error ?? "no error")")
    }
}
