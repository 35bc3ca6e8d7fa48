import Foundation
import HeedAudio
import HeedCore
import Testing

/// speexdsp's preprocessor through Heed's wrapper, on real samples.
@Suite("Noise suppression")
struct NoiseSuppressorTests {
    static func energy(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
    }

    /// Two seconds of steady noise, then a second of a tone in the same noise: the noise alone
    /// comes out much quieter, the tone keeps its level.
    @Test func steadyNoiseIsLoweredAndATonePassesThrough() {
        var generator = SeededGenerator(seed: 5)
        let noise = (0..<48_000).map { _ in Int16.random(in: -800...800, using: &generator) }
        var input = noise
        for index in 32_000..<48_000 { input[index] = input[index] &+ Int16(8_000 * sin(2 * Double.pi * 440 * Double(index) / 16_000)) }
        let output = NoiseSuppressor.denoise(AudioBuffer(samples: input), settings: .init(maximumAttenuation: 15)).samples
        #expect(output.count == input.count)
        // After the estimate settles (the first second), the noise is lowered by over 6 dB …
        let noiseBefore = Self.energy(input[20_000..<31_000])
        let noiseAfter = Self.energy(output[20_000..<31_000])
        #expect(10 * log10(noiseBefore / noiseAfter) > 6, "noise lowered by \(10 * log10(noiseBefore / noiseAfter)) dB")
        // … and the tone keeps its level within 3 dB.
        let toneBefore = Self.energy(input[36_000..<47_000])
        let toneAfter = Self.energy(output[36_000..<47_000])
        #expect(abs(10 * log10(toneBefore / toneAfter)) < 3, "tone changed by \(10 * log10(toneBefore / toneAfter)) dB")
    }

    /// Chunks of any size give what the whole gives: the suppressor is a stream.
    @Test func chunksGiveTheWhole() {
        var generator = SeededGenerator(seed: 9)
        let input = (0..<16_037).map { _ in Int16.random(in: -3_000...3_000, using: &generator) }
        let whole = NoiseSuppressor.denoise(AudioBuffer(samples: input)).samples
        let suppressor = NoiseSuppressor()
        let chunked = inRandomChunks(input, largest: 1_000, using: &generator) { suppressor.process($0) } + suppressor.flush()
        #expect(chunked == whole)
    }

    /// A stream followed by one suppressor gives any stretch of it denoised as the whole stream's
    /// suppressor denoised it (not as a fresh suppressor would); what it has not denoised yet, or
    /// no longer keeps, comes back as given.
    @Test func aStretchOfAStreamIsDenoisedAsTheWholeStreamWas() {
        var generator = SeededGenerator(seed: 11)
        let input = (0..<64_037).map { _ in Int16.random(in: -3_000...3_000, using: &generator) }
        let whole = NoiseSuppressor.denoise(AudioBuffer(samples: input)).samples
        let stream = SuppressedStream(settings: .init(), keeping: 2)
        _ = inRandomChunks(input, largest: 1_024, using: &generator) { chunk in
            stream.process(chunk)
            return chunk
        }
        let fed = input.count
        let stretch = Array(input[40_000..<56_000])
        let denoised = stream.denoised(stretch, from: 40_000)
        #expect(denoised == Array(whole[40_000..<56_000]))
        #expect(denoised != NoiseSuppressor.denoise(AudioBuffer(samples: stretch)).samples)
        // The last part frame is held back: those samples are the input's.
        let held = fed % NoiseSuppressor.frameLength
        let end = stream.denoised(Array(input[(fed - 400)...]), from: fed - 400)
        #expect(end.prefix(400 - held) == whole[(fed - 400)..<(fed - held)])
        #expect(end.suffix(held) == input.suffix(held))
        // Two to three seconds are kept: the start of the stream is gone.
        #expect(stream.denoised(Array(input[0..<1_000]), from: 0) == Array(input[0..<1_000]))
    }

