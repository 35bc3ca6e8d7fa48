import HeedCore
import Foundation

/// Audio for tests that need the endpointer to hear speech and quiet, without a recording.
public enum TestAudio {
    /// Low, steady background noise (about −60 dBFS at the default amplitude), the same for a seed.
    public static func roomNoise(seconds: Double, amplitude: Double = 40, seed: UInt64 = 7) -> [Int16] {
        var random = SeededGenerator(seed: seed)
        return (0..<Int(seconds * Double(AudioBuffer.recognitionSampleRate))).map { _ in
            Int16(Double.random(in: -1...1, using: &random) * amplitude)
        }
    }

    /// Loud noise shaped into syllables (about −20 dBFS, four a second): what an energy
    /// endpointer takes for someone speaking. Not speech: only scripted recognizers hear it.
    public static func speechLike(seconds: Double, seed: UInt64 = 3) -> [Int16] {
        var random = SeededGenerator(seed: seed)
        let rate = Double(AudioBuffer.recognitionSampleRate)
        return (0..<Int(seconds * rate)).map { index in
            let phase: Double = 2 * Double.pi * 4 * Double(index) / rate
            let envelope: Double = 0.55 + 0.45 * sin(phase)
            let noise: Double = Double.random(in: -1...1, using: &random)
            return Int16(noise * 3_000 * envelope)
        }
    }

    /// An utterance between stretches of quiet, as a microphone would give it.
    public static func utterance(seconds: Double = 1.2, before: Double = 0.8, after: Double = 1.2, seed: UInt64 = 3) -> [Int16] {
        roomNoise(seconds: before) + speechLike(seconds: seconds, seed: seed) + roomNoise(seconds: after, seed: 11)
    }
}
