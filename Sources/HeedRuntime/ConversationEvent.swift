public import HeedPluginProtocol

/// One step of a conversation, as `heed run --json` prints it (one JSON object a line, its kind
/// in `event`).
public enum ConversationEvent: Sendable, Hashable, Encodable {
    /// The intent and the values that were spoken: `{"event": "intent", "intent", "parameters"}`.
    case intent(String, parameters: [String: PluginValue])
    /// Which activity a control intent ("pause") goes to.
    case route(Route)
    /// The authorization gate's decision (`status` an ``AuthorizationStatus``, or `refused`
    /// with `text` the reason the store gave).
    case authorization(app: String, status: String, reason: String? = nil, milliseconds: Double)
    /// A question put to the user.
    case prompt(String)
    /// The user's answer; `nil` when there was none.
    case answer(String?)
    /// The plugin's resolution of one parameter.
    case resolve(Resolution)
    /// The plugin's confirm reply (`outcome`: `ready`, `failure`).
    case confirm(PluginStep)
    /// The plugin's handle reply (`outcome`: `success`, `inProgress`, `failure`).
    case handle(PluginStep)
    /// What the user is told at the end.
    case response(String)
    /// How the conversation ended.
    case end(ConversationResult)
    /// What a plugin announced on its own (`heed run --wait`), for the intent it names.
    case notification(String, intent: String? = nil)

    /// Where a control intent went: `outcome` `none` (``noActivity``), `disambiguation` (`values` the
    /// candidates' names) or `success` (`app`, and `text` the activity's title).
    public enum Route: Sendable, Hashable {
        case noActivity
        case disambiguation([String])
        case chosen(app: String, title: String)
    }

    /// One parameter's resolution: `outcome` as the plugin said it (`success`, `notRequired`,
    /// `needsValue`, `disambiguation`, `confirmationRequired`, `unsupported`) or `failure`;
    /// `values` the value or options, `text` the reason.
    public struct Resolution: Sendable, Hashable {
        public var parameter: String
        public var outcome: String
        public var values: [PluginValue]?
        public var reason: String?
        public var milliseconds: Double

        public init(parameter: String, outcome: String, values: [PluginValue]? = nil, reason: String? = nil, milliseconds: Double) {
            self.parameter = parameter
            self.outcome = outcome
            self.values = values
            self.reason = reason
            self.milliseconds = milliseconds
        }
    }

    /// A confirm or handle reply from the app's plugin, with its time.
    public struct PluginStep: Sendable, Hashable {
        public var app: String
        public var outcome: String
        /// The plugin's response text, or the reason it failed.
        public var text: String?
        public var milliseconds: Double

        public init(app: String, outcome: String, text: String? = nil, milliseconds: Double) {
            self.app = app
            self.outcome = outcome
            self.text = text
            self.milliseconds = milliseconds
        }
    }

    /// The kind, as the JSON's `event`.
    public var name: String {
        switch self {
        case .intent: "intent"
        case .route: "route"
        case .authorization: "authorization"
        case .prompt: "prompt"
        case .answer: "answer"
        case .resolve: "resolve"
        case .confirm: "confirm"
        case .handle: "handle"
        case .response: "response"
        case .end: "end"
        case .notification: "notification"
        }
    }

    private enum Key: String, CodingKey {
        case event, intent, parameters, app, status, parameter, outcome, values, text, milliseconds
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: .event)
        switch self {
        case .intent(let intent, let parameters):
            try container.encode(intent, forKey: .intent)
            try container.encode(parameters, forKey: .parameters)
        case .route(.noActivity):
            try container.encode("none", forKey: .outcome)
        case .route(.disambiguation(let names)):
            try container.encode("disambiguation", forKey: .outcome)
            try container.encode(names.map(PluginValue.string), forKey: .values)
        case .route(.chosen(let app, let title)):
            try container.encode("success", forKey: .outcome)
            try container.encode(app, forKey: .app)
            try container.encode(title, forKey: .text)
        case .authorization(let app, let status, let reason, let milliseconds):
            try container.encode(app, forKey: .app)
            try container.encode(status, forKey: .status)
            try container.encodeIfPresent(reason, forKey: .text)
            try container.encode(milliseconds, forKey: .milliseconds)
        case .prompt(let text), .response(let text):
            try container.encode(text, forKey: .text)
        case .answer(let text):
            try container.encodeIfPresent(text, forKey: .text)
        case .resolve(let resolution):
            try container.encode(resolution.parameter, forKey: .parameter)
            try container.encode(resolution.outcome, forKey: .outcome)
            try container.encodeIfPresent(resolution.values, forKey: .values)
            try container.encodeIfPresent(resolution.reason, forKey: .text)
            try container.encode(resolution.milliseconds, forKey: .milliseconds)
        case .confirm(let step), .handle(let step):
            try container.encode(step.app, forKey: .app)
            try container.encode(step.outcome, forKey: .outcome)
            try container.encodeIfPresent(step.text, forKey: .text)
            try container.encode(step.milliseconds, forKey: .milliseconds)
        case .end(let result):
            try container.encode(result.ending.description, forKey: .outcome)
            try container.encode(result.message, forKey: .text)
        case .notification(let text, let intent):
            try container.encode(text, forKey: .text)
            try container.encodeIfPresent(intent, forKey: .intent)
        }
    }
}
