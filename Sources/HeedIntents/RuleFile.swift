import HeedCore
/// One rule of a JSGF rule file: `[public] <name> = expansion ;`.
struct RuleDefinition: Sendable {
    /// The name as defined, without the grammar name.
    var name: String
    var isPublic: Bool
    /// The body. As parsed, references are written as in the file (`<digit>`, `<digits.digit>`);
    /// in a loaded catalog they are the JSGF symbols of the rules they resolve to.
    var expansion: Expansion
    /// Where `<name>` is written on the left of `=`.
    var location: SourceLocation
    /// Where the rule's tags `{...}` are written: they are read but not supported.
    var tags: [SourceLocation] = []
}

/// A parsed JSGF rule file.
struct RuleFile: Sendable {
    /// The name in `grammar NAME;`, which qualifies the rules: `<NAME.rule>`.
    var grammar: String
    /// Where NAME is written.
    var grammarLocation: SourceLocation
    /// The rules in file order.
    var rules: [RuleDefinition]
    var source: SourceText
}

/// Reads the subset of JSGF V1.0 that rule files use.
///
/// Supported: the `#JSGF V1.0 [encoding [locale]];` header, `grammar name;`,
/// `[public] <rule> = expansion;` with words, `|`, `( )`, `[ ]`, `+`, `*`, `<rule>` and
/// `<grammar.rule>` references, and `//` and `/* */` comments. Weights `/w/` are read and
/// ignored; tags `{...}` are read and kept aside (an intent that uses a rule with tags is an
/// error). Not supported (an error): `import`.
enum RuleFileParser {
    /// Parses a rule file.
    /// - Parameter source: The file's text.
    /// - Returns: The grammar name and the rules in file order.
    /// - Throws: ``SourceError`` with code `ruleSyntax`, located at the offending token.
    static func parse(_ source: SourceText) throws -> RuleFile {
        var parser = try ExpansionParser(LocatedText(file: source), dialect: .jsgf)
        try expectWord("#JSGF", in: &parser, message: "a rule file must start with '#JSGF V1.0;'")
        // sphinxbase reads the version case-insensitively: its own test grammars say `#JSGF v1.0;`.
        guard case .word(let version) = parser.token.kind, version.uppercased().hasPrefix("V1.") else {
            throw parser.error("expected JSGF version 'V1.0'", at: parser.token.location)
        }
        try parser.advance()
        while case .word = parser.token.kind { try parser.advance() }  // encoding and locale
        try expectSemicolon(in: &parser)
        try expectWord("grammar", in: &parser, message: "expected 'grammar <name>;' after the header")
        guard case .word(let grammarName) = parser.token.kind else {
            throw parser.error("expected a grammar name", at: parser.token.location)
        }
        let grammarLocation = parser.token.location
        try parser.advance()
        try expectSemicolon(in: &parser)

        var rules: [RuleDefinition] = []
        while parser.token.kind != .end {
            var isPublic = false
            if case .word(let word) = parser.token.kind {
                guard word == "public" else {
                    let message = word == "import" ? "'import' is not supported" : "expected a rule definition '<name> = ...;'"
                    throw parser.error(message, at: parser.token.location)
                }
                isPublic = true
                try parser.advance()
            }
            guard case .rule(let name) = parser.token.kind else {
                throw parser.error("expected a rule name '<name>'", at: parser.token.location)
            }
            let location = parser.token.location
            if name.contains("." as Character) {
                throw parser.error("a rule name cannot contain '.': the grammar name qualifies it, as in <\(grammarName).\(name.split(separator: ".").last ?? "")>", at: location)
            }
            if let previous = rules.first(where: { $0.name == name }) {
                throw parser.error("rule <\(name)> is already defined at \(previous.location)", at: location)
            }
            try parser.advance()
            guard parser.token.kind == .equals else { throw parser.error("expected '='", at: parser.token.location) }
            try parser.advance()
            parser.tags = []
            let expansion = try parser.parseChoice(closing: nil)
            guard parser.token.kind == .semicolon else {
                if case .close = parser.token.kind { throw parser.unexpected() }
                if parser.token.kind == .weight { throw parser.unexpected() }
                // `<a> = b` + newline + `<c> = d;` reads `<c>` as part of <a>: point at `<c>`.
                var location = parser.token.location
                if parser.token.kind == .equals, case .rule(_, let reference) = lastItem(of: expansion) { location = reference }
                throw parser.error("expected ';' at the end of rule <\(name)>", at: location)
            }
            try parser.advance()
            rules.append(RuleDefinition(name: name, isPublic: isPublic, expansion: expansion, location: location, tags: parser.tags))
        }
        return RuleFile(grammar: grammarName, grammarLocation: grammarLocation, rules: rules, source: source)
    }

    private static func lastItem(of expansion: Expansion) -> Expansion {
        if case .sequence(let items) = expansion, let last = items.last { return lastItem(of: last) }
        return expansion
    }

    private static func expectWord(_ word: String, in parser: inout ExpansionParser, message: String) throws {
        guard parser.token.kind == .word(word) else { throw parser.error(message, at: parser.token.location) }
        try parser.advance()
    }

    private static func expectSemicolon(in parser: inout ExpansionParser) throws {
        guard parser.token.kind == .semicolon else { throw parser.error("expected ';'", at: parser.token.location) }
        try parser.advance()
    }
}
