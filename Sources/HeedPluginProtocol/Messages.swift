/// The version of the plugin wire protocol, and its fixed limits.
///
/// Like swift-argument-parser's `ToolInfoHeader`, the version travels in a header
/// (``PluginProtocolHeader``) that can be decoded before the rest of a message, so a
/// reader can refuse a version it does not know instead of misreading it.
public enum PluginProtocol {
    /// The version this module speaks. Heed and a plugin must agree on it in the handshake.
    public static let serializationVersion = 1
    /// The longest line, in bytes without the line break, that Heed accepts from a plugin: 1 MiB.
    public static let maximumLineLength = 1 << 20
}

/// The part of a handshake message that says which protocol version it is written in.
public struct PluginProtocolHeader: Sendable, Hashable, Codable {
    /// The ``PluginProtocol/serializationVersion`` the sender speaks.
    public var serializationVersion: Int

    /// Creates a header.
    /// - Parameter serializationVersion: The version the sender speaks.
    public init(serializationVersion: Int = PluginProtocol.serializationVersion) {
        self.serializationVersion = serializationVersion
    }
}

/// An intent as the plugin sees it: its name and the parameter values known so far.
public struct PluginIntent: Sendable, Hashable, Codable {
    /// The intent's name, e.g. `setTimer`.
    public var name: String
    /// The values by parameter name; a parameter without a value is absent.
    public var parameters: [String: PluginValue]

    /// Creates an intent.
    /// - Parameters:
    ///   - name: The intent's name.
    ///   - parameters: The values known so far, by parameter name.
    public init(name: String, parameters: [String: PluginValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }
}

// MARK: - Heed → plugin

/// A request from Heed to a plugin, one JSON object per line on the plugin's standard input.
///
/// Every request has an ``id``; the plugin's reply carries the same id.
public struct PluginRequest: Sendable, Hashable, Codable {
    /// What Heed asks.
    public enum Body: Sendable, Hashable {
        /// The handshake: the protocol version Heed speaks and the intents it will send.
        case hello(PluginProtocolHeader, intents: [String])
        /// Resolve one parameter of an intent. `userChoice` is true when the parameter's value is
        /// one the user picked from this plugin's disambiguation list or confirmed with "yes":
        /// the plugin should accept it if it is one of its own values, not ask again.
        case resolve(PluginIntent, parameter: String, userChoice: Bool = false)
        /// Confirm that an intent with resolved parameters can be handled.
        case confirm(PluginIntent)
        /// Carry out an intent.
        case handle(PluginIntent)
        /// Report the app's ongoing activities (``PluginActivity``). A plugin that has none, or
        /// does not know the request, answers with an empty list or an error; both mean none.
        case activities
        /// Finish and exit. There is no reply.
        case shutdown
    }

    /// The request's number; the reply carries it.
    public var id: Int
    /// What Heed asks.
    public var body: Body

    /// Creates a request.
    public init(id: Int, _ body: Body) {
        self.id = id
        self.body = body
    }

