import HeedCore
/// A phrase pattern: the body of a template or of a JSGF rule.
indirect enum Expansion: Sendable, Hashable {
    /// A literal word, lower-cased.
    case word(String, SourceLocation)
    /// `{name}`: a typed parameter slot (templates only).
    case slot(String, SourceLocation)
    /// `<name>`: a reference to a rule.
    case rule(String, SourceLocation)
    /// Items spoken one after the other; empty means "nothing".
    case sequence([Expansion])
    /// `a | b`: exactly one of the alternatives.
    case choice([Expansion])
    /// `[a]`: the item or nothing.
    case optional(Expansion)
    /// `a+` (at least once) or `a*` (any number of times, including none); the location is the operator's.
    case repeated(Expansion, atLeastOnce: Bool, SourceLocation)

    /// Calls `body` for this expansion and every expansion inside it, outside in.
    func forEach(_ body: (Expansion) throws -> Void) rethrows {
        try body(self)
        switch self {
        case .word, .slot, .rule: break
        case .sequence(let items), .choice(let items): try items.forEach { try $0.forEach(body) }
        case .optional(let item), .repeated(let item, _, _): try item.forEach(body)
        }
    }

    /// The expansion with every rule reference replaced.
    /// - Parameter transform: Gives the new name of a reference `<name>` written at a location.
    /// - Returns: The rewritten expansion.
    func mappingRules(_ transform: (String, SourceLocation) throws -> String) rethrows -> Expansion {
        switch self {
        case .word, .slot: self
        case .rule(let name, let location): .rule(try transform(name, location), location)
        case .sequence(let items): .sequence(try items.map { try $0.mappingRules(transform) })
        case .choice(let items): .choice(try items.map { try $0.mappingRules(transform) })
        case .optional(let item): .optional(try item.mappingRules(transform))
        case .repeated(let item, let atLeastOnce, let location):
            .repeated(try item.mappingRules(transform), atLeastOnce: atLeastOnce, location)
        }
    }

    /// Whether the expansion can be spoken as no words at all.
    /// - Parameters:
    ///   - rule: Whether the rule of a reference can say nothing.
    ///   - slot: Whether the parameter of a slot can say nothing.
    /// - Returns: `true` when some way through says no word.
    func canSayNothing(rule: (String) -> Bool, slot: (String) -> Bool) -> Bool {
        switch self {
        case .word: false
        case .slot(let name, _): slot(name)
        case .rule(let name, _): rule(name)
        case .sequence(let items): items.allSatisfy { $0.canSayNothing(rule: rule, slot: slot) }
        case .choice(let items): items.contains { $0.canSayNothing(rule: rule, slot: slot) }
        case .optional: true
        case .repeated(let item, let atLeastOnce, _): !atLeastOnce || item.canSayNothing(rule: rule, slot: slot)
        }
    }
}

/// Text whose every Unicode scalar knows its location in a file.
///
/// For a template that is the location inside the JSON file, escapes included, so a caret
/// lands under the character the user typed.
struct LocatedText {
    var scalars: [Unicode.Scalar]
    /// One location per scalar, plus the location just after the text.
    var locations: [SourceLocation]
    var source: SourceText

    /// Text that is a whole file.
    init(file source: SourceText) {
        var locations: [SourceLocation] = []
        locations.reserveCapacity(source.scalars.count + 1)
        var line = 1
        var column = 1
        for scalar in source.scalars {
            locations.append(SourceLocation(path: source.path, line: line, column: column))
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        locations.append(SourceLocation(path: source.path, line: line, column: column))
        self.init(scalars: source.scalars, locations: locations, source: source)
    }

    init(scalars: [Unicode.Scalar], locations: [SourceLocation], source: SourceText) {
        self.scalars = scalars
        self.locations = locations
        self.source = source
    }
}

/// A token of a template or of a JSGF rule file.
struct ExpansionToken {
    enum Kind: Equatable {
        case word(String)
        case rule(String)
        case slot(String)
        case open(Unicode.Scalar)
        case close(Unicode.Scalar)
        case bar
        /// `+` or `*` after an item.
        case repetition(Unicode.Scalar)
        /// A JSGF weight `/number/` before an alternative (rule files only).
        case weight
        /// A JSGF tag `{...}` (rule files only).
        case tag
        case equals
        case semicolon
        case end
    }

    var kind: Kind
    var location: SourceLocation
}

/// Splits a template or a JSGF file into tokens.
struct ExpansionTokenizer {
    /// What text is being read: the two differ in comments, slots and punctuation.
    enum Dialect {
        /// A phrase template: `{slot}` allowed, no comments.
        case template
        /// A JSGF rule file: comments, `=`, `;`, weights `/w/`, tags `{...}` and header words such as `#JSGF` and `V1.0`.
        case jsgf
    }

