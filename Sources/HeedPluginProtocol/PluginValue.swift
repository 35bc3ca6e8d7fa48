/// A parameter value as it travels between Heed and a plugin: plain JSON.
///
/// Heed's typed parameter values map onto JSON like this:
///
/// | Heed type | JSON |
/// | --- | --- |
/// | integer, number | a number (`25`, `2.5`) |
/// | duration | a number of seconds (`600`; "an hour and a half" is `5400`) |
/// | boolean | `true` or `false` |
/// | ordinal | a number counted from 1 (`2` for "the second one"), or the string `"last"` |
/// | enumeration, vocabulary, phrase | a string (the case name or the spoken text) |
///
/// A parameter that has no value yet is absent from the parameters object; `null` means the same.
public enum PluginValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([PluginValue])
    case object([String: PluginValue])

    /// Decodes any JSON value.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when the value is not JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PluginValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: PluginValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    /// Encodes the value as JSON.
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: `EncodingError` when a number is not finite.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            // Whole numbers are written without a fraction, so `600` stays `600` for C readers.
            if value.rounded() == value, abs(value) < 9e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as a string, when it is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as a number, when it is one.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The value as a whole number, when it is a number without a fraction.
    public var integerValue: Int? {
        guard case .number(let value) = self, value.rounded() == value, abs(value) < 9e15 else { return nil }
        return Int(value)
    }

    /// The value as a boolean, when it is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value as a duration, when it is a number of seconds.
    public var durationValue: Duration? {
        guard case .number(let seconds) = self, seconds.isFinite else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }

    /// The value written as compact JSON-like text, for logs and messages.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value.rounded() == value && abs(value) < 9e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
    }
}

extension PluginValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: PluginValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PluginValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}
