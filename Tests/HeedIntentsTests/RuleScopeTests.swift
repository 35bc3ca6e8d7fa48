import HeedCore
import Foundation
import Testing
@testable import HeedIntents

/// A catalog of one intent `probe` with the given templates and rule files.
private func probe(_ templates: [String], rules: [(path: String, text: String)]) -> Result<IntentCatalog, SourceError> {
    let list = templates.map { "\"\($0)\"" }.joined(separator: ", ")
    return load(intentFile("    { \"name\": \"probe\", \"templates\": [\(list)] }"), rules: rules, path: "t.json")
}

private func rule(_ grammar: String, _ body: String) -> (path: String, text: String) {
    ("grammars/\(grammar).gram", "#JSGF V1.0;\ngrammar \(grammar);\n\(body)\n")
}

@Suite struct RuleScopeTests {
    private let digit = rule("digit", "public <digit> = zero | one;")
    private let digits = rule("digits", "public <digits> = <digit>+;\n<digit> = two | three;")

    @Test func aRuleFileReferenceResolvesToItsOwnRuleFirst() throws {
        let catalog = try probe(["call <digits>"], rules: [digit, digits]).get()
        #expect(catalog.parse("call two three two").map(\.intent) == ["probe"])
        #expect(catalog.parse("call one").isEmpty)
    }

    @Test func aBareReferenceToAUniqueRule() throws {
        let catalog = try probe(["call <digits>"], rules: [digit, digits, rule("other", "<x> = <digits> please;")]).get()
        #expect(catalog.parse("call two").map(\.intent) == ["probe"])
    }

