/// A JSON value that remembers where it was written.
///
/// Foundation's decoders report neither line nor column for a schema error, so the
/// files users write are read with this small parser (RFC 8259) instead.
public struct JSONNode: Sendable {
    /// The JSON value.
    public enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONNode])
        case object([Member])
    }

    /// An object member.
    public struct Member: Sendable {
        public var key: String
        public var keyLocation: SourceLocation
        public var value: JSONNode
    }

    public var kind: Kind
    /// Where the value starts.
    public var location: SourceLocation
    /// For strings: the file's text and the index of the opening quote in it, from which
    /// ``scalarLocations`` are worked out when asked for (most strings never are: keeping them
    /// for every string made a state file of 300,000 apps take 900 MB).
    private var stringSource: (text: SourceText, quote: Int)?

    init(kind: Kind, location: SourceLocation, stringSource: (text: SourceText, quote: Int)? = nil) {
        self.kind = kind
        self.location = location
        self.stringSource = stringSource
    }

    /// For strings: the location of each Unicode scalar of the decoded value, then the closing quote.
    /// An escape such as `\u00e9` is one scalar at the column of its backslash.
    public var scalarLocations: [SourceLocation] {
        guard let (text, quote) = stringSource else { return [] }
        var locations: [SourceLocation] = []
        var column = location.column + 1
        var index = quote + 1
        // The text was parsed already: no line breaks inside, escapes well formed.
        while index < text.scalars.count {
            locations.append(SourceLocation(path: location.path, line: location.line, column: column))
            switch text.scalars[index] {
            case "\"": return locations
            case "\\":
                let width = text.scalars[index + 1] != "u" ? 2 : text.scalars.count > index + 7 && text.scalars[index + 6] == "\\" && (0xD800..<0xDC00).contains(Self.hex(text.scalars[(index + 2)..<(index + 6)])) ? 12 : 6
                index += width
                column += width
            default:
                index += 1
                column += 1
            }
        }
        return locations
    }

    private static func hex(_ scalars: ArraySlice<Unicode.Scalar>) -> UInt32 {
        scalars.reduce(0) { $0 * 16 + UInt32(Character($1).hexDigitValue ?? 0) }
    }

    /// The name of the kind as error messages say it.
    public var kindName: String {
        switch kind {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Parses JSON text into ``JSONNode``s with locations.
public struct LocatedJSONParser {
    private let source: SourceText
    private var index = 0
    private var line = 1
    private var column = 1

    /// Parses a whole document.
    /// - Parameter source: The file text.
    /// - Returns: The top-level value.
    /// - Throws: ``SourceError`` with code `jsonSyntax`, located at the offending character.
    public static func parse(_ source: SourceText) throws -> JSONNode {
        var parser = LocatedJSONParser(source: source)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.current != nil { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private init(source: SourceText) { self.source = source }

    private var current: Unicode.Scalar? { index < source.scalars.count ? source.scalars[index] : nil }
    private var location: SourceLocation { SourceLocation(path: source.path, line: line, column: column) }

    private func error(_ message: String) -> SourceError {
        SourceError(.jsonSyntax, message, at: location, in: source)
    }

    private mutating func advance() {
        guard let scalar = current else { return }
        index += 1
        if scalar == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
    }

    private mutating func skipWhitespace() {
        while let scalar = current, scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
            advance()
        }
    }

    private mutating func expect(_ scalar: Unicode.Scalar, _ what: String) throws {
        guard current == scalar else { throw error("expected \(what)") }
        advance()
    }

    private mutating func parseValue(depth: Int) throws -> JSONNode {
        guard depth < 200 else { throw error("JSON nested too deeply") }
        let start = location
        switch current {
        case "{": return try parseObject(depth: depth)
        case "[": return try parseArray(depth: depth)
        case "\"":
            let quote = index
            let text = try parseString()
            return JSONNode(kind: .string(text), location: start, stringSource: (source, quote))
        case "t": return try parseLiteral("true", .bool(true))
        case "f": return try parseLiteral("false", .bool(false))
        case "n": return try parseLiteral("null", .null)
        case let scalar? where scalar == "-" || ("0"..."9").contains(scalar):
            return try parseNumber()
        case nil: throw error("unexpected end of file, expected a value")
        case let scalar?: throw error("unexpected character '\(scalar)', expected a value")
        }
    }

    private mutating func parseLiteral(_ word: String, _ kind: JSONNode.Kind) throws -> JSONNode {
        let start = location
        for expected in word.unicodeScalars {
            guard current == expected else {
                throw SourceError(.jsonSyntax, "invalid literal, expected '\(word)'", at: start, in: source)
            }
            advance()
        }
        return JSONNode(kind: kind, location: start)
    }

    private mutating func parseNumber() throws -> JSONNode {
        let start = location
        var text = ""
        func take(_ parser: inout LocatedJSONParser, while predicate: (Unicode.Scalar) -> Bool) {
            while let scalar = parser.current, predicate(scalar) {
                text.unicodeScalars.append(scalar)
                parser.advance()
            }
        }
        let isDigit: (Unicode.Scalar) -> Bool = { ("0"..."9").contains($0) }
        take(&self) { $0 == "-" && text.isEmpty }
        take(&self, while: isDigit)
        if current == "." {
            take(&self) { $0 == "." }
            take(&self, while: isDigit)
        }
        if current == "e" || current == "E" {
            take(&self) { $0 == "e" || $0 == "E" }
            take(&self) { $0 == "+" || $0 == "-" }
            take(&self, while: isDigit)
        }
        guard let value = Double(text), text.last.map(isDigitCharacter) == true else {
            throw SourceError(.jsonSyntax, "invalid number '\(text)'", at: start, in: source)
        }
        return JSONNode(kind: .number(value), location: start)
    }

    private func isDigitCharacter(_ character: Character) -> Bool { character.isASCII && character.isNumber }

    private mutating func parseString() throws -> String {
        try expect("\"", "'\"'")
        // Most strings have no escape: take them whole from the text.
        let start = index
        var end = start
        while end < source.scalars.count {
            let scalar = source.scalars[end]
            if scalar == "\"" {
                let slice = source.scalars[start..<end]
                let text: String
                if slice.allSatisfy(\.isASCII) {
                    text = String(unsafeUninitializedCapacity: slice.count) { buffer in
                        for (offset, scalar) in slice.enumerated() { buffer[offset] = UInt8(scalar.value) }
                        return slice.count
                    }
                } else {
                    var view = String.UnicodeScalarView()
                    view.append(contentsOf: slice)
                    text = String(view)
                }
                column += end - start
                index = end + 1
                column += 1
                return text
            }
            if scalar == "\\" || scalar.value < 0x20 { break }
            end += 1
        }
        var text = String.UnicodeScalarView()
        while true {
            let scalarStart = location
            guard let scalar = current else { throw error("unterminated string") }
            switch scalar {
            case "\"":
                advance()
                return String(text)
            case "\n":
                throw error("unterminated string (a line break must be written \\n)")
            case "\\":
                advance()
                text.append(try parseEscape(startingAt: scalarStart))
            default:
                guard scalar.value >= 0x20 else { throw error("control character in string") }
                text.append(scalar)
                advance()
            }
        }
    }

    private mutating func parseEscape(startingAt start: SourceLocation) throws -> Unicode.Scalar {
        guard let escaped = current else { throw error("unterminated string") }
        advance()
        switch escaped {
        case "\"": return "\""
        case "\\": return "\\"
        case "/": return "/"
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "n": return "\n"
        case "r": return "\r"
        case "t": return "\t"
        case "u":
            let high = try parseHexQuad()
            guard (0xD800..<0xDC00).contains(high) else {
                return try scalar(high, at: start)
            }
            guard current == "\\" else { throw error("expected a low surrogate escape") }
            advance()
            try expect("u", "a low surrogate escape")
            let low = try parseHexQuad()
            guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate") }
            return try scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), at: start)
        default:
            throw SourceError(.jsonSyntax, "invalid escape '\\\(escaped)'", at: start, in: source)
        }
    }

    private func scalar(_ value: UInt32, at start: SourceLocation) throws -> Unicode.Scalar {
        guard let scalar = Unicode.Scalar(value) else {
            throw SourceError(.jsonSyntax, "invalid Unicode escape", at: start, in: source)
        }
        return scalar
    }

    private mutating func parseHexQuad() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = current, let digit = Character(scalar).hexDigitValue else {
                throw error("expected four hexadecimal digits")
            }
            value = value * 16 + UInt32(digit)
            advance()
        }
        return value
    }

    private mutating func parseArray(depth: Int) throws -> JSONNode {
        let start = location
        advance()
        var elements: [JSONNode] = []
        skipWhitespace()
        if current == "]" {
            advance()
            return JSONNode(kind: .array(elements), location: start)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            if current == "]" {
                advance()
                return JSONNode(kind: .array(elements), location: start)
            }
            try expect(",", "',' or ']'")
        }
    }

    private mutating func parseObject(depth: Int) throws -> JSONNode {
        let start = location
        advance()
        var members: [JSONNode.Member] = []
        var keys: Set<String> = []
        skipWhitespace()
        if current == "}" {
            advance()
            return JSONNode(kind: .object(members), location: start)
        }
        while true {
            skipWhitespace()
            let keyLocation = location
            guard current == "\"" else { throw error("expected a string key") }
            let key = try parseString()
            guard keys.insert(key).inserted else {
                throw SourceError(.jsonSyntax, "duplicate key '\(key)'", at: keyLocation, in: source)
            }
            skipWhitespace()
            try expect(":", "':'")
            skipWhitespace()
            members.append(.init(key: key, keyLocation: keyLocation, value: try parseValue(depth: depth + 1)))
            skipWhitespace()
            if current == "}" {
                advance()
                return JSONNode(kind: .object(members), location: start)
            }
            try expect(",", "',' or '}'")
        }
    }
}

