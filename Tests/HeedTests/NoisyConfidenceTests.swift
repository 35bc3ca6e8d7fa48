import Foundation
import HeedAudio
import HeedCore
@testable import HeedSpeech
import Logging
import Testing

/// The two features measured for confidence in noise (reported by `heed eval`, not used by the
/// shipped model: docs/MEASUREMENTS.md, "Confidence in noise").
@Suite("Confidence features for noise")
struct NoisyConfidenceTests {
    @Test func theNoiseLevelFollowsTheEstimatedSNR() {
        #expect(ConfidenceFeatures.noiseLevel(snr: nil) == 0)
        #expect(ConfidenceFeatures.noiseLevel(snr: 42) == 0)
        #expect(ConfidenceFeatures.noiseLevel(snr: 30) == 0)
        #expect(abs(ConfidenceFeatures.noiseLevel(snr: 15) - 1.5) < 1e-12)
        #expect(ConfidenceFeatures.noiseLevel(snr: -5) == 3)
    }

    /// Four word frames with margins 0, -10, -20, -30 (the phone loop scores 0): the louder half
    /// are the frames with energy 9 and 7, whatever their order.
    @Test func theLoudMarginIsTakenOverTheLouderHalfOfTheFrames() {
        let grammar = [0, -10, -20, -30].enumerated().map { RawSegment(word: "w", startFrame: $0.offset, endFrame: $0.offset, acousticScore: Int32($0.element)) }
        let margin = AcousticMargin(grammar: grammar, phoneLoop: [])
        #expect(margin.perFrame(overLoudest: 0.5, of: [0..<4], energies: [1, 9, 2, 7]) == -20)
        #expect(margin.perFrame(overLoudest: 0.5, of: [0..<4], energies: [9, 1, 7, 2]) == -10)
        // A frame past the energies is silent; all of them is the plain mean.
        #expect(margin.perFrame(overLoudest: 0.5, of: [0..<4], energies: [0, 0, 5]) != -25)
        #expect(margin.perFrame(overLoudest: 0.5, of: [0..<4], energies: [0, 0, 5, 3]) == -25)
        #expect(margin.perFrame(overLoudest: 1, of: [0..<4], energies: []) == margin.perFrame(over: [0..<4]))
    }

    /// The recognizer estimates each utterance's SNR: the same real recording reads as noisier
    /// under white noise at 6 dB than as recorded (0.60 measured as recorded: about 24 dB).
    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"))
    func aRealRecordingUnderNoiseReadsAsNoisy() throws {
        let recognizer = try PocketSphinxRecognizer(
            grammar: Grammar(name: "commands", jsgf: try String(contentsOfFile: Fixtures.grammar("commands.gram"), encoding: .utf8)),
            logger: Logger(label: "test"))
        let clean = try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path)
        var generator = SeededGenerator(seed: 13)
        let hiss = AudioBuffer(samples: (0..<32_000).map { _ in Int16.random(in: -3_000...3_000, using: &generator) })
        let noisy = try NoiseMixer(noise: hiss).mix(clean, snr: 6, seed: 1)
        let quiet = try #require(try recognizer.recognize(clean).confidenceFeatures)
        let loud = try #require(try recognizer.recognize(noisy).confidenceFeatures)
        let (before, after) = (try #require(quiet["noiseLevel"]), try #require(loud["noiseLevel"]))
        #expect(before < 1 && after >= 1 && after - before >= 0.5, "as recorded \(before), in noise \(after)")
        #expect(quiet["loudMargin"] != nil && loud["loudMargin"] != nil)
    }
}