    private let text: LocatedText
    private let dialect: Dialect
    private var index = 0

    init(_ text: LocatedText, dialect: Dialect) {
        self.text = text
        self.dialect = dialect
    }

    private func error(_ message: String, at index: Int) -> SourceError {
        let code: SourceError.Code = dialect == .template ? .template : .ruleSyntax
        return SourceError(code, message, at: text.locations[index], in: text.source)
    }

    private func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) { return true }
        if scalar == "'" || scalar == "-" || scalar == "_" { return true }
        return dialect == .jsgf && (scalar == "." || scalar == "#")
    }

    private func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
            || scalar == "."
    }

    /// Reads the next token.
    /// - Returns: The token; `.end` at the end of the text.
    /// - Throws: ``SourceError`` for a stray character, an unterminated comment or name.
    mutating func next() throws -> ExpansionToken {
        try skipSpaceAndComments()
        let start = index
        let location = text.locations[start]
        guard index < text.scalars.count else { return ExpansionToken(kind: .end, location: location) }
        let scalar = text.scalars[index]
        index += 1
        switch scalar {
        case "(", "[": return ExpansionToken(kind: .open(scalar), location: location)
        case ")", "]": return ExpansionToken(kind: .close(scalar), location: location)
        case "|": return ExpansionToken(kind: .bar, location: location)
        case "+", "*": return ExpansionToken(kind: .repetition(scalar), location: location)
        case "=" where dialect == .jsgf: return ExpansionToken(kind: .equals, location: location)
        case ";" where dialect == .jsgf: return ExpansionToken(kind: .semicolon, location: location)
        case "<": return ExpansionToken(kind: .rule(try readName(closer: ">", what: "rule name", from: start)), location: location)
        case "{" where dialect == .template:
            return ExpansionToken(kind: .slot(try readName(closer: "}", what: "parameter name", from: start)), location: location)
        case "{":
            try skipTag(from: start)
            return ExpansionToken(kind: .tag, location: location)
        case "/" where dialect == .jsgf:
            try skipWeight(from: start)
            return ExpansionToken(kind: .weight, location: location)
        case let scalar where isWordScalar(scalar):
            var word = String.UnicodeScalarView([scalar])
            while index < text.scalars.count, isWordScalar(text.scalars[index]) {
                word.append(text.scalars[index])
                index += 1
            }
            return ExpansionToken(kind: .word(String(word)), location: location)
        default:
            throw error("unexpected character '\(scalar)'", at: start)
        }
    }

    private mutating func readName(closer: Unicode.Scalar, what: String, from start: Int) throws -> String {
        var name = String.UnicodeScalarView()
        while index < text.scalars.count, isNameScalar(text.scalars[index]) {
            name.append(text.scalars[index])
            index += 1
        }
        guard index < text.scalars.count, text.scalars[index] == closer else {
            if index < text.scalars.count, !text.scalars[index].properties.isWhitespace {
                throw error("unexpected character '\(text.scalars[index])' in \(what)", at: index)
            }
            throw error("missing '\(closer)' to close '\(text.scalars[start])'", at: start)
        }
        guard !name.isEmpty else { throw error("empty \(what)", at: start) }
        index += 1
        return String(name)
    }

    /// Skips the rest of a tag `{...}`; `\}` does not close it.
    private mutating func skipTag(from start: Int) throws {
        while index < text.scalars.count, text.scalars[index] != "}" {
            index += text.scalars[index] == "\\" ? 2 : 1
        }
        guard index < text.scalars.count else { throw error("missing '}' to close the tag '{'", at: start) }
        index += 1
    }

    /// Skips the rest of a weight `/10/` or `/0.5/`.
    private mutating func skipWeight(from start: Int) throws {
        var digits = 0
        while index < text.scalars.count, ("0"..."9").contains(text.scalars[index]) || text.scalars[index] == "." {
            digits += 1
            index += 1
        }
        guard digits > 0, index < text.scalars.count, text.scalars[index] == "/" else {
            throw error("malformed weight: expected '/number/'", at: start)
        }
        index += 1
    }

    private mutating func skipSpaceAndComments() throws {
        while index < text.scalars.count {
            let scalar = text.scalars[index]
            if scalar.properties.isWhitespace {
                index += 1
            } else if dialect == .jsgf, scalar == "/", index + 1 < text.scalars.count, text.scalars[index + 1] == "/" {
                while index < text.scalars.count, text.scalars[index] != "\n" { index += 1 }
            } else if dialect == .jsgf, scalar == "/", index + 1 < text.scalars.count, text.scalars[index + 1] == "*" {
                let start = index
                index += 2
                while index + 1 < text.scalars.count, !(text.scalars[index] == "*" && text.scalars[index + 1] == "/") {
                    index += 1
                }
                guard index + 1 < text.scalars.count else { throw error("unterminated comment", at: start) }
                index += 2
            } else {
                return
            }
        }
    }
}

