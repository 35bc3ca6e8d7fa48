import HeedCore
import Testing
@testable import HeedIntents

/// An intent file whose fourth line holds one intent with `template`.
private func templateFile(_ template: String, parameters: String = "") -> String {
    intentFile("    { \"name\": \"probe\", \"parameters\": [\(parameters)], \"templates\": [\"\(template)\"] }")
}

private let numberParameter = #"{ "name": "n", "type": "integer" }"#

@Suite struct TemplateFeatureTests {
    private func matches(_ template: String, _ text: String, parameters: String = "") throws -> [IntentMatch] {
        try IntentCatalog(intentSources: [("t.json", templateFile(template, parameters: parameters))]).parse(text)
    }

    @Test func optionalWordsMayBeLeftOut() throws {
        #expect(try matches("set [a] timer", "set a timer").map(\.intent) == ["probe"])
        #expect(try matches("set [a] timer", "set timer").map(\.intent) == ["probe"])
        #expect(try matches("set [a] timer", "set a a timer").isEmpty)
    }

    @Test func alternativesTakeExactlyOne() throws {
        #expect(try matches("(play | put on) music", "put on music").count == 1)
        #expect(try matches("(play | put on) music", "play music").count == 1)
        #expect(try matches("(play | put on) music", "play put on music").isEmpty)
        #expect(try matches("(play | put on) music", "music").isEmpty)
    }

    @Test func groupsNest() throws {
        let template = "[turn [the]] (lights | lamp (on | off) [now])"
        for text in ["lights", "turn lights", "turn the lamp off now", "lamp on"] {
            #expect(try matches(template, text).count == 1, "\(text)")
        }
        #expect(try matches(template, "the lights").isEmpty)
    }

    @Test func topLevelAlternatives() throws {
        #expect(try matches("stop | halt now", "halt now").count == 1)
    }

    @Test func slotsCaptureTypedValues() throws {
        let found = try matches("volume {n} [percent]", "Volume twenty-five percent!", parameters: numberParameter)
        #expect(found == [IntentMatch(intent: "probe", parameters: ["n": .integer(25)])])
    }

    @Test func rulesComeFromRuleFiles() throws {
        let rules = [("g.gram", "#JSGF V1.0;\ngrammar g;\n<polite> = please | kindly;\n")]
        let catalog = try IntentCatalog(intentSources: [("t.json", templateFile("<polite> stop"))], ruleSources: rules)
        #expect(catalog.parse("kindly stop").count == 1)
        #expect(catalog.parse("stop").isEmpty)
    }

    @Test func textIsNormalized() throws {
        #expect(try matches("i'd like tea", "I'd like TEA.").count == 1)
        #expect(try matches("volume {n}", "volume 40", parameters: numberParameter).first?.parameters["n"] == .integer(40))
    }

    @Test func parameterMayAppearTwiceButIsCapturedOnce() throws {
        let parameters = #"{ "name": "a", "type": "enumeration", "cases": [{ "value": "x" }] }, { "name": "b", "type": "enumeration", "cases": [{ "value": "y" }] }"#
        let template = "go [({a} | {b}) [({a} | {b})]] now"
        #expect(try matches(template, "go y x now", parameters: parameters).first?.parameters == ["a": .enumeration("x"), "b": .enumeration("y")])
        #expect(try matches(template, "go x x now", parameters: parameters).isEmpty)
    }
}

@Suite struct RankingTests {
    @Test func moreTemplateWordsRankFirst() throws {
        let text = intentFile(
            """
                { "name": "generic", "parameters": [{ "name": "thing", "type": "phrase", "grammar": "the music | music" }], "templates": ["pause {thing}"] },
                { "name": "specific", "templates": ["pause the music"] }
            """
        )
        let catalog = try IntentCatalog(intentSources: [("t.json", text)])
        #expect(catalog.parse("pause the music").map(\.intent) == ["specific", "generic"])
    }

    @Test func fewerSkippedOptionalsRankFirst() throws {
        let text = intentFile(
            """
                { "name": "loose", "templates": ["[please] stop [now] [it]"] },
                { "name": "tight", "templates": ["stop [it]"] }
            """
        )
        let catalog = try IntentCatalog(intentSources: [("t.json", text)])
        #expect(catalog.parse("stop it").map(\.intent) == ["tight", "loose"])
        #expect(catalog.parse("please stop").map(\.intent) == ["loose"])
    }

