import Foundation
import HeedCore
import HeedIntents

/// The intent label of a corpus row: `{"intent": NAME, "slots": {NAME: VALUE, …}}` in the
/// manifest's `intent_slots_json` column.
///
/// A result is right when its intent is the label's and every labelled slot has exactly the
/// labelled value after trimming spaces; extra slots are not penalised (the Picovoice
/// speech-to-intent benchmark's rule).
struct IntentLabel: CustomStringConvertible {
    var intent: String
    var slots: [String: String]

    /// Reads a label; `nil` when the JSON has no `intent` string.
    init?(json: String?) {
        guard let data = json?.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let intent = object["intent"] as? String
        else { return nil }
        self.intent = intent
        let slots = object["slots"] as? [String: Any] ?? [:]
        self.slots = slots.compactMapValues { value in
            (value as? String).map { $0.trimmed } ?? (value as? NSNumber)?.stringValue
        }
    }

    func matches(_ match: IntentMatch?, rejected: Bool) -> Bool {
        guard let match, !rejected, match.intent == intent else { return false }
        return wrongSlots(match, rejected: false).isEmpty
    }

    /// The labelled slots that are missing or wrong in `match`.
    func wrongSlots(_ match: IntentMatch?, rejected: Bool) -> [String] {
        guard let match, !rejected, match.intent == intent else { return slots.keys.sorted() }
        let heard = Evaluation.labelStrings(match.parameters)
        return slots.filter { heard[$0.key] != $0.value }.keys.sorted()
    }

    var description: String {
        ([intent] + slots.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
    }
}