/// Parses `a [b] (c | d)+ {slot} <rule>*` into an ``Expansion``.
///
/// In rule files, weights `/w/` before an alternative are read and ignored, and tags `{...}` are
/// left out of the expansion; their locations are kept in ``tags``.
struct ExpansionParser {
    private var tokenizer: ExpansionTokenizer
    private let text: LocatedText
    private let code: SourceError.Code
    private(set) var token: ExpansionToken
    /// Where the tags read so far are written.
    var tags: [SourceLocation] = []

    init(_ text: LocatedText, dialect: ExpansionTokenizer.Dialect) throws {
        self.text = text
        self.code = dialect == .template ? .template : .ruleSyntax
        tokenizer = ExpansionTokenizer(text, dialect: dialect)
        token = try tokenizer.next()
    }

    /// Parses a whole template.
    /// - Parameter text: The template with the location of each scalar.
    /// - Returns: The template's expansion.
    /// - Throws: ``SourceError`` with code `template`, located at the bad spot.
    static func parseTemplate(_ text: LocatedText) throws -> Expansion {
        var parser = try ExpansionParser(text, dialect: .template)
        guard parser.token.kind != .end else { throw parser.error("empty template", at: parser.token.location) }
        let expansion = try parser.parseChoice(closing: nil)
        guard parser.token.kind == .end else { throw parser.unexpected() }
        return expansion
    }

    func error(_ message: String, at location: SourceLocation) -> SourceError {
        SourceError(code, message, at: location, in: text.source)
    }

    mutating func advance() throws { token = try tokenizer.next() }

    /// Parses alternatives up to the closing token or the end.
    /// - Parameter closing: The opening group token, when inside `( )` or `[ ]`.
    /// - Returns: One expansion, a `.choice` when there was a `|`.
    mutating func parseChoice(closing opener: ExpansionToken?) throws -> Expansion {
        var alternatives: [Expansion] = []
        while true {
            if token.kind == .weight { try advance() }
            let items = try parseSequence()
            if items.isEmpty {
                if alternatives.isEmpty && token.kind != .bar, let opener, case .open(let bracket) = opener.kind {
                    throw error(bracket == "(" ? "empty group '()'" : "empty optional '[]'", at: opener.location)
                }
                throw error("empty alternative", at: token.location)
            }
            alternatives.append(items.count == 1 ? items[0] : .sequence(items))
            guard token.kind == .bar else { break }
            try advance()
        }
        return alternatives.count == 1 ? alternatives[0] : .choice(alternatives)
    }

    private mutating func parseSequence() throws -> [Expansion] {
        var items: [Expansion] = []
        while true {
            switch token.kind {
            case .word(let word):
                items.append(.word(word.lowercased(), token.location))
            case .rule(let name):
                items.append(.rule(name, token.location))
            case .slot(let name):
                items.append(.slot(name, token.location))
            case .open(let bracket):
                let opener = token
                try advance()
                let inner = try parseChoice(closing: opener)
                let closer: Unicode.Scalar = bracket == "(" ? ")" : "]"
                guard token.kind == .close(closer) else {
                    if case .close(let other) = token.kind {
                        throw error("expected '\(closer)' to close '\(bracket)' at column \(opener.location.column), found '\(other)'", at: token.location)
                    }
                    throw error("unbalanced '\(bracket)': missing '\(closer)'", at: opener.location)
                }
                items.append(bracket == "(" ? inner : .optional(inner))
            case .repetition(let symbol):
                throw error("'\(symbol)' must follow a word, a rule, a slot or a group", at: token.location)
            case .tag:
                tags.append(token.location)
            default:
                return items
            }
            try advance()
            try parsePostfix(of: &items)
        }
    }

    /// Reads `+` or `*` and tags after the last item.
    private mutating func parsePostfix(of items: inout [Expansion]) throws {
        if case .repetition(let symbol) = token.kind, let last = items.popLast() {
            items.append(.repeated(last, atLeastOnce: symbol == "+", token.location))
            try advance()
            if case .repetition(let second) = token.kind {
                throw error("'\(second)' cannot follow '\(symbol)'; group the repeated part: ( … )\(second)", at: token.location)
            }
        }
        while token.kind == .tag {
            tags.append(token.location)
            try advance()
        }
    }

    /// The error for a token that cannot appear where it is.
    func unexpected() -> SourceError {
        switch token.kind {
        case .close(let bracket):
            return error("unbalanced '\(bracket)': no matching '\(bracket == ")" ? "(" : "[")'", at: token.location)
        case .equals: return error("unexpected '='", at: token.location)
        case .semicolon: return error("unexpected ';'", at: token.location)
        case .weight: return error("a weight '/w/' must come before an alternative", at: token.location)
        default: return error("unexpected text", at: token.location)
        }
    }
}