    @Test func declarationOrderBreaksTies() throws {
        let text = intentFile(
            """
                { "name": "first", "templates": ["stop"] },
                { "name": "second", "templates": ["stop"] }
            """
        )
        #expect(try IntentCatalog(intentSources: [("t.json", text)]).parse("stop").map(\.intent) == ["first", "second"])
    }
}

@Suite struct TemplateErrorTests {
    private func error(_ template: String, parameters: String = "") -> String? {
        loadError(templateFile(template, parameters: parameters))
    }

    @Test func unbalancedOpeningBracket() {
        #expect(
            error("set [a timer") == """
                intents/test.json:4:61: error: unbalanced '[': missing ']'
                    { "name": "probe", "parameters": [], "templates": ["set [a timer"] }
                                                                            ^
                """
        )
    }

    @Test func unbalancedClosingBracket() {
        #expect(
            error("set a] timer") == """
                intents/test.json:4:62: error: unbalanced ']': no matching '['
                    { "name": "probe", "parameters": [], "templates": ["set a] timer"] }
                                                                             ^
                """
        )
    }

    @Test func mismatchedBracket() {
        #expect(
            error("(play ] music") == """
                intents/test.json:4:63: error: expected ')' to close '(' at column 57, found ']'
                    { "name": "probe", "parameters": [], "templates": ["(play ] music"] }
                                                                              ^
                """
        )
    }

    @Test func emptyAlternative() {
        #expect(
            error("(play | ) music") == """
                intents/test.json:4:65: error: empty alternative
                    { "name": "probe", "parameters": [], "templates": ["(play | ) music"] }
                                                                                ^
                """
        )
        #expect(error("play | | stop")?.hasPrefix("intents/test.json:4:64: error: empty alternative") == true)
        #expect(error("| stop")?.hasPrefix("intents/test.json:4:57: error: empty alternative") == true)
    }

    @Test func emptyGroupAndOptional() {
        #expect(error("play ()")?.hasPrefix("intents/test.json:4:62: error: empty group '()'") == true)
        #expect(error("play []")?.hasPrefix("intents/test.json:4:62: error: empty optional '[]'") == true)
    }

    @Test func unknownRule() {
        #expect(
            error("play <song>") == """
                intents/test.json:4:62: error: unknown rule <song>
                    { "name": "probe", "parameters": [], "templates": ["play <song>"] }
                                                                             ^
                """
        )
    }

    @Test func unknownParameter() {
        #expect(
            error("volume {levle}", parameters: #"{ "name": "level", "type": "integer" }"#) == """
                intents/test.json:4:102: error: unknown parameter {levle}; declared: level
                    { "name": "probe", "parameters": [{ "name": "level", "type": "integer" }], "templates": ["volume {levle}"] }
                                                                                                                     ^
                """
        )
    }

    @Test func strayCharacter() {
        #expect(
            error("play music!") == """
                intents/test.json:4:67: error: unexpected character '!'
                    { "name": "probe", "parameters": [], "templates": ["play music!"] }
                                                                                  ^
                """
        )
    }

    @Test func unterminatedSlotAndRule() {
        #expect(error("play {n")?.hasPrefix("intents/test.json:4:62: error: missing '}' to close '{'") == true)
        #expect(error("play <n")?.hasPrefix("intents/test.json:4:62: error: missing '>' to close '<'") == true)
        #expect(error("play {}")?.hasPrefix("intents/test.json:4:62: error: empty parameter name") == true)
        #expect(error("play {a b}")?.hasPrefix("intents/test.json:4:55: error: unexpected character ' ' in parameter name") == false)
    }

    @Test func emptyTemplate() {
        #expect(error("")?.hasPrefix("intents/test.json:4:57: error: empty template") == true)
    }

    /// A JSON escape is six characters in the file but one in the template: the caret must follow the file.
    @Test func columnsCountEscapesAsWritten() {
        #expect(
            error(#"caf\u00e9 \"x\" ["#) == #"""
                intents/test.json:4:67: error: unexpected character '"'
                    { "name": "probe", "parameters": [], "templates": ["caf\u00e9 \"x\" ["] }
                                                                                  ^
                """#
        )
    }
}
