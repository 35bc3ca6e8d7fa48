public import HeedIntents

// JSON for machines: `{"intent": NAME, "parameters": {...}}` with numbers as numbers,
// durations in seconds, ordinals as positions or "last", text as strings.

extension ParameterValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .boolean(let value): try container.encode(value)
        case .duration(let seconds): try container.encode(seconds)
        case .ordinal(.position(let position)): try container.encode(position)
        case .ordinal(.last): try container.encode("last")
        case .enumeration(let text), .vocabulary(let text), .phrase(let text): try container.encode(text)
        }
    }
}

extension IntentMatch: Encodable {
    private enum Key: String, CodingKey { case intent, parameters }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(intent, forKey: .intent)
        try container.encode(parameters, forKey: .parameters)
    }
}