    /// The `op` member on the wire: `hello`, `resolve`, `confirm`, `handle`, `activities` or `shutdown`.
    public var operation: String {
        switch body {
        case .hello: "hello"
        case .resolve: "resolve"
        case .confirm: "confirm"
        case .handle: "handle"
        case .activities: "activities"
        case .shutdown: "shutdown"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case id, op, serializationVersion, intents, intent, parameter, userChoice
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        let operation = try container.decode(String.self, forKey: .op)
        switch operation {
        case "hello":
            let version = try container.decode(Int.self, forKey: .serializationVersion)
            let intents = try container.decodeIfPresent([String].self, forKey: .intents) ?? []
            body = .hello(PluginProtocolHeader(serializationVersion: version), intents: intents)
        case "resolve":
            body = .resolve(
                try container.decode(PluginIntent.self, forKey: .intent),
                parameter: try container.decode(String.self, forKey: .parameter),
                userChoice: try container.decodeIfPresent(Bool.self, forKey: .userChoice) ?? false
            )
        case "confirm": body = .confirm(try container.decode(PluginIntent.self, forKey: .intent))
        case "handle": body = .handle(try container.decode(PluginIntent.self, forKey: .intent))
        case "activities": body = .activities
        case "shutdown": body = .shutdown
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .op, in: container, debugDescription: "unknown op '\(operation)'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(operation, forKey: .op)
        switch body {
        case .hello(let header, let intents):
            try container.encode(header.serializationVersion, forKey: .serializationVersion)
            try container.encode(intents, forKey: .intents)
        case .resolve(let intent, let parameter, let userChoice):
            try container.encode(intent, forKey: .intent)
            try container.encode(parameter, forKey: .parameter)
            if userChoice { try container.encode(true, forKey: .userChoice) }
        case .confirm(let intent), .handle(let intent):
            try container.encode(intent, forKey: .intent)
        case .activities, .shutdown:
            break
        }
    }
}

// MARK: - plugin → Heed

/// How a plugin resolved one parameter (SiriKit's resolution results).
public enum ResolveOutcome: Sendable, Hashable {
    /// The value is settled.
    case success(PluginValue)
    /// Several values fit; Heed reads them and lets the user pick one, then resolves again.
    case disambiguation([PluginValue])
    /// Heed asks the user yes or no about this value, then resolves again.
    case confirmationRequired(PluginValue)
    /// The parameter has no usable value; Heed asks the parameter's prompt, then resolves again.
    case needsValue
    /// The parameter does not matter for this intent.
    case notRequired
    /// The value cannot be used; Heed says the reason and ends the conversation.
    case unsupported(reason: String)
}

/// Whether an intent can be handled, answered before Heed handles it.
public enum ConfirmOutcome: Sendable, Hashable {
    /// Everything is in place.
    case ready
    /// The intent cannot be carried out now; Heed says the reason.
    case failure(reason: String)
}

/// The result of carrying out an intent.
public struct HandleOutcome: Sendable, Hashable {
    /// How handling went.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Done.
        case success
        /// Not done.
        case failure
        /// Started; it finishes later (and may notify).
        case inProgress
    }

    /// How handling went.
    public var status: Status
    /// A sentence Heed shows and speaks, e.g. "Timer set for ten minutes."
    public var response: String?

    /// Creates an outcome.
    public init(_ status: Status, response: String? = nil) {
        self.status = status
        self.response = response
    }

    /// The intent was carried out.
    public static func success(_ response: String? = nil) -> HandleOutcome { .init(.success, response: response) }
    /// The intent could not be carried out.
    public static func failure(_ response: String? = nil) -> HandleOutcome { .init(.failure, response: response) }
    /// The intent was started and finishes later.
    public static func inProgress(_ response: String? = nil) -> HandleOutcome { .init(.inProgress, response: response) }
}

/// The plugin's answer to the handshake.
public struct PluginHello: Sendable, Hashable {
    /// The protocol version the plugin speaks.
    public var header: PluginProtocolHeader
    /// The plugin's app id (reverse DNS, as in its manifest).
    public var appID: String
    /// The intents the plugin handles.
    public var intents: [String]

    /// Creates a handshake reply.
    public init(header: PluginProtocolHeader = .init(), appID: String, intents: [String]) {
        self.header = header
        self.appID = appID
        self.intents = intents
    }
}

/// A reply to one request.
public struct PluginResponse: Sendable, Hashable {
    /// What the plugin answers.
    public enum Body: Sendable, Hashable {
        case hello(PluginHello)
        case resolve(ResolveOutcome)
        case confirm(ConfirmOutcome)
        case handle(HandleOutcome)
        /// The app's ongoing activities, most important first.
        case activities([PluginActivity])
        /// The plugin cannot serve the request (unknown intent, malformed parameters, …).
        case error(message: String)
    }

    /// The id of the request this answers.
    public var id: Int
    /// What the plugin answers.
    public var body: Body

    /// Creates a reply.
    public init(id: Int, _ body: Body) {
        self.id = id
        self.body = body
    }
}

/// Something a plugin tells the user unasked, e.g. that a timer ended. It has no id.
public struct PluginNotification: Sendable, Hashable {
    /// A sentence Heed shows and speaks: "Your pasta timer is done."
    public var text: String
    /// The intent it relates to, if any (`setTimer`).
    public var intent: String?
    /// A short machine-readable name of the event, if any (`timerFired`).
    public var event: String?

    /// Creates a notification.
    public init(text: String, intent: String? = nil, event: String? = nil) {
        self.text = text
        self.intent = intent
        self.event = event
    }
}

/// One line a plugin writes on its standard output: a reply, a notification, its activities
/// reported unasked (an `activities` message without an id) whenever they change, or the strings
/// of one of its vocabulary types (`vocabulary`), as SiriKit's `setVocabularyStrings` registers them.
public enum PluginMessage: Sendable, Hashable, Codable {
    case response(PluginResponse)
    case notification(PluginNotification)
    case activities([PluginActivity])
    /// The whole list of one vocabulary type of the plugin's app, most important first.
    case vocabulary(type: String, terms: [String])

