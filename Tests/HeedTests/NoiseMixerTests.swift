import Foundation
import HeedAudio
import HeedCore
import Testing

/// The pink noise `heed adapt` makes its noisy copies with.
@Suite("Pink noise")
struct PinkNoiseTests {
    /// Mean power of the DFT bin `bin` over 512-sample frames.
    static func power(_ samples: [Int16], bin: Int) -> Double {
        let length = 512
        let frames = stride(from: 0, to: samples.count - length, by: length).map { start -> Double in
            var (real, imaginary) = (0.0, 0.0)
            for index in 0..<length {
                let angle = 2 * Double.pi * Double(bin * index) / Double(length)
                real += Double(samples[start + index]) * cos(angle)
                imaginary -= Double(samples[start + index]) * sin(angle)
            }
            return real * real + imaginary * imaginary
        }
        return frames.reduce(0, +) / Double(frames.count)
    }

    /// Power falls 3 dB an octave: four octaves from 125 Hz to 2 kHz are about 12 dB.
    @Test func powerFallsThreeDecibelsAnOctave() {
        let noise = NoiseMixer.pinkNoise(seconds: 4, seed: 7)
        #expect(noise.samples.count == 64_000 && noise.sampleRate == 16_000)
        // Bins of 31.25 Hz: 4 is 125 Hz, 16 is 500 Hz, 64 is 2 kHz.
        let low = Self.power(noise.samples, bin: 4), middle = Self.power(noise.samples, bin: 16), high = Self.power(noise.samples, bin: 64)
        let fall = 10 * log10(low / high)
        #expect(fall > 9 && fall < 15, "125 Hz to 2 kHz: \(fall) dB")
        #expect(low > middle && middle > high)
        // Loud enough to mix, never clipped.
        let rms = (noise.samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(noise.samples.count)).squareRoot()
        #expect(rms > 300 && noise.samples.allSatisfy { $0 > Int16.min && $0 < Int16.max }, "RMS \(rms)")
    }

    /// The same seed makes the same noise; another seed other noise.
    @Test func theSeedDecides() {
        #expect(NoiseMixer.pinkNoise(seconds: 0.5, seed: 1) == NoiseMixer.pinkNoise(seconds: 0.5, seed: 1))
        #expect(NoiseMixer.pinkNoise(seconds: 0.5, seed: 1) != NoiseMixer.pinkNoise(seconds: 0.5, seed: 2))
    }
}
