public import HeedCore
import Foundation

/// Mixes background noise into speech at a signal-to-noise ratio, the way the Picovoice
/// speech-to-intent benchmark does, so that noise-robustness numbers are comparable.
///
/// The noise is scaled so that the ratio of the speech's loudest 2048-sample frame energy
/// to the loudest frame energy of the noise segment equals the SNR; the segment starts at
/// a random offset (seeded, so runs repeat); the mix is peak-normalised.
public struct NoiseMixer: Sendable {
    private static let frameLength = 2048

    private let noise: [Double]

    /// Creates a mixer.
    ///
    /// - Parameter noise: the noise recording, at the speech's sample rate.
    /// - Throws: ``AudioError`` `.empty` when the noise is shorter than one frame.
    public init(noise: AudioBuffer) throws(AudioError) {
        guard noise.samples.count >= Self.frameLength else {
            throw AudioError(.empty, source: "noise", reason: "the noise is shorter than \(Self.frameLength) samples")
        }
        self.noise = noise.samples.map(Double.init)
    }

    /// Mixes noise into `speech` at `snr` decibels.
    ///
    /// - Parameters:
    ///   - speech: the clean recording.
    ///   - snr: the signal-to-noise ratio in dB.
    ///   - seed: chooses the noise offset; the same seed gives the same mix.
    /// - Returns: the noisy recording, peak-normalised to the 16-bit range.
    public func mix(_ speech: AudioBuffer, snr: Double, seed: UInt64) -> AudioBuffer {
        let clean = speech.samples.map(Double.init)
        guard !clean.isEmpty else { return speech }
        var generator = SeededGenerator(seed: seed)
        let start = Int(generator.next() % UInt64(noise.count))
        let segment = (0..<clean.count).map { noise[(start + $0) % noise.count] }
        let speechEnergy = Self.maximumFrameEnergy(clean)
        let noiseEnergy = Self.maximumFrameEnergy(segment)
        let scale = noiseEnergy > 0 ? (speechEnergy / (noiseEnergy * pow(10, snr / 10))).squareRoot() : 0
        let mixed = zip(clean, segment).map { $0 + scale * $1 }
        let peak = mixed.map(abs).max() ?? 0
        let gain = peak > 0 ? 32767 / peak : 1
        return AudioBuffer(samples: mixed.map { Int16(($0 * gain).rounded()) }, sampleRate: speech.sampleRate)
    }

    /// Pink noise (power falling 3 dB an octave, like most room noise): seeded white noise
    /// through Paul Kellet's three-pole filter.
    ///
    /// - Parameters:
    ///   - seconds: how long.
    ///   - seed: the same seed gives the same noise.
    public static func pinkNoise(seconds: Double, sampleRate: Int = AudioBuffer.recognitionSampleRate, seed: UInt64) -> AudioBuffer {
        var generator = SeededGenerator(seed: seed)
        var (b0, b1, b2) = (0.0, 0.0, 0.0)
        let samples = (0..<Int(seconds * Double(sampleRate))).map { _ -> Int16 in
            let white = Double(generator.next() >> 11) / Double(1 << 52) - 1
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            // The filter's output has a standard deviation of about 2: a thirtieth of full scale per
            // unit keeps it far from clipping (and clamped should it ever get there).
            return Int16(clamping: Int(((b0 + b1 + b2 + white * 0.1848) * 32767 / 30).rounded()))
        }
        return AudioBuffer(samples: samples, sampleRate: sampleRate)
    }

    private static func maximumFrameEnergy(_ samples: [Double]) -> Double {
        stride(from: 0, to: samples.count, by: frameLength).map { start in
            samples[start..<min(samples.count, start + frameLength)].reduce(0) { $0 + $1 * $1 }
        }.max() ?? 0
    }
}
