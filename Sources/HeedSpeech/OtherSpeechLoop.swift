import HeedCore

/// A loop of phones beside a grammar's sentences, so that talk the grammar does not hold has a
/// path of its own instead of being forced onto the nearest command.
///
/// The recognizer adds one state to the grammar's word graph: from the start, any of ``phones``
/// (each a pseudo-word said as that phone, ``word(_:)``) leads into it, and from it any of them
/// again, and it may end the utterance. When the search's best path goes through it, the
/// utterance was other speech: the result is empty and rejected, with no alignment or phone-loop
/// pass. A coarse set of phones is enough to win against commands picked out of other talk and
/// costs little search: all 39 phones, at costs that took no heard-right command either, rejected
/// no more and decoded 18–24% slower. docs/MEASUREMENTS.md, "A loop for other speech", has the sweep.
public struct OtherSpeechLoop: Sendable, Hashable {
    /// The phones of the loop (ARPAbet, as ``ModelPhones/speech`` spells them).
    public var phones: [String]
    /// The probability of going into the loop from the start of the utterance.
    public var entryProbability: Double
    /// The probability of each further phone in the loop: a cost per phone, so that a long
    /// stretch of speech must fit the loop clearly better than a sentence to be taken as other talk.
    public var phoneProbability: Double

    /// Creates a loop.
    public init(phones: [String], entryProbability: Double, phoneProbability: Double) {
        self.phones = phones
        self.entryProbability = entryProbability
        self.phoneProbability = phoneProbability
    }

    /// Twelve phones, one or two of each kind of sound (vowels, stops, fricatives, nasals,
    /// liquids), free to enter and 0.03 per phone after the first. Chosen on the real-speech
    /// rejection sets as the setting that rejected the most other speech at the lenient point
    /// without losing a heard-right command.
    public static let standard = OtherSpeechLoop(
        phones: ["AH", "IY", "AA", "UW", "ER", "T", "K", "S", "F", "N", "L", "R"],
        entryProbability: 1,
        phoneProbability: 0.03
    )

    /// The pseudo-word of one phone of the loop: `{heed_other_speech}ah`. Braces keep it apart
    /// from every spoken word; it is written like an open slot's phone (``OpenSlot/phoneWord(_:type:)``).
    public static func word(_ phone: String) -> String { OpenSlot.phoneWord(phone, type: wordType) }

    /// Whether a decoder word belongs to the loop.
    public static func isWord(_ word: String) -> Bool { OpenSlot.parse(word)?.type == wordType }

    private static let wordType = "heed_other_speech"

    /// `graph` with the loop beside its sentences: one more state, final, entered from the start.
    func beside(_ graph: WordGraph) -> WordGraph {
        var extended = graph
        let loop = graph.stateCount
        extended.stateCount += 1
        extended.finals.insert(loop)
        for phone in phones {
            let word = Self.word(phone)
            extended.arcs.append(WordGraph.Arc(from: graph.start, to: loop, word: word))
            extended.arcs.append(WordGraph.Arc(from: loop, to: loop, word: word))
        }
        return extended
    }

    /// The probability of an arc of ``beside(_:)``'s graph that belongs to the loop, `nil` for
    /// the grammar's own arcs.
    func probability(of arc: WordGraph.Arc, start: Int) -> Double? {
        guard Self.isWord(arc.word) else { return nil }
        return arc.from == start ? entryProbability : phoneProbability
    }
}
