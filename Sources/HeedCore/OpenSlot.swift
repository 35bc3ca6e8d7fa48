/// A vocabulary type with too many terms to spell out in the recognizer's grammar.
///
/// Ten thousand playlist titles drawn into a finite-state grammar made decoding slower than real
/// time (every title is a path the search must follow, once per place the slot is said). Such a
/// type is said in the grammar as a loop of phones instead — one pseudo-word per phone,
/// ``phoneWord(_:type:)`` — so the grammar pass hears the words around it and roughly what was said
/// in it. The recognizer then picks the terms whose pronunciation is closest to those phones and
/// decodes the utterance again with only those in the slot. docs/VOCABULARY.md has the measurements.
public struct OpenSlot: Sendable, Hashable {
    /// The vocabulary type, as registered (`playlistTitle`).
    public var type: String
    /// Every term's words (lower case, as the parser reads them), once each, most important first.
    public var terms: [[String]]

    /// Creates an open slot.
    public init(type: String, terms: [[String]]) {
        self.type = type
        self.terms = terms
    }

    /// A vocabulary type with at least this many terms is an open slot in the recognizer's grammar.
    public static let minimumTerms = 1_000

    /// The pseudo-word that stands for one phone said in a slot of `type`: `{playlistTitle}aa`.
    /// No spoken word has braces, so it cannot collide with a template's or a term's word.
    public static func phoneWord(_ phone: String, type: String) -> String { "{\(type)}\(phone.lowercased())" }

    /// The type and phone of a pseudo-word, or `nil` for an ordinary word.
    public static func parse(_ word: String) -> (type: String, phone: String)? {
        guard word.first == "{", let close = word.firstIndex(of: "}") else { return nil }
        let phone = word[word.index(after: close)...].uppercased()
        guard !phone.isEmpty else { return nil }
        return (String(word[word.index(after: word.startIndex)..<close]), phone)
    }
}

/// The phones of the en-us acoustic model.
public enum ModelPhones {
    /// The 39 ARPAbet phones, without silence.
    public static let speech = [
        "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY", "JH",
        "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH",
    ]
}
