import Foundation

/// The gap between the grammar's best path and the free phone loop, frame by frame.
/// Without phone-loop segments the reference is 0: PocketSphinx already scores each
/// frame relative to its best Gaussian, so the path's own score is a gap too.
struct AcousticMargin {
    private var grammarScores: [Int: Double] = [:]
    private var phoneScores: [Int: Double] = [:]

    init(grammar: [RawSegment], phoneLoop: [RawSegment]) {
        grammarScores = Self.spread(grammar)
        phoneScores = Self.spread(phoneLoop)
    }

    /// Spreads each segment's acoustic score evenly over its frames.
    private static func spread(_ segments: [RawSegment]) -> [Int: Double] {
        var scores: [Int: Double] = [:]
        for segment in segments where segment.endFrame >= segment.startFrame {
            let frames = segment.endFrame - segment.startFrame + 1
            let perFrame = Double(segment.acousticScore) / Double(frames)
            for frame in segment.startFrame...segment.endFrame { scores[frame, default: 0] += perFrame }
        }
        return scores
    }

    /// Mean (grammar − phone loop) acoustic score per frame over `spans`, in the decoder's log units.
    func perFrame(over spans: [Range<Int>]) -> Double {
        let margins = frameMargins(over: spans)
        return margins.isEmpty ? 0 : margins.reduce(0, +) / Double(margins.count)
    }

    /// Mean (grammar − phone loop) per frame over every frame the grammar path covers,
    /// silences and fillers included.
    var overAllFrames: Double {
        let frames = grammarScores.keys
        guard let first = frames.min(), let last = frames.max() else { return 0 }
        return perFrame(over: [first..<(last + 1)])
    }

    /// Mean margin per frame over the loudest `share` of the frames of `spans`, loudness being
    /// `energies[frame]` (a frame past the end of `energies` counts as silent). In noise the quiet
    /// frames of a right answer (consonants, word edges) are buried and their margins poor, while
    /// its loud frames are still the words.
    func perFrame(overLoudest share: Double, of spans: [Range<Int>], energies: [Double]) -> Double {
        let frames = spans.flatMap { $0 }.filter { grammarScores[$0] != nil }
        let loudness = { (frame: Int) in frame < energies.count ? energies[frame] : 0 }
        let loudest = frames.sorted { loudness($0) > loudness($1) }.prefix(max(1, Int((Double(frames.count) * share).rounded())))
        let margins = loudest.compactMap { frame in grammarScores[frame].map { $0 - (phoneScores[frame] ?? 0) } }
        return margins.isEmpty ? 0 : margins.reduce(0, +) / Double(margins.count)
    }

    /// The fraction of the frames of `spans` whose margin is below `limit`.
    func fraction(below limit: Double, over spans: [Range<Int>]) -> Double {
        let margins = frameMargins(over: spans)
        return margins.isEmpty ? 0 : Double(margins.filter { $0 < limit }.count) / Double(margins.count)
    }

    private func frameMargins(over spans: [Range<Int>]) -> [Double] {
        spans.flatMap { span in span.compactMap { frame in grammarScores[frame].map { $0 - (phoneScores[frame] ?? 0) } } }
    }
}