/// Reads the schema of a JSON file from ``JSONNode``s, throwing located errors.
public struct JSONSchemaReader {
    public let source: SourceText

    /// Creates a reader of `source`.
    public init(source: SourceText) { self.source = source }

    /// An error located in the file.
    public func error(_ message: String, at location: SourceLocation, code: SourceError.Code = .schema) -> SourceError {
        SourceError(code, message, at: location, in: source)
    }

    /// The members of an object, checked against the keys the format allows.
    /// - Parameters:
    ///   - node: The value that must be an object.
    ///   - what: What the object is, for messages ("an intent").
    ///   - allowedKeys: Every key the object may have; any other key is an error, which catches typos.
    ///     `nil`: any key (a map such as vocabulary type → terms).
    /// - Returns: The object's members by key.
    /// - Throws: ``SourceError`` when the value is not an object or has an unknown key.
    public func object(_ node: JSONNode, _ what: String, allowedKeys: Set<String>?) throws -> JSONObject {
        guard case .object(let members) = node.kind else {
            throw error("expected \(what) (an object), found \(node.kindName)", at: node.location)
        }
        for member in members where allowedKeys.map({ !$0.contains(member.key) }) ?? false {
            let allowedKeys = allowedKeys ?? []
            let expected = allowedKeys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw error("unknown key '\(member.key)' in \(what); expected one of \(expected)", at: member.keyLocation)
        }
        return JSONObject(reader: self, what: what, location: node.location, members: members)
    }

