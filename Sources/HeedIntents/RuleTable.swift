import HeedCore
/// Every rule a compiled grammar can use, by symbol: the user's rules, the built-in type rules,
/// one rule per vocabulary type and one per enumeration, vocabulary or phrase parameter.
///
/// Symbols: `heed_rule_<grammar>_<rule>` for the user's rules (see ``RuleScope``), the built-in
/// rules' own `heed_…` names, and the generated `heed_intent_<intent>`, `heed_slot_<intent>_<parameter>`
/// and `heed_vocab_<type>`.
/// The JSGF emitter and the token graph builder both read this table, so the recognizer's
/// grammar and the text parser accept the same phrases.
struct RuleTable {
    private(set) var expansions: [String: Expansion] = [:]

    /// Builds the table.
    /// - Parameters:
    ///   - rules: The user's and the built-in rules.
    ///   - intents: The intents whose slots get rules.
    ///   - vocabulary: Terms by vocabulary type; a type without terms accepts only its fallback cases.
    ///   - symbolicVocabulary: Stand for each vocabulary type by one pseudo-word `{type}` instead of its terms (conflict checks).
    ///   - openTypes: Vocabulary types said as a loop of phone pseudo-words instead of their terms
    ///     (``OpenSlot``; the recognizer's grammar only).
    init(
        rules: [LoadedRule], intents: [IntentDefinition], vocabulary: [String: [String]], symbolicVocabulary: Bool,
        openTypes: Set<String> = []
    ) {
        for rule in rules { expansions[rule.symbol] = rule.expansion }
        for intent in intents {
            for parameter in intent.parameters {
                let body: Expansion
                switch parameter.type {
                case .integer, .number, .boolean, .duration, .ordinal:
                    continue
                case .enumeration(let cases):
                    body = .choice(Self.synonymExpansions(cases, at: parameter.location))
                case .vocabulary(let type, let fallback):
                    let vocabularyRule = Self.vocabularyRuleName(type)
                    if expansions[vocabularyRule] == nil {
                        expansions[vocabularyRule] =
                            openTypes.contains(type)
                            ? Self.phoneLoop(type: type)
                            : Self.vocabularyExpansion(type: type, terms: vocabulary[type] ?? [], symbolic: symbolicVocabulary)
                    }
                    body = .choice([.rule(vocabularyRule, parameter.location)] + Self.synonymExpansions(fallback, at: parameter.location))
                case .phrase:
                    body = parameter.phraseExpansion ?? .choice([])
                }
                expansions[Self.slotRuleName(intent: intent.name, parameter: parameter.name)] = body
            }
        }
    }

    subscript(name: String) -> Expansion? { expansions[name] }

    /// Adds or replaces a generated rule.
    /// - Parameters:
    ///   - name: The rule's symbol; generated symbols start with `heed_`.
    ///   - expansion: Its body.
    mutating func define(_ name: String, as expansion: Expansion) { expansions[name] = expansion }

    static func intentRuleName(_ intent: String) -> String { "heed_intent_\(intent)" }
    static func slotRuleName(intent: String, parameter: String) -> String { "heed_slot_\(intent)_\(parameter)" }
    static func vocabularyRuleName(_ type: String) -> String { "heed_vocab_\(type)" }

    /// The rule that a `{parameter}` slot of an intent stands for.
    static func slotRule(for parameter: ParameterDefinition, of intent: String) -> String {
        parameter.type.builtinRule ?? slotRuleName(intent: intent, parameter: parameter.name)
    }

    private static func synonymExpansions(_ cases: [EnumerationCase], at location: SourceLocation) -> [Expansion] {
        cases.flatMap { enumerationCase in
            enumerationCase.synonyms.map { synonym in
                .sequence(synonym.split(separator: " ").map { .word(String($0), location) })
            }
        }
    }

    /// One phone or more, each the pseudo-word ``OpenSlot/phoneWord(_:type:)``.
    private static func phoneLoop(type: String) -> Expansion {
        let location = SourceLocation(path: "vocabulary:\(type)", line: 0, column: 0)
        let phones = ModelPhones.speech.map { Expansion.word(OpenSlot.phoneWord($0, type: type), location) }
        return .repeated(.choice(phones), atLeastOnce: true, location)
    }