/// The measurements a confidence is computed from, for one recognized utterance.
///
/// All come from the forced alignment of the recognized words and the free phone loop over
/// the same audio (``AcousticMargin``), and from the words' pronunciations: no extra decoding.
struct ConfidenceFeatures {
    /// Mean margin per frame over the words' frames.
    var meanMargin: Double
    /// The lowest mean margin of one word.
    var minimumWordMargin: Double
    /// Mean margin over every frame of the path, silences included: low when the grammar
    /// explains part of the audio as silence or noise and that part was speech.
    var allFramesMargin: Double
    /// The fraction of word frames whose margin is below ``ConfidenceFeatures/lowMargin``.
    var lowMarginFraction: Double
    /// Natural log of word frames per phone of the words' pronunciations (normal speech:
    /// 6–12 frames a phone): words stretched over a long stretch of other speech, or
    /// squeezed into a click.
    var logFramesPerPhone: Double
    /// Natural log of the phones the free loop found in the words' frames over the phones of
    /// the words.
    var logPhoneRatio: Double
    /// Natural log of the number of words.
    var logWordCount: Double
    /// Natural log of 1 + the phones the free loop found outside the utterance's words
    /// (silences and noises excluded): speech that the recognized words leave unexplained,
    /// as when a command-like phrase is picked out of a long stretch of talk.
    var logOutsidePhones: Double
    /// Word frames over all frames.
    var speechFraction: Double
    /// The phones the free loop found outside the utterance's words for each phone of the words'
    /// pronunciations: large when a word is picked out of a long stretch of other speech (a coffee
    /// order heard as "two" by a one-digit grammar), at most 4.5 for the commands of
    /// every real set, in noise too (docs/MEASUREMENTS.md, "Words that explain too little").
    var outsidePhoneRatio: Double
    /// Mean margin per frame over the louder half of the words' frames.
    var loudMargin: Double
    /// How far the utterance is from a quiet room: ``noiseLevel(snr:)`` of its estimated
    /// signal-to-noise ratio. Noise lowers the margins of right answers as much as of wrong ones.
    var noiseLevel: Double

    /// (30 dB − the estimated SNR) / 10, between 0 and 3: 0 in a quiet room (or when the utterance
    /// is too short to estimate), 1.5 with kitchen noise at 6 dB, whose estimate reads about
    /// 15 dB (``SignalToNoise``; docs/MEASUREMENTS.md, "Noise suppression").
    static func noiseLevel(snr: Double?) -> Double {
        guard let snr else { return 0 }
        return min(3, max(0, (30 - snr) / 10))
    }

    /// A frame margin below this is poor (decoder log units per frame).
    static let lowMargin = -20.0

    /// The features by name, as ``ConfidenceModel`` weighs them and `heed eval` reports them.
    var named: [String: Double] {
        [
            "meanMargin": meanMargin,
            "minimumWordMargin": minimumWordMargin,
            "allFramesMargin": allFramesMargin,
            "lowMarginFraction": lowMarginFraction,
            "logFramesPerPhone": logFramesPerPhone,
            "logFramesPerPhoneSquared": logFramesPerPhone * logFramesPerPhone,
            "logPhoneRatio": logPhoneRatio,
            "logWordCount": logWordCount,
            "logOutsidePhones": logOutsidePhones,
            "speechFraction": speechFraction,
            "outsidePhoneRatio": outsidePhoneRatio,
            "loudMargin": loudMargin,
            "noiseLevel": noiseLevel,
            "noiseLevelMargin": noiseLevel * meanMargin,
        ]
    }
}

/// Maps confidence features to a probability that the result is right.
///
/// `probability = 1 / (1 + exp(-(Σ weight × feature + intercept)))`, fitted by logistic
/// regression on labelled recordings (`scripts/calibrate-confidence.py`; README,
/// "Confidence and rejection"). A model of the margin alone has one weight, `meanMargin`.
public struct ConfidenceModel: Sendable, Hashable {
    /// Weight of each feature, by name (see `ConfidenceFeatures.named`); features not named weigh 0.
    public var weights: [String: Double]
    /// Offset.
    public var intercept: Double
    /// The rejection threshold chosen for this model from its curve, for always-on listening,
    /// where every stretch of talk in the room is a candidate and false accepts per hour count.
    public var operatingPoint: Double
    /// The threshold where something else already bounds false accepts: a command window after
    /// the wake phrase or a press, the answer to Heed's own question, one recording someone
    /// chose to give (`heed run --audio`, `heed recognize`). Chosen from the accepted share of
    /// heard-right commands (docs/RECOGNITION.md, "Operating points").
    public var lenientPoint: Double = 0.2
    /// The always-on threshold for a result heard twice in noise, with the noise suppressor and
    /// without it (``RecognitionResult/heardTwice(suppressed:captured:meaning:)``): hearings that disagree
    /// keep the lower confidence, which takes most other talk below this point. Chosen like
    /// ``operatingPoint``, on the train split of the rejection sets mixed with kitchen noise
    /// (docs/RECOGNITION.md, "Operating points"). `nil`: the same threshold as heard once.
    public var inNoisePoint: Double? = nil
    /// Above this many phones outside the words for each phone of them (``ConfidenceFeatures``'s
    /// `outsidePhoneRatio`), the words explain too little of what was said to be the command,
    /// whatever the other features say: the probability is 0. `nil`: no limit.
    public var outsidePhoneLimit: Double? = nil