    @Test func anAmbiguousBareReferenceNamesTheCandidates() {
        guard case .failure(let error) = probe(["call <digit>"], rules: [digit, digits]) else {
            Issue.record("an ambiguous reference loaded")
            return
        }
        #expect(error.code == .reference)
        #expect(
            error.description == """
                t.json:4:44: error: <digit> is defined in grammars/digit.gram:3:8 and grammars/digits.gram:4:1; write <digit.digit> or <digits.digit>
                    { "name": "probe", "templates": ["call <digit>"] }
                                                           ^
                """
        )
        // From a rule file that does not define <digit> itself.
        let other = rule("other", "<x> = say <digit>;")
        guard case .failure(let fromRules) = probe(["go"], rules: [digit, digits, other]) else {
            Issue.record("an ambiguous reference loaded")
            return
        }
        #expect(
            fromRules.description == """
                grammars/other.gram:3:11: error: <digit> is defined in grammars/digit.gram:3:8 and grammars/digits.gram:4:1; write <digit.digit> or <digits.digit>
                <x> = say <digit>;
                          ^
                """
        )
    }

    @Test func qualifiedReferences() throws {
        let catalog = try probe(["call <digit.digit>", "dial <digits.digit>+"], rules: [digit, digits]).get()
        #expect(catalog.parse("call one").map(\.intent) == ["probe"])
        #expect(catalog.parse("call two").isEmpty)
        #expect(catalog.parse("dial two three").map(\.intent) == ["probe"])
        let fromRules = try probe(["go <x>"], rules: [digit, digits, rule("other", "<x> = <digit.digit> | <digits.digit>;")]).get()
        #expect(fromRules.parse("go one").count == 1 && fromRules.parse("go three").count == 1)

        #expect(
            loadError(intentFile("    { \"name\": \"p\", \"templates\": [\"<nope.digit>\"] }"), rules: [digit])?
                .hasPrefix("intents/test.json:4:35: error: unknown rule <nope.digit>: no loaded rule file has 'grammar nope;'") == true
        )
        #expect(
            loadError(intentFile("    { \"name\": \"p\", \"templates\": [\"<digit.nine>\"] }"), rules: [digit])?
                .hasPrefix("intents/test.json:4:35: error: unknown rule <digit.nine>: grammar digit (grammars/digit.gram) has no rule <nine>") == true
        )
    }

    @Test func twoFilesWithTheSameGrammarName() {
        let copy = ("grammars/copy.gram", "#JSGF V1.0;\ngrammar digit;\n<one> = one;\n")
        guard case .failure(let error) = probe(["go"], rules: [digit, copy]) else {
            Issue.record("a duplicate grammar name loaded")
            return
        }
        #expect(
            error.description == """
                grammars/copy.gram:2:9: error: grammar digit is already defined at grammars/digit.gram:2:9; give each rule file its own grammar name
                grammar digit;
                        ^
                """
        )
    }

    @Test func userRulesDoNotClashWithGeneratedOrOtherUserRules() throws {
        let commands = rule("commands", "public <command> = stop | go;")
        // `a_b`.`c` and `a`.`b_c` both make heed_rule_a_b_c; the later one gets a suffix.
        let first = rule("a_b", "<c> = one;")
        let second = rule("a", "<b_c> = two;")
        let catalog = try probe(["please <command>", "<a_b.c> <a.b_c>"], rules: [commands, first, second]).get()
        #expect(catalog.parse("please stop").map(\.intent) == ["probe"])
        #expect(catalog.parse("one two").map(\.intent) == ["probe"])
        let jsgf = catalog.grammar().jsgf
        #expect(jsgf.contains("public <command> = <heed_intent_probe>;"))
        #expect(jsgf.contains("<heed_rule_commands_command> = stop | go;"))
        #expect(jsgf.contains("<heed_rule_a_b_c> = one;"))
        #expect(jsgf.contains("<heed_rule_a_b_c_2> = two;"))
        #expect(!jsgf.contains("<command> = stop"))
    }

    @Test func cyclesAcrossGrammarsAreQualified() {
        let a = rule("a", "<x> = x <b.y>;")
        let b = rule("b", "<y> = y [<a.x>];")
        #expect(probe(["go"], rules: [a, b]).failureDescription?.hasPrefix("grammars/b.gram:3:10: error: rule <a.x> refers to itself: <a.x> -> <b.y> -> <a.x>") == true)
    }

    @Test func theRepositoryGrammarsLoadTogether() throws {
        let catalog = try IntentCatalog.load(intents: [Package.intents, Package.coffee], grammars: [Package.grammars])
        let grammars = Set(catalog.rules.map(\.grammar))
        #expect(grammars.isSuperset(of: ["commands", "digit", "digits", "speech_commands", "speech_commands_core", "intent_phrases", "barista"]))
        #expect(catalog.parse("pause the music").first?.intent != nil)
        #expect(catalog.conflicts().isEmpty)
        // The digit rules of the standalone grammars are four: a bare <digit> must be qualified.
        let files = try FileManager.default.contentsOfDirectory(atPath: Package.grammars.path).filter { $0.hasSuffix(".gram") }.sorted()
        let sources = try files.map { name in
            ("grammars/\(name)", try String(contentsOf: Package.grammars.appendingPathComponent(name), encoding: .utf8))
        }
        guard case .failure(let error) = probe(["dial <digit>+"], rules: sources) else {
            Issue.record("<digit> resolved although four grammars define it")
            return
        }
        #expect(error.message.hasPrefix("<digit> is defined in grammars/digit.gram:"))
        #expect(error.message.hasSuffix("write <digit.digit>, <digits.digit>, <speech_commands_core.digit> or <speech_commands.digit>"))
        // The example in docs/INTENTS.md is this error.
        let phone = intentFile("    { \"name\": \"dial\", \"templates\": [\"dial <digit>+\"] }")
        guard case .failure(let documented) = load(phone, rules: sources, path: "intents/phone.json") else {
            Issue.record("<digit> resolved although four grammars define it")
            return
        }
        let document = try String(contentsOf: Package.root.appendingPathComponent("docs/INTENTS.md"), encoding: .utf8)
        #expect(document.contains("```\n\(documented.description)\n```"))
        let dial = try probe(["dial <digits.digit>+", "say <speech_commands.word>", "do <commands.command>"], rules: sources).get()
        #expect(dial.parse("dial oh nine one one").map(\.intent) == ["probe"])
        #expect(dial.parse("say marvin").map(\.intent) == ["probe"])
        #expect(dial.parse("do go back").map(\.intent) == ["probe"])
    }
}

