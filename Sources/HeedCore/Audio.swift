import Foundation

/// Mono 16-bit audio at a known sample rate: what every stage after the audio source sees.
public struct AudioBuffer: Sendable, Hashable {
    /// The rate PocketSphinx's en-us model expects, in samples a second.
    public static let recognitionSampleRate = 16_000

    /// Signed 16-bit samples, one channel.
    public var samples: [Int16]
    /// Samples a second.
    public var sampleRate: Int

    /// Creates a buffer.
    ///
    /// - Parameters:
    ///   - samples: mono samples.
    ///   - sampleRate: samples a second; defaults to ``recognitionSampleRate``.
    public init(samples: [Int16], sampleRate: Int = AudioBuffer.recognitionSampleRate) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// The length in seconds.
    public var duration: Double { Double(samples.count) / Double(sampleRate) }

    /// The energy (mean square) of each frame of `frameLength` samples; a shorter last frame
    /// counts when `partialLast`.
    public static func frameEnergies(_ samples: [Int16], frameLength: Int, partialLast: Bool = true) -> [Double] {
        let end = partialLast ? samples.count : samples.count - samples.count % frameLength
        return stride(from: 0, to: end, by: frameLength).map { start in
            let frame = samples[start..<min(samples.count, start + frameLength)]
            return frame.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame.count)
        }
    }
}

/// How loud speech is over the background in a stretch of audio.
public enum SignalToNoise {
    /// The ratio in dB of the loud frames' energy (90th percentile of 20 ms frames) to the quiet
    /// frames' (10th percentile): a recording or an utterance with some pause in it. `nil` when
    /// the audio is shorter than ten frames or silent.
    public static func estimate(_ samples: [Int16], sampleRate: Int = 16_000) -> Double? {
        let frame = sampleRate / 50
        guard samples.count >= 10 * frame else { return nil }
        var energies = AudioBuffer.frameEnergies(samples, frameLength: frame, partialLast: false)
        energies.sort()
        let quiet = energies[energies.count / 10]
        let loud = energies[energies.count * 9 / 10]
        guard loud > 0 else { return nil }
        return 10 * log10(loud / max(quiet, 1))
    }
}