    /// Creates a model over named features.
    public init(
        weights: [String: Double], intercept: Double, operatingPoint: Double, inNoisePoint: Double? = nil, outsidePhoneLimit: Double? = nil
    ) {
        self.weights = weights
        self.intercept = intercept
        self.operatingPoint = operatingPoint
        self.inNoisePoint = inNoisePoint
        self.outsidePhoneLimit = outsidePhoneLimit
    }

    /// Creates a model of the mean acoustic margin alone.
    public init(slope: Double, intercept: Double, operatingPoint: Double) {
        self.init(weights: ["meanMargin": slope], intercept: intercept, operatingPoint: operatingPoint)
    }

    /// Weight of the mean margin.
    public var slope: Double { weights["meanMargin"] ?? 0 }

    /// Six features of the alignment and the phone loop, fitted on the train split of the
    /// rejection sets (629 results of real speech, `scripts/rejection-sets.py` and
    /// `scripts/calibrate-confidence.py`; README, "Confidence and rejection").
    public static let features = ConfidenceModel(
        weights: [
            "meanMargin": 0.2538,
            "allFramesMargin": 0.1523,
            "lowMarginFraction": -5.129,
            "logPhoneRatio": 0.9685,
            "logOutsidePhones": -0.4281,
            "logWordCount": 1.289,
        ],
        intercept: 1.169,
        operatingPoint: 0.87,
        inNoisePoint: 0.7,
        outsidePhoneLimit: 6
    )

    /// Grammars of single words ("yes", "seven", "stop") scored on one normaliser (every senone
    /// computed: PocketSphinxRecognizer's `oneWordConfidence`), fitted on the train split of their
    /// rejection sets (`scripts/calibrate-confidence.py … --one-word`; docs/RECOGNITION.md, "One word").
    public static let oneWord = ConfidenceModel(
        weights: ["allFramesMargin": 0.1006, "meanMargin": 0.0808, "logOutsidePhones": -0.406],
        intercept: 3.38,
        operatingPoint: 0.87,
        outsidePhoneLimit: 6
    )

    /// The margin alone, fitted with a phone-loop reference on 943 results of the shared
    /// corpora and Debian's test recordings (the first version).
    public static let phoneLoop = ConfidenceModel(slope: 0.1731, intercept: -0.092, operatingPoint: 0.3)

    /// Fitted the same way without the phone loop (the path's own per-frame score). Its
    /// operating point is the first version's; it was not recalibrated on the rejection sets.
    public static let pathOnly = ConfidenceModel(slope: 0.1569, intercept: 2.683, operatingPoint: 0.3)

    /// The probability for a margin, with every other feature at 0.
    public func probability(_ margin: Double) -> Double {
        probability(["meanMargin": margin])
    }

    /// The probability for named features.
    public func probability(_ features: [String: Double]) -> Double {
        if let outsidePhoneLimit, let ratio = features["outsidePhoneRatio"], ratio > outsidePhoneLimit { return 0 }
        // In the order of the names: a dictionary's own order changes from run to run, and with it
        // the last bit of the sum.
        let sum = weights.sorted { $0.key < $1.key }.reduce(intercept) { $0 + $1.value * (features[$1.key] ?? 0) }
        return 1 / (1 + exp(-sum))
    }
}