    /// A real recording after three seconds of the benchmark's kitchen noise (6 dB): the utterance
    /// the endpointer finds, taken from the suppressor that followed the stream, has its noise
    /// before the words lowered already; a suppressor started on the utterance has not learned it
    /// yet there.
    @Test(.enabled(if: Fixtures.corpora != nil, "needs the shared corpora (HEED_CORPORA or ../shared/corpora)"))
    func anUtteranceFromTheStreamStartsWithTheNoiseLearned() throws {
        let corpora = try #require(Fixtures.corpora)
        let noise = try NoiseMixer(noise: try AudioFile.read(corpora + "/picovoice_barista/noise/kitchen.wav"))
        let silence = [Int16](repeating: 0, count: 3 * 16_000)
        let clean = silence + (try AudioFile.read("\(Fixtures.testData)/cards/001.wav").samples) + silence
        let noisy = noise.mix(AudioBuffer(samples: clean), snr: 6, seed: 1).samples
        var endpointer = Endpointer()
        let stream = SuppressedStream(settings: .init(maximumAttenuation: 8), keeping: 12)
        var utterances: [Endpointer.Utterance] = []
        for start in stride(from: 0, to: noisy.count, by: 1_024) {
            let chunk = Array(noisy[start..<min(noisy.count, start + 1_024)])
            stream.process(chunk)
            for case .speechEnded(let utterance) in endpointer.process(chunk) { utterances.append(utterance) }
        }
        let utterance = try #require(utterances.first { $0.speechStart > 2.5 }, "\(utterances.map(\.speechStart))")
        let first = Int((utterance.start * 16_000).rounded())
        let followed = stream.denoised(utterance.samples, from: first)
        let fresh = NoiseSuppressor.denoise(utterance.audio, settings: .init(maximumAttenuation: 8)).samples
        let before = Int((utterance.speechStart - utterance.start) * 16_000)
        let lowered = 10 * log10(Self.energy(fresh.prefix(before)) / Self.energy(followed.prefix(before)))
        #expect(lowered > 2, "the followed stream's noise before the words is \(lowered) dB under the fresh suppressor's")
    }

    /// Three seconds of a quiet room, then a fan 20 dB louder: a stream's suppressor told to learn
    /// the fan from its first 0.8 s lowers it in the half second after, where the one that only
    /// followed the stream still takes most of the fan for speech and lets it through.
    @Test func aRoomThatGrowsLouderIsRelearned() {
        let fan = NoiseMixer.pinkNoise(seconds: 6, seed: 4).samples
        let stream = fan.prefix(48_000).map { $0 / 10 } + fan.suffix(48_000)
        let (onset, learned) = (48_000, 48_000 + 12_800)
        let following = SuppressedStream(settings: .init(), keeping: 10)
        let relearning = SuppressedStream(settings: .init(), keeping: 10)
        following.process(Array(stream[..<learned]))
        relearning.process(Array(stream[..<learned]))
        relearning.relearn(stream[onset..<learned])
        following.process(Array(stream[learned...]))
        relearning.process(Array(stream[learned...]))
        let after = Array(stream[learned..<(learned + 8_000)])
        let input = Self.energy(after[...])
        let byFollowing = 10 * log10(input / Self.energy(following.denoised(after, from: learned)[...]))
        let byRelearned = 10 * log10(input / Self.energy(relearning.denoised(after, from: learned)[...]))
        #expect(byRelearned > byFollowing + 3, "lowered by \(byRelearned) dB relearned, \(byFollowing) dB followed")
    }

    /// A second of noise, then a second of a tone in it: the estimate is the tone-plus-noise over
    /// noise ratio (21.8 dB here).
    @Test func theSignalToNoiseRatioIsEstimated() throws {
        var generator = SeededGenerator(seed: 3)
        var samples = (0..<32_000).map { _ in Int16.random(in: -800...800, using: &generator) }
        for index in 16_000..<32_000 { samples[index] = samples[index] &+ Int16(8_000 * sin(2 * Double.pi * 440 * Double(index) / 16_000)) }
        let estimate = try #require(SignalToNoise.estimate(samples))
        #expect(abs(estimate - 21.8) < 1, "\(estimate) dB")
        #expect(SignalToNoise.estimate(Array(samples.prefix(100))) == nil)
        #expect(DenoiseMode.auto.applies(toSNR: 20) && !DenoiseMode.auto.applies(toSNR: 26) && !DenoiseMode.auto.applies(toSNR: nil))
    }
}