@Suite struct RepeatTests {
    private let digits = rule("digits", "<digit> = one | two;\n<pin> = <digit>+;\n<maybe> = (hey there)*;")

    @Test func oneOrMore() throws {
        let catalog = try probe(["pin <pin>", "code (<digit> <digit>)+ ok"], rules: [digits]).get()
        #expect(catalog.parse("pin one").count == 1)
        #expect(catalog.parse("pin one two two one two one one").count == 1)
        #expect(catalog.parse("pin").isEmpty)
        #expect(catalog.parse("code one two two one ok").count == 1)
        #expect(catalog.parse("code one two one ok").isEmpty)
    }

    @Test func zeroOrMore() throws {
        let catalog = try probe(["<maybe> stop", "go (on | and on)*"], rules: [digits]).get()
        #expect(catalog.parse("stop").count == 1)
        #expect(catalog.parse("hey there hey there stop").count == 1)
        #expect(catalog.parse("hey stop").isEmpty)
        #expect(catalog.parse("go").count == 1)
        #expect(catalog.parse("go on and on and on on").count == 1)
    }

    @Test func repeatedSlotsFillOnce() throws {
        let text = intentFile(
            """
                { "name": "n", "parameters": [{ "name": "x", "type": "integer" }], "templates": ["number {x}+"] }
            """
        )
        let catalog = try IntentCatalog(intentSources: [("t.json", text)])
        #expect(catalog.parse("number five").first?.parameters["x"] == .integer(5))
        // A slot filled twice does not match, as for a slot written twice.
        #expect(catalog.parse("number five six").isEmpty)
    }

    @Test func zeroRepeatsRankLikeALeftOutOptional() throws {
        let text = intentFile(
            """
                { "name": "a", "templates": ["stop (it)*"] },
                { "name": "b", "templates": ["stop"] }
            """
        )
        let catalog = try IntentCatalog(intentSources: [("t.json", text)])
        #expect(catalog.parse("stop").map(\.intent) == ["b", "a"])
        #expect(catalog.parse("stop it it").map(\.intent) == ["a"])
    }

    @Test func emittedGrammarKeepsTheOperators() throws {
        let catalog = try probe(["pin <pin>", "<maybe> stop", "(please | now)* go", "say (a b)+"], rules: [digits]).get()
        let jsgf = catalog.grammar().jsgf
        #expect(jsgf.contains("<heed_rule_digits_pin> = <heed_rule_digits_digit>+;"))
        #expect(jsgf.contains("<heed_rule_digits_maybe> = (hey there)*;"))
        #expect(jsgf.contains("| <heed_rule_digits_maybe> stop"))
        #expect(jsgf.contains("| (please | now)* go"))
        #expect(jsgf.contains("| say (a b)+;"))
    }

    @Test func whitespaceBeforeTheOperatorIsAllowed() throws {
        #expect(try probe(["go +"], rules: []).get().parse("go go").count == 1)
    }

