public import HeedCore
public import HeedPluginProtocol
/// One intent as an intent file defines it.
public struct IntentDefinition: Sendable {
    /// The intent's name, unique across all loaded files, e.g. `setTimer`.
    public var name: String
    /// The `domain` of the file that defines it, e.g. `timer`.
    public var domain: String
    /// What the intent does, for people.
    public var description: String
    /// The typed parameters, in declared order (the order they are resolved in).
    public var parameters: [ParameterDefinition]
    /// The phrase templates as written.
    public var templates: [String]
    /// Whether the user must say yes before the intent is handled.
    public var requiresConfirmation: Bool
    /// Response texts by key (`success`, `failure`, …), with `{parameter}` placeholders.
    public var responses: [String: String]
    /// How Heed picks the app for this intent: by the intent (the one plugin that lists it), or by
    /// what is going on (the app whose activity takes ``ActivityRouting/control`` now).
    public var activityRouting: ActivityRouting?
    /// Whether the intent's phrases are in the listener's grammar only while an app that handles it
    /// has an activity ("louder", "skip", "snooze"): bare words that would otherwise be heard in
    /// other talk.
    public var isContextual: Bool
    /// Where the intent's `name` is written.
    public var location: SourceLocation

    /// The parsed templates, with the location of each.
    var compiledTemplates: [Template]

    /// Looks up a parameter by name.
    /// - Parameter name: The parameter's name.
    /// - Returns: The parameter, or `nil` when the intent has none of that name.
    public func parameter(named name: String) -> ParameterDefinition? { parameters.first { $0.name == name } }

    /// Renders a response text with parameter values substituted.
    ///
    /// `{name}` becomes the value's ``ParameterValue/displayText``: numerals for numbers, words for
    /// durations ("ten minutes") and ordinals. A placeholder without a value is left out and the
    /// spaces around it are collapsed.
    /// - Parameters:
    ///   - key: The response key, e.g. `success`.
    ///   - values: Parameter values by name.
    /// - Returns: The text, or `nil` when the intent has no response with that key.
    public func response(_ key: String, values: [String: ParameterValue]) -> String? {
        guard let text = responses[key] else { return nil }
        var result = ""
        var remainder = Substring(text)
        while let open = remainder.firstIndex(of: "{"),
            let close = remainder[open...].firstIndex(of: "}")
        {
            result += remainder[..<open]
            let name = String(remainder[remainder.index(after: open)..<close])
            result += values[name]?.displayText ?? ""
            remainder = remainder[remainder.index(after: close)...]
        }
        result += remainder
        return result.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .replacingSpaceBeforePunctuation()
    }
}

/// How a control intent ("pause", "next track", "louder") finds its app: among the activities the
/// apps that list the intent report now (``PluginActivity``), the one that takes the control.
public struct ActivityRouting: Sendable, Hashable {
    /// The control the intent performs; only activities that list it now are candidates.
    public var control: PluginActivity.Control
    /// Only activities of this kind are candidates (`media` for "pause the music"); `nil`: any.
    public var kind: String?
    /// The parameter that names the activity ("pause spotify"); when it has a value, only
    /// activities called that are candidates.
    public var target: String?

    /// Creates a routing.
    public init(control: PluginActivity.Control, kind: String? = nil, target: String? = nil) {
        self.control = control
        self.kind = kind
        self.target = target
    }
}

extension String {
    fileprivate func replacingSpaceBeforePunctuation() -> String {
        var result = ""
        for character in self {
            if ".,!?;:".contains(character), result.last == " " { result.removeLast() }
            result.append(character)
        }
        return result
    }
}

/// A parsed phrase template.
struct Template: Sendable {
    var text: String
    var expansion: Expansion
    /// Where the template string starts (its opening quote).
    var location: SourceLocation
}

/// One typed parameter of an intent.
public struct ParameterDefinition: Sendable {
    /// The parameter's name, as `{name}` in templates.
    public var name: String
    /// What values it takes.
    public var type: ParameterType
    /// Whether the intent needs a value (then a missing one is asked for with ``prompt``).
    public var isRequired: Bool
    /// The question asked when the value is missing.
    public var prompt: String?
    /// The smallest value allowed, for integer and number parameters.
    public var minimum: Double?
    /// The largest value allowed, for integer and number parameters.
    public var maximum: Double?
    /// Where the parameter's `name` is written.
    public var location: SourceLocation

    /// For a phrase parameter: the words it may be.
    var phraseExpansion: Expansion?
}

/// The type of a parameter, which decides its spoken forms and its value.
public enum ParameterType: Sendable, Hashable {
    /// Whole numbers, "zero" to "nine hundred ninety nine thousand nine hundred ninety nine".
    case integer
    /// Decimal numbers: "two point five".
    case number
    /// yes/no words.
    case boolean
    /// Durations in seconds: "an hour and a half".
    case duration
    /// Positions: "the second one", "the last one".
    case ordinal
    /// One of fixed cases, each with spoken synonyms.
    case enumeration([EnumerationCase])
    /// A term of a vocabulary type registered at run time, or one of the fallback cases.
    case vocabulary(type: String, fallback: [EnumerationCase])
    /// Exactly the words spoken, restricted by the parameter's `grammar`.
    case phrase

    /// The name used in intent files.
    public var name: String {
        switch self {
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .duration: "duration"
        case .ordinal: "ordinal"
        case .enumeration: "enumeration"
        case .vocabulary: "vocabulary"
        case .phrase: "phrase"
        }
    }

    /// The built-in JSGF rule that defines the spoken forms of a scalar type.
    var builtinRule: String? {
        switch self {
        case .integer, .number, .boolean, .duration, .ordinal: "heed_\(name)"
        case .enumeration, .vocabulary, .phrase: nil
        }
    }
}

/// One case of an enumeration: the value a handler gets and the words that say it.
public struct EnumerationCase: Sendable, Hashable {
    /// The value, e.g. `run`.
    public var value: String
    /// The spoken forms, lower-case words, e.g. `["run", "running", "jog"]`.
    public var synonyms: [String]

    /// Creates a case.
    /// - Parameters:
    ///   - value: The value a handler gets.
    ///   - synonyms: The spoken forms.
    public init(value: String, synonyms: [String]) {
        self.value = value
        self.synonyms = synonyms
    }
}
