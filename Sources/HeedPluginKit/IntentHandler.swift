public import HeedPluginProtocol

/// Carries out one kind of intent: SiriKit's resolve → confirm → handle.
///
/// Only ``handle(_:context:)`` must be written. The defaults:
/// - ``resolve(_:context:)`` answers `success(value)` when the parameter has a value,
///   `needsValue` when it has none and is one of the intent's
///   ``Intent/requiredParameters``, and `notRequired` otherwise.
/// - ``confirm(_:context:)`` answers `ready`.
///
/// A thrown error becomes an `error` reply with the error's description; Heed tells the
/// user the plugin failed. Expected outcomes (no match, nothing playing) are values, not errors.
public protocol IntentHandler<Intent>: Sendable {
    /// The intent this handler carries out.
    associatedtype Intent: HeedPluginKit.Intent

    /// Resolves one parameter.
    /// - Parameters:
    ///   - request: The parameter to resolve, its value and every other value known so far.
    ///   - context: The connection to Heed, e.g. to send notifications.
    /// - Returns: How the parameter resolved.
    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome

    /// Tells whether the intent can be carried out now.
    /// - Parameters:
    ///   - intent: The intent with resolved parameters.
    ///   - context: The connection to Heed.
    /// - Returns: `ready` or `failure(reason)`.
    func confirm(_ intent: Intent, context: PluginContext) async throws -> ConfirmOutcome

    /// Carries out the intent.
    /// - Parameters:
    ///   - intent: The intent with resolved parameters.
    ///   - context: The connection to Heed; keep it to notify later (a timer that ends).
    /// - Returns: `success`, `failure` or `inProgress`, with a response text.
    func handle(_ intent: Intent, context: PluginContext) async throws -> HandleOutcome
}

extension IntentHandler {
    public func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        if let value = request.value { return .success(value) }
        return Intent.requiredParameters.contains(request.parameter) ? .needsValue : .notRequired
    }

    public func confirm(_ intent: Intent, context: PluginContext) async throws -> ConfirmOutcome { .ready }
}

/// One parameter to resolve, with the intent's other values.
public struct ResolveRequest: Sendable, Hashable {
    /// The name of the parameter to resolve.
    public var parameter: String
    /// Every value known so far; the intent may still be incomplete.
    public var parameters: IntentParameters
    /// Whether the value is one the user picked from this plugin's disambiguation list or
    /// confirmed: accept it when it is one of your values instead of asking again.
    public var isUserChoice: Bool

    /// Creates a request.
    public init(parameter: String, parameters: IntentParameters, isUserChoice: Bool = false) {
        self.parameter = parameter
        self.parameters = parameters
        self.isUserChoice = isUserChoice
    }

    /// The value of the parameter to resolve, or `nil` when it has none yet.
    public var value: PluginValue? { parameters[parameter] }
}
