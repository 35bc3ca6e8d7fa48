import HeedCore
import Testing
@testable import HeedIntents

@Suite struct RuleFileTests {
    private func parse(_ text: String) throws -> [RuleDefinition] {
        try RuleFileParser.parse(SourceText(path: "g.gram", text: text)).rules
    }

    /// The error a rule file gives when loaded with a trivial intent file, rendered.
    private func error(_ text: String) -> String? {
        loadError(intentFile("    { \"name\": \"p\", \"templates\": [\"go\"] }"), rules: [("g.gram", text)])
    }

    @Test func parsesTheSupportedSubset() throws {
        let rules = try parse(
            """
            #JSGF V1.0 UTF-8 en;
            // a comment
            grammar demo;
            /* a block
               comment */
            public <greeting> = (hello | hi) [there] <name>;
            <name> = Ada | grace hopper; // trailing comment
            """
        )
        #expect(rules.map(\.name) == ["greeting", "name"])
        #expect(rules.map(\.isPublic) == [true, false])
        #expect(rules[0].location == SourceLocation(path: "g.gram", line: 6, column: 8))
        guard case .choice(let names) = rules[1].expansion, case .word(let word, _) = names.first else {
            Issue.record("expected a choice of words")
            return
        }
        #expect(word == "ada")
    }

    @Test func builtinRulesParse() {
        #expect(BuiltinRules.rules.count == 23)
    }

    @Test func missingHeader() {
        #expect(
            error("grammar g;\n<a> = b;\n") == """
                g.gram:1:1: error: a rule file must start with '#JSGF V1.0;'
                grammar g;
                ^
                """
        )
    }

    @Test func missingSemicolon() {
        #expect(
            error("#JSGF V1.0;\ngrammar g;\n<a> = b\n<c> = d;\n") == """
                g.gram:4:1: error: expected ';' at the end of rule <a>
                <c> = d;
                ^
                """
        )
    }

    @Test func unbalancedGroup() {
        #expect(
            error("#JSGF V1.0;\ngrammar g;\n<a> = (b | c;\n") == """
                g.gram:3:7: error: unbalanced '(': missing ')'
                <a> = (b | c;
                      ^
                """
        )
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = b ];\n")?.hasPrefix("g.gram:3:9: error: unbalanced ']': no matching '['") == true)
    }

    @Test func unknownRuleReference() {
        #expect(
            error("#JSGF V1.0;\ngrammar g;\n<a> = b <missing>;\n") == """
                g.gram:3:9: error: unknown rule <missing>
                <a> = b <missing>;
                        ^
                """
        )
    }

    @Test func recursion() {
        #expect(
            error("#JSGF V1.0;\ngrammar g;\n<a> = x <b>;\n<b> = y [<a>];\n") == """
                g.gram:4:10: error: rule <a> refers to itself: <a> -> <b> -> <a>
                <b> = y [<a>];
                         ^
                """
        )
    }

    @Test func unterminatedComment() {
        #expect(error("#JSGF V1.0;\ngrammar g;\n/* never closed\n<a> = b;\n")?.hasPrefix("g.gram:3:1: error: unterminated comment") == true)
    }

    @Test func duplicateAndReservedNames() {
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = b;\n<a> = c;\n")?.hasPrefix("g.gram:4:1: error: rule <a> is already defined at g.gram:3:1") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<heed_integer> = b;\n")?.hasPrefix("g.gram:3:1: error: rule name <heed_integer> is reserved") == true)
        #expect(error("#JSGF V1.0;\ngrammar heed_builtin;\n<a> = b;\n")?.hasPrefix("g.gram:2:9: error: grammar name heed_builtin is reserved") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<VOID> = b;\n")?.hasPrefix("g.gram:3:1: error: rule name <VOID> is reserved") == true)
        // <command> is the compiled grammar's public rule, but a user's <command> is <g.command>: no clash.
        #expect(error("#JSGF V1.0;\ngrammar g;\npublic <command> = b;\n") == nil)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a.b> = b;\n")?.hasPrefix("g.gram:3:1: error: a rule name cannot contain '.'") == true)
    }

    @Test func unsupportedFeatures() {
        #expect(error("#JSGF V1.0;\ngrammar g;\nimport <x.*>;\n")?.hasPrefix("g.gram:3:1: error: 'import' is not supported") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = * b;\n")?.hasPrefix("g.gram:3:7: error: '*' must follow a word, a rule, a slot or a group") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = b+*;\n")?.hasPrefix("g.gram:3:9: error: '*' cannot follow '+'") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = /x/ b;\n")?.hasPrefix("g.gram:3:7: error: malformed weight: expected '/number/'") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = b /5/;\n")?.hasPrefix("g.gram:3:9: error: a weight '/w/' must come before an alternative") == true)
        #expect(error("#JSGF V1.0;\ngrammar g;\n<a> = b {tag;\n")?.hasPrefix("g.gram:3:9: error: missing '}' to close the tag '{'") == true)
    }

    @Test func weightsAreIgnored() throws {
        let rules = try parse("#JSGF V1.0;\ngrammar g;\n<a> = /10/ yes | /0.5/ (no | nope);\n")
        guard case .choice(let alternatives) = rules[0].expansion else {
            Issue.record("expected a choice")
            return
        }
        #expect(alternatives.count == 2)
    }

    @Test func tagsAreAnErrorOnlyWhenAnIntentUsesTheRule() {
        let tagged = "#JSGF V1.0;\ngrammar g;\n<a> = b {tag} | c;\n<x> = <a>;\n"
        #expect(error(tagged) == nil)
        let using = intentFile("    { \"name\": \"p\", \"templates\": [\"go <x>\"] }")
        #expect(
            loadError(using, rules: [("g.gram", tagged)]) == """
                g.gram:3:9: error: JSGF tags '{...}' are not supported in rules that intents use (<g.a>)
                <a> = b {tag} | c;
                        ^
                """
        )
    }

    @Test func shippedRuleFilesParse() throws {
        let catalog = try Package.shipped()
        #expect(catalog.rules.contains { $0.name == "determiner" })
        #expect(catalog.rules.contains { $0.name == "amount" })
    }
}
