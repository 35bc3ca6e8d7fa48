import HeedCore
/// A position in a list as a user says it: "the second one", "the last one".
public enum Ordinal: Sendable, Hashable {
    /// A position counted from 1: "first" is `.position(1)`.
    case position(Int)
    /// "the last one", whatever the length of the list.
    case last
}

/// A typed parameter value parsed from spoken words.
public enum ParameterValue: Sendable, Hashable {
    /// A whole number: "twenty five" is `.integer(25)`.
    case integer(Int)
    /// A decimal number: "two point five" is `.number(2.5)`.
    case number(Double)
    /// Yes or no: "yeah" is `.boolean(true)`.
    case boolean(Bool)
    /// A duration in whole seconds: "an hour and a half" is `.duration(seconds: 5400)`.
    case duration(seconds: Int)
    /// A position: "the second one" is `.ordinal(.position(2))`.
    case ordinal(Ordinal)
    /// The `value` of the enumeration case whose synonym was spoken.
    case enumeration(String)
    /// A registered vocabulary term as registered, or the value of a fallback case.
    case vocabulary(String)
    /// Exactly the words spoken for the slot, lower-case, separated by single spaces.
    case phrase(String)

    /// The canonical spoken words: `.duration(seconds: 5400)` is "one hour thirty minutes".
    ///
    /// Parsing these words as the same type gives the value back.
    public var spokenWords: String {
        switch self {
        case .integer(let value): SpokenNumbers.words(for: value)
        case .number(let value): SpokenNumbers.words(for: value)
        case .boolean(let value): value ? "yes" : "no"
        case .duration(let seconds): SpokenDuration.words(forSeconds: seconds)
        case .ordinal(let ordinal): SpokenNumbers.words(for: ordinal)
        case .enumeration(let text), .vocabulary(let text), .phrase(let text): text
        }
    }

    /// The value as response texts show it: numbers as numerals, durations and ordinals in words.
    public var displayText: String {
        switch self {
        case .integer(let value): String(value)
        case .number(let value): SpokenNumbers.numeral(for: value)
        default: spokenWords
        }
    }

    /// The value as JSON text: numbers as numbers, durations as seconds, `.last` as `"last"`.
    public var jsonText: String {
        switch self {
        case .integer(let value): String(value)
        case .number(let value): SpokenNumbers.numeral(for: value)
        case .boolean(let value): value ? "true" : "false"
        case .duration(let seconds): String(seconds)
        case .ordinal(.position(let position)): String(position)
        case .ordinal(.last): "\"last\""
        case .enumeration(let text), .vocabulary(let text), .phrase(let text): JSONText.quoted(text)
        }
    }
}

/// One parse of a sentence: which intent, with which parameter values.
public struct IntentMatch: Sendable, Hashable {
    /// The intent's name.
    public var intent: String
    /// The values of the parameters that were spoken, by parameter name.
    public var parameters: [String: ParameterValue]

    /// Creates a match.
    /// - Parameters:
    ///   - intent: The intent's name.
    ///   - parameters: The spoken parameter values by name.
    public init(intent: String, parameters: [String: ParameterValue]) {
        self.intent = intent
        self.parameters = parameters
    }

    /// `{"intent": NAME, "parameters": {...}}` with the parameters sorted by name.
    public var jsonText: String {
        let members = parameters.sorted { $0.key < $1.key }
            .map { "\(JSONText.quoted($0.key)): \($0.value.jsonText)" }
        return "{\"intent\": \(JSONText.quoted(intent)), \"parameters\": {\(members.joined(separator: ", "))}}"
    }
}

enum JSONText {
    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let scalar where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
