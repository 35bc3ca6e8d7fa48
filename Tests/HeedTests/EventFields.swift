import HeedIntents
import HeedPluginProtocol
import HeedRuntime

// The fields the tests look at, read from the typed events as their JSON lines carry them.

extension ListenerEvent {
    var event: String { name }

    var text: String? {
        switch self {
        case .listening(_, let source): source
        case .partial(_, let text): text
        case .final(_, let result): result.text
        case .ignored(_, _, let text, _): text
        case .wake(_, let phrase, _, _): phrase
        case .speech(_, let speech): speech.text
        case .vocabulary(_, let change), .context(_, let change): change.text
        case .microphoneLent(_, let appID): appID
        case .askedBack(_, let text, _): text
        default: nil
        }
    }

    /// How an asked-back command was answered.
    var answer: String? { if case .askedBack(_, _, let answer) = self { answer } else { nil } }

    var intent: IntentMatch? { if case .intent(_, let match) = self { match } else { nil } }

    var reason: String? {
        switch self {
        case .ignored(_, let reason, _, _): reason
        case .speech(_, let speech): speech.reason
        case .vocabulary(_, let change), .context(_, let change): change.reason
        default: nil
        }
    }

    var confidence: Double? {
        switch self {
        case .final(_, let result): result.confidence
        case .ignored(_, _, _, let confidence): confidence
        case .wake(_, _, let confidence, _): confidence
        default: nil
        }
    }

    var rejected: Bool? { if case .final(_, let result) = self { result.rejected } else { nil } }

    var repeated: Bool? { if case .final(_, let result) = self { result.repeated } else { nil } }
    var afterPause: Bool? { if case .final(_, let result) = self { result.afterPause } else { nil } }

    /// The stage timings of a grammar rebuild.
    var milliseconds: [String: Double]? {
        switch self {
        case .vocabulary(_, let change), .context(_, let change): change.milliseconds
        default: nil
        }
    }
}

extension ConversationEvent {
    var event: String { name }

    var outcome: String? {
        switch self {
        case .route(.noActivity): "none"
        case .route(.disambiguation): "disambiguation"
        case .route(.chosen): "success"
        case .resolve(let resolution): resolution.outcome
        case .confirm(let step), .handle(let step): step.outcome
        case .end(let result): result.ending.description
        default: nil
        }
    }

    var status: String? { if case .authorization(_, let status, _, _) = self { status } else { nil } }

    var text: String? {
        switch self {
        case .route(.chosen(_, let title)): title
        case .authorization(_, _, let reason, _): reason
        case .prompt(let text), .response(let text), .notification(let text, _): text
        case .answer(let text): text
        case .resolve(let resolution): resolution.reason
        case .confirm(let step), .handle(let step): step.text
        case .end(let result): result.message
        default: nil
        }
    }

    var values: [PluginValue]? {
        switch self {
        case .route(.disambiguation(let names)): names.map(PluginValue.string)
        case .resolve(let resolution): resolution.values
        default: nil
        }
    }

    var milliseconds: Double? {
        switch self {
        case .authorization(_, _, _, let milliseconds): milliseconds
        case .resolve(let resolution): resolution.milliseconds
        case .confirm(let step), .handle(let step): step.milliseconds
        default: nil
        }
    }
}
