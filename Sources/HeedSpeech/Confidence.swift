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
        var total = 0.0
        var count = 0
        for span in spans {
            for frame in span {
                guard let score = grammarScores[frame] else { continue }
                total += score - (phoneScores[frame] ?? 0)
                count += 1
            }
        }
        return count == 0 ? 0 : total / Double(count)
    }
}

/// Maps the per-frame acoustic margin to a probability that the result is right.
///
/// `probability = 1 / (1 + exp(-(slope × margin + intercept)))`, fitted by logistic
/// regression on labelled recordings (see the README, "Confidence").
public struct ConfidenceModel: Sendable, Hashable {
    /// Weight of the margin.
    public var slope: Double
    /// Offset.
    public var intercept: Double

    /// Creates a model.
    public init(slope: Double, intercept: Double) {
        self.slope = slope
        self.intercept = intercept
    }

    /// Fitted with a phone-loop reference on 943 results of the shared corpora and
    /// Debian's test recordings (`scripts/calibrate-confidence.py`; README, "Confidence").
    public static let phoneLoop = ConfidenceModel(slope: 0.1731, intercept: -0.092)

    /// Fitted the same way without the phone loop (the path's own per-frame score).
    public static let pathOnly = ConfidenceModel(slope: 0.1569, intercept: 2.683)

    /// The probability for a margin.
    public func probability(_ margin: Double) -> Double {
        1 / (1 + exp(-(slope * margin + intercept)))
    }
}