    public func array(_ node: JSONNode, _ what: String) throws -> [JSONNode] {
        guard case .array(let elements) = node.kind else {
            throw error("expected \(what) (an array), found \(node.kindName)", at: node.location)
        }
        return elements
    }

    public func string(_ node: JSONNode, _ what: String) throws -> String {
        guard case .string(let text) = node.kind else {
            throw error("expected \(what) (a string), found \(node.kindName)", at: node.location)
        }
        return text
    }

    public func bool(_ node: JSONNode, _ what: String) throws -> Bool {
        guard case .bool(let value) = node.kind else {
            throw error("expected \(what) (true or false), found \(node.kindName)", at: node.location)
        }
        return value
    }

    public func number(_ node: JSONNode, _ what: String) throws -> Double {
        guard case .number(let value) = node.kind else {
            throw error("expected \(what) (a number), found \(node.kindName)", at: node.location)
        }
        return value
    }

    /// A whole number within `range`; anything else (a fraction, `1e19`, `-1e400`) is a located error,
    /// never a trap in a conversion.
    /// - Parameters:
    ///   - node: The value that must be a whole number.
    ///   - what: What the number is, for messages ("'generation'").
    ///   - range: The values the format allows.
    /// - Returns: The number.
    /// - Throws: ``SourceError`` at the value.
    public func integer(_ node: JSONNode, _ what: String, in range: ClosedRange<Int>) throws -> Int {
        let value = try number(node, what)
        guard value.rounded() == value, value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
            throw error("expected \(what) to be a whole number from \(range.lowerBound) to \(range.upperBound), found \(value)", at: node.location)
        }
        return Int(value)
    }
}

/// An object's members with the reader that reports errors against its file.
public struct JSONObject {
    public let reader: JSONSchemaReader
    public let what: String
    public let location: SourceLocation
    public let members: [JSONNode.Member]

    public subscript(key: String) -> JSONNode? { members.first { $0.key == key }?.value }

    /// The value of a key that must be present.
    public func required(_ key: String) throws -> JSONNode {
        guard let value = self[key] else {
            throw reader.error("missing key '\(key)' in \(what)", at: location)
        }
        return value
    }

    public func string(_ key: String) throws -> String { try reader.string(required(key), "'\(key)'") }

    public func optionalString(_ key: String) throws -> String? { try self[key].map { try reader.string($0, "'\(key)'") } }

    public func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        try self[key].map { try reader.bool($0, "'\(key)'") } ?? defaultValue
    }

    public func array(_ key: String) throws -> [JSONNode] { try reader.array(required(key), "'\(key)'") }

    public func optionalArray(_ key: String) throws -> [JSONNode] { try self[key].map { try reader.array($0, "'\(key)'") } ?? [] }
}