    @Test func repeatsOfNothingAreAnError() {
        #expect(
            probe(["go [now]+"], rules: []).failureDescription == """
                t.json:4:47: error: '+' repeats a part that can be spoken as no words; repeat a part that always says a word
                    { "name": "probe", "templates": ["go [now]+"] }
                                                              ^
                """
        )
        let nullable = rule("n", "<n> = [a];\n<m> = x <n>*;")
        #expect(probe(["go"], rules: [nullable]).failureDescription?.hasPrefix("grammars/n.gram:4:12: error: '*' repeats a part") == true)
        #expect(probe(["+ go"], rules: []).failureDescription?.hasPrefix("t.json:4:39: error: '+' must follow a word, a rule, a slot or a group") == true)
    }

    @Test func conflictsThroughRepeatsAreFound() throws {
        let text = intentFile(
            """
                { "name": "many", "templates": ["call (one | two)+"] },
                { "name": "pair", "templates": ["call two one"] }
            """
        )
        let conflicts = try IntentCatalog(intentSources: [("t.json", text)]).conflicts()
        #expect(conflicts.map(\.example) == ["call two one"])
    }

    /// PocketSphinx's own JSGF parser accepts the compiled grammar: qualified rules, `+` and `*`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pocketsphinx_continuous")))
    func pocketSphinxLoadsTheCompiledGrammar() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Package.grammars.path).filter { $0.hasSuffix(".gram") }.sorted()
        let sources = try files.map { name in
            ("grammars/\(name)", try String(contentsOf: Package.grammars.appendingPathComponent(name), encoding: .utf8))
        }
        let catalog = try probe(
            ["dial <digits.digit>+ [now]", "say <speech_commands.word>", "do <commands.command>", "(please)* <digits>"],
            rules: sources
        ).get()
        let shipped = try IntentCatalog.load(intents: [Package.intents, Package.coffee], grammars: [Package.grammars])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("heed-intents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Half a second of silence, 16 kHz mono 16-bit.
        var wav = Data("RIFF".utf8)
        func append(_ value: UInt32, bytes: Int) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0.prefix(bytes)) } }
        let samples = 8000
        append(UInt32(36 + samples * 2), bytes: 4)
        wav.append(contentsOf: Data("WAVEfmt ".utf8))
        for (value, bytes) in [(16, 4), (1, 2), (1, 2), (16000, 4), (32000, 4), (2, 2), (16, 2)] { append(UInt32(value), bytes: bytes) }
        wav.append(contentsOf: Data("data".utf8))
        append(UInt32(samples * 2), bytes: 4)
        wav.append(Data(count: samples * 2))
        let audio = directory.appendingPathComponent("silence.wav")
        try wav.write(to: audio)

        // The dictionary: en-us's, and the few words of the shipped intents it lacks, which Heed
        // pronounces itself ("unpause", "rhythmbox"); any phones do for loading a grammar.
        let cmudict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
        let known = Set(try String(contentsOfFile: cmudict, encoding: .utf8).split(separator: "\n").compactMap { $0.split(separator: " ").first })
        for (name, jsgf) in [("probe", catalog.grammar().jsgf), ("shipped", shipped.grammar().jsgf)] {
            let grammar = directory.appendingPathComponent("\(name).gram")
            let log = directory.appendingPathComponent("\(name).log")
            try jsgf.write(to: grammar, atomically: true, encoding: .utf8)
            let body = jsgf.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("grammar") }.joined(separator: " ")
                .replacing(/<[^>]*>/, with: " ")
            let missing = Set(body.split(whereSeparator: { !($0.isLetter || $0 == "'") }).filter { !known.contains($0) && $0 != "public" })
            let dictionary = directory.appendingPathComponent("\(name).dict")
            try (try String(contentsOfFile: cmudict, encoding: .utf8) + missing.map { "\($0) AH\n" }.joined())
                .write(to: dictionary, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/pocketsphinx_continuous")
            process.arguments = ["-infile", audio.path, "-jsgf", grammar.path, "-dict", dictionary.path, "-logfn", log.path]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            let logText = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(process.terminationStatus == 0, "\(name): \(logText)")
            let errors = logText.split(separator: "\n").filter { $0.hasPrefix("ERROR") || $0.hasPrefix("FATAL") }
            #expect(errors.isEmpty, "\(name): \(errors)\n\(jsgf)")
        }
    }
}

extension Result where Failure == SourceError {
    /// The rendered error, or `nil` when loading succeeded.
    fileprivate var failureDescription: String? {
        if case .failure(let error) = self { return error.description }
        return nil
    }
}