    private enum CodingKeys: String, CodingKey {
        case id, type, serializationVersion, appId, intents, outcome, value, values, reason, response, message,
            text, intent, event, activities, vocabularyType, terms
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        if type == "notification" {
            self = .notification(
                PluginNotification(
                    text: try container.decode(String.self, forKey: .text),
                    intent: try container.decodeIfPresent(String.self, forKey: .intent),
                    event: try container.decodeIfPresent(String.self, forKey: .event)
                ))
            return
        }
        if type == "vocabulary" {
            self = .vocabulary(
                type: try container.decode(String.self, forKey: .vocabularyType), terms: try container.decode([String].self, forKey: .terms))
            return
        }
        if type == "activities", !container.contains(.id) {
            self = .activities(try container.decode([PluginActivity].self, forKey: .activities))
            return
        }
        let id = try container.decode(Int.self, forKey: .id)
        func outcome() throws -> String { try container.decode(String.self, forKey: .outcome) }
        func reason() throws -> String { try container.decode(String.self, forKey: .reason) }
        func bad(_ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: .outcome, in: container, debugDescription: message)
        }
        let body: PluginResponse.Body
        switch type {
        case "hello":
            body = .hello(
                PluginHello(
                    header: .init(serializationVersion: try container.decode(Int.self, forKey: .serializationVersion)),
                    appID: try container.decode(String.self, forKey: .appId),
                    intents: try container.decodeIfPresent([String].self, forKey: .intents) ?? []
                ))
        case "resolve":
            switch try outcome() {
            case "success": body = .resolve(.success(try container.decode(PluginValue.self, forKey: .value)))
            case "disambiguation":
                body = .resolve(.disambiguation(try container.decode([PluginValue].self, forKey: .values)))
            case "confirmationRequired":
                body = .resolve(.confirmationRequired(try container.decode(PluginValue.self, forKey: .value)))
            case "needsValue": body = .resolve(.needsValue)
            case "notRequired": body = .resolve(.notRequired)
            case "unsupported": body = .resolve(.unsupported(reason: try reason()))
            case let other: throw bad("unknown resolve outcome '\(other)'")
            }
        case "confirm":
            switch try outcome() {
            case "ready": body = .confirm(.ready)
            case "failure": body = .confirm(.failure(reason: try reason()))
            case let other: throw bad("unknown confirm outcome '\(other)'")
            }
        case "handle":
            let text = try outcome()
            guard let status = HandleOutcome.Status(rawValue: text) else { throw bad("unknown handle outcome '\(text)'") }
            body = .handle(HandleOutcome(status, response: try container.decodeIfPresent(String.self, forKey: .response)))
        case "activities":
            body = .activities(try container.decode([PluginActivity].self, forKey: .activities))
        case "error":
            body = .error(message: try container.decode(String.self, forKey: .message))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown message type '\(type)'")
        }
        self = .response(PluginResponse(id: id, body))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .notification(let notification):
            try container.encode("notification", forKey: .type)
            try container.encode(notification.text, forKey: .text)
            try container.encodeIfPresent(notification.intent, forKey: .intent)
            try container.encodeIfPresent(notification.event, forKey: .event)
        case .activities(let activities):
            try container.encode("activities", forKey: .type)
            try container.encode(activities, forKey: .activities)
        case .vocabulary(let type, let terms):
            try container.encode("vocabulary", forKey: .type)
            try container.encode(type, forKey: .vocabularyType)
            try container.encode(terms, forKey: .terms)
        case .response(let response):
            try container.encode(response.id, forKey: .id)
            switch response.body {
            case .hello(let hello):
                try container.encode("hello", forKey: .type)
                try container.encode(hello.header.serializationVersion, forKey: .serializationVersion)
                try container.encode(hello.appID, forKey: .appId)
                try container.encode(hello.intents, forKey: .intents)
            case .resolve(let outcome):
                try container.encode("resolve", forKey: .type)
                switch outcome {
                case .success(let value):
                    try container.encode("success", forKey: .outcome)
                    try container.encode(value, forKey: .value)
                case .disambiguation(let values):
                    try container.encode("disambiguation", forKey: .outcome)
                    try container.encode(values, forKey: .values)
                case .confirmationRequired(let value):
                    try container.encode("confirmationRequired", forKey: .outcome)
                    try container.encode(value, forKey: .value)
                case .needsValue: try container.encode("needsValue", forKey: .outcome)
                case .notRequired: try container.encode("notRequired", forKey: .outcome)
                case .unsupported(let reason):
                    try container.encode("unsupported", forKey: .outcome)
                    try container.encode(reason, forKey: .reason)
                }
            case .confirm(let outcome):
                try container.encode("confirm", forKey: .type)
                switch outcome {
                case .ready: try container.encode("ready", forKey: .outcome)
                case .failure(let reason):
                    try container.encode("failure", forKey: .outcome)
                    try container.encode(reason, forKey: .reason)
                }
            case .handle(let outcome):
                try container.encode("handle", forKey: .type)
                try container.encode(outcome.status.rawValue, forKey: .outcome)
                try container.encodeIfPresent(outcome.response, forKey: .response)
            case .activities(let activities):
                try container.encode("activities", forKey: .type)
                try container.encode(activities, forKey: .activities)
            case .error(let message):
                try container.encode("error", forKey: .type)
                try container.encode(message, forKey: .message)
            }
        }
    }
}
