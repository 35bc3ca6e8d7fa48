import HeedCore
/// One rule of a JSGF rule file: `[public] <name> = expansion ;`.
struct RuleDefinition: Sendable {
    var name: String
    var isPublic: Bool
    var expansion: Expansion
    /// Where `<name>` is written on the left of `=`.
    var location: SourceLocation
}

/// Reads the subset of JSGF V1.0 that rule files use.
///
/// Supported: the `#JSGF V1.0 [encoding [locale]];` header, `grammar name;`,
/// `[public] <rule> = expansion;` with words, `|`, `( )`, `[ ]`, `<rule>` references,
/// and `//` and `/* */` comments. Not supported (an error): `import`, tags `{...}`,
/// weights `/w/`, and the `*` and `+` operators.
enum RuleFileParser {
    /// Parses a rule file.
    /// - Parameter source: The file's text.
    /// - Returns: The grammar name and the rules in file order.
    /// - Throws: ``SourceError`` with code `ruleSyntax`, located at the offending token.
    static func parse(_ source: SourceText) throws -> (grammar: String, rules: [RuleDefinition]) {
        var parser = try ExpansionParser(LocatedText(file: source), dialect: .jsgf)
        try expectWord("#JSGF", in: &parser, message: "a rule file must start with '#JSGF V1.0;'")
        guard case .word(let version) = parser.token.kind, version.hasPrefix("V1.") else {
            throw parser.error("expected JSGF version 'V1.0'", at: parser.token.location)
        }
        try parser.advance()
        while case .word = parser.token.kind { try parser.advance() }  // encoding and locale
        try expectSemicolon(in: &parser)
        try expectWord("grammar", in: &parser, message: "expected 'grammar <name>;' after the header")
        guard case .word(let grammarName) = parser.token.kind else {
            throw parser.error("expected a grammar name", at: parser.token.location)
        }
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
            if let previous = rules.first(where: { $0.name == name }) {
                throw parser.error("rule <\(name)> is already defined at \(previous.location)", at: location)
            }
            try parser.advance()
            guard parser.token.kind == .equals else { throw parser.error("expected '='", at: parser.token.location) }
            try parser.advance()
            let expansion = try parser.parseChoice(closing: nil)
            guard parser.token.kind == .semicolon else {
                if case .close = parser.token.kind { throw parser.unexpected() }
                // `<a> = b` + newline + `<c> = d;` reads `<c>` as part of <a>: point at `<c>`.
                var location = parser.token.location
                if parser.token.kind == .equals, case .rule(_, let reference) = lastItem(of: expansion) { location = reference }
                throw parser.error("expected ';' at the end of rule <\(name)>", at: location)
            }
            try parser.advance()
            rules.append(RuleDefinition(name: name, isPublic: isPublic, expansion: expansion, location: location))
        }
        return (grammarName, rules)
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
