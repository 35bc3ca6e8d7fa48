public import HeedPluginProtocol

/// An intent a plugin handles, typed: a name and stored properties read from the wire parameters.
///
/// ```swift
/// struct SetTimer: Intent {
///     static let name = "setTimer"
///     static let requiredParameters: Set<String> = ["duration"]
///     var duration: Duration
///     var label: String?
///     init?(parameters: IntentParameters) {
///         guard let duration = parameters.duration("duration") else { return nil }
///         self.duration = duration
///         self.label = parameters.string("label")
///     }
/// }
/// ```
public protocol Intent: Sendable {
    /// The intent's name as intent files and the wire spell it, e.g. `setTimer`.
    static var name: String { get }
    /// The parameters without which the intent cannot be handled. The default resolve
    /// answers `needsValue` for these when they have no value. Defaults to none.
    static var requiredParameters: Set<String> { get }
    /// Reads the intent from its resolved wire parameters.
    /// - Parameter parameters: The values by parameter name.
    /// Returns `nil` when a required value is missing or has the wrong type; Heed is then
    /// answered with an `error` reply naming the intent.
    init?(parameters: IntentParameters)
}

extension Intent {
    public static var requiredParameters: Set<String> { [] }
}

/// A position in a list as users say it: "the second one" or "the last one".
public enum Ordinal: Sendable, Hashable {
    /// A position counted from 1.
    case position(Int)
    /// The last item.
    case last

    /// The index this ordinal selects in a collection of `count` items, if it is in range.
    /// - Parameter count: The number of items.
    /// - Returns: A zero-based index, or `nil` when out of range.
    public func index(in count: Int) -> Int? {
        switch self {
        case .last: count > 0 ? count - 1 : nil
        case .position(let position): (1...max(count, 1)).contains(position) && count > 0 ? position - 1 : nil
        }
    }
}

/// The parameter values of an intent, with typed readers that follow the wire conventions
/// of ``PluginValue``: durations are seconds, ordinals a number or `"last"`.
public struct IntentParameters: Sendable, Hashable {
    /// The values by parameter name, as they came over the wire.
    public var values: [String: PluginValue]

    /// Wraps wire values.
    /// - Parameter values: The values by parameter name.
    public init(_ values: [String: PluginValue] = [:]) { self.values = values }

    /// The value of a parameter, or `nil` when it is absent or `null`.
    public subscript(name: String) -> PluginValue? {
        guard let value = values[name], !value.isNull else { return nil }
        return value
    }

    /// A string parameter, or `nil` when absent or not a string.
    public func string(_ name: String) -> String? { self[name]?.stringValue }
    /// An integer parameter, or `nil` when absent or not a whole number.
    public func integer(_ name: String) -> Int? { self[name]?.integerValue }
    /// A number parameter, or `nil` when absent or not a number.
    public func number(_ name: String) -> Double? { self[name]?.numberValue }
    /// A boolean parameter, or `nil` when absent or not a boolean.
    public func bool(_ name: String) -> Bool? { self[name]?.boolValue }
    /// A duration parameter (seconds on the wire), or `nil` when absent or not a number.
    public func duration(_ name: String) -> Duration? { self[name]?.durationValue }

    /// An ordinal parameter (a number from 1 or `"last"`), or `nil` when absent or malformed.
    public func ordinal(_ name: String) -> Ordinal? {
        switch self[name] {
        case .string("last"): .last
        case let value?: value.integerValue.map(Ordinal.position)
        case nil: nil
        }
    }
}