    private static func vocabularyExpansion(type: String, terms: [String], symbolic: Bool) -> Expansion {
        if symbolic {
            return .word("{\(type)}", SourceLocation(path: "vocabulary:\(type)", line: 0, column: 0))
        }
        var seen: Set<[String]> = []
        var alternatives: [Expansion] = []
        for (index, term) in terms.enumerated() {
            let words = TextNormalizer.words(term)
            guard !words.isEmpty, seen.insert(words).inserted else { continue }
            let location = SourceLocation(path: "vocabulary:\(type)", line: index + 1, column: 1)
            alternatives.append(.sequence(words.map { .word($0, location) }))
        }
        return .choice(alternatives)
    }
}

/// Turns typed or recognized text into the lower-case words templates are written in.
public enum TextNormalizer {
    /// Splits text into lower-case words.
    ///
    /// Punctuation is dropped except an apostrophe inside a word ("i'd"); a hyphen separates
    /// words ("twenty-five"); numerals are spelled out ("10" → "ten", "2.5" → "two point five",
    /// "50%" → "fifty percent").
    /// - Parameter text: Any text.
    /// - Returns: The words, possibly none.
    public static func words(_ text: String) -> [String] {
        if let words = plainWords(text) { return words }
        return generalWords(text)
    }

    /// ``words(_:)`` for any text: Unicode letters, numerals spelled out.
    static func generalWords(_ text: String) -> [String] {
        var words: [String] = []
        for token in text.lowercased().split(whereSeparator: { $0.isWhitespace }) {
            var token = Substring(token)
            while let last = token.last, ".,!?;:\"')".contains(last) { token.removeLast() }
            while let first = token.first, "\"'(".contains(first) { token.removeFirst() }
            let isPercent = token.hasSuffix("%")
            if isPercent { token.removeLast() }
            if let numeral = spelledNumeral(token) {
                words += numeral.split(separator: " ").map(String.init)
                if isPercent { words.append("percent") }
                continue
            }
            var word = ""
            for character in token {
                if character.isLetter || character.isNumber || (character == "'" && !word.isEmpty) {
                    word.append(character)
                } else if !word.isEmpty {
                    words.append(word.trimmingApostrophes())
                    word = ""
                }
            }
            if !word.isEmpty { words.append(word.trimmingApostrophes()) }
            if isPercent { words.append("percent") }
        }
        return words.filter { !$0.isEmpty }
    }

    /// The words of text made of ASCII letters, white space, apostrophes and the punctuation that
    /// only separates words (most registered names: "Rock 'n' Roll", "St. Louis", "Jay-Z"), read as
    /// bytes without the Unicode character tests of ``generalWords(_:)``, which it equals on such
    /// text; `nil` for any other text (digits, `%`, other symbols, letters outside ASCII). Every
    /// term of a large vocabulary is read this way several times when a grammar is built: 16% of
    /// 10,000 titles went the general way and took three quarters of the time (callgrind).
    private static func plainWords(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var words: [String] = []
            var word: [UInt8] = []
            func endWord() {
                while word.last == UInt8(ascii: "'") { word.removeLast() }
                if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self)) }
                word.removeAll(keepingCapacity: true)
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): word.append(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): word.append(byte + 32)
                // Inside a word only; "'tis" is "tis".
                case UInt8(ascii: "'"): if !word.isEmpty { word.append(byte) }
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "-"), UInt8(ascii: "."),
                    UInt8(ascii: ","), UInt8(ascii: "!"), UInt8(ascii: "?"), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\""),
                    UInt8(ascii: "("), UInt8(ascii: ")"):
                    endWord()
                default: return nil
                }
            }
            endWord()
            return words
        }
    }

    private static func spelledNumeral(_ token: Substring) -> String? {
        guard let first = token.first, first.isASCII, first.isNumber,
            token.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }), token.filter({ $0 == "." }).count <= 1
        else { return nil }
        if let integer = Int(token), integer <= SpokenNumbers.maximumInteger { return SpokenNumbers.words(for: integer) }
        guard let number = Double(token), number <= Double(SpokenNumbers.maximumInteger) else { return nil }
        return SpokenNumbers.words(for: number)
    }
}

extension String {
    fileprivate func trimmingApostrophes() -> String {
        var text = Substring(self)
        while text.last == "'" { text.removeLast() }
        return String(text)
    }
}
