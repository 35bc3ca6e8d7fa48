import Foundation
import HeedAudio
import HeedCore
import HeedTesting
import Testing

/// The endpointer on real recordings (Debian's pocketsphinx-testdata) joined by quiet or noise.
@Suite struct EndpointerTests {
    static let rate = Endpointer.sampleRate

    /// Low, steady background noise (about −60 dBFS), the same on every run.
    static func roomNoise(seconds: Double, amplitude: Double = 40, seed: UInt64 = 7) -> [Int16] {
        TestAudio.roomNoise(seconds: seconds, amplitude: amplitude, seed: seed)
    }

    /// Feeds the stream in 1024-sample chunks, as the listener reads a device, and collects the events.
    static func events(_ samples: [Int16], _ configuration: Endpointer.Configuration = .standard) -> [Endpointer.Event] {
        var endpointer = Endpointer(configuration: configuration)
        var events: [Endpointer.Event] = []
        var offset = 0
        while offset < samples.count {
            let end = min(samples.count, offset + 1024)
            events += endpointer.process(Array(samples[offset..<end]))
            offset = end
        }
        return events + endpointer.finish()
    }

    static func utterances(_ events: [Endpointer.Event]) -> [Endpointer.Utterance] {
        events.compactMap { if case .speechEnded(let utterance) = $0 { utterance } else { nil } }
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func findsEachCardAnnouncementInAStream() throws {
        var stream = Self.roomNoise(seconds: 1)
        var starts: [Double] = []
        var ends: [Double] = []
        for index in 1...5 {
            let card = try AudioFile.read("\(Fixtures.testData)/cards/00\(index).wav").samples
            starts.append(Double(stream.count) / Double(Self.rate))
            stream += card
            ends.append(Double(stream.count) / Double(Self.rate))
            stream += Self.roomNoise(seconds: 1.2, seed: UInt64(index))
        }
        let found = Self.utterances(Self.events(stream))
        #expect(found.count == 5)
        #expect(found.allSatisfy { $0.ending == .complete })
        // Each utterance lies within its recording (which has some quiet at both ends of its own).
        for (utterance, (start, end)) in zip(found, zip(starts, ends)) {
            #expect(utterance.speechStart >= start - 0.05 && utterance.speechStart < end)
            #expect(utterance.speechEnd <= end + 0.05 && utterance.speechEnd > start)
        }
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx && Fixtures.corpora != nil, "needs pocketsphinx-en-us and the shared corpora (HEED_CORPORA or ../shared/corpora)"))
    func findsSpeechInKitchenNoise() throws {
        let corpora = try #require(Fixtures.corpora)
        let noise = try NoiseMixer(noise: try AudioFile.read(corpora + "/picovoice_barista/noise/kitchen.wav"))
        var clean = Self.roomNoise(seconds: 2, amplitude: 0)
        for index in 1...3 {
            clean += try AudioFile.read("\(Fixtures.testData)/cards/00\(index).wav").samples
            clean += Self.roomNoise(seconds: 1.5, amplitude: 0)
        }
        let noisy = noise.mix(AudioBuffer(samples: clean, sampleRate: Self.rate), snr: 18, seed: 3).samples
        let found = Self.utterances(Self.events(noisy)).filter { $0.ending == .complete }
        #expect(found.count == 3)
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func theLikelyEndHasTheSamplesOfTheEnd() throws {
        let card = try AudioFile.read("\(Fixtures.testData)/cards/001.wav").samples
        let events = Self.events(Self.roomNoise(seconds: 0.5) + card + Self.roomNoise(seconds: 1))
        let likely = events.compactMap { if case .likelyEnd(let utterance) = $0 { utterance } else { nil } }
        let final = try #require(Self.utterances(events).last)
        let lastLikely = try #require(likely.last)
        #expect(lastLikely.samples == final.samples)
        // The end is announced after `endSilence`, the likely end after `tentativeSilence`.
        #expect(final.samples.count < card.count + Int(0.5 * Double(Self.rate)) + Int(0.3 * Double(Self.rate)))
    }

    @Test func aSteadyLoudSoundIsTooLongAndTheFloorLearnsIt() {
        let quiet = Self.roomNoise(seconds: 1)
        let loud = Self.roomNoise(seconds: 14, amplitude: 6000, seed: 9)
        let events = Self.events(quiet + loud)
        let found = Self.utterances(events)
        #expect(found.first?.ending == .tooLong)
        // After the cut the noise is the new floor: no second utterance starts within it.
        #expect(found.filter { $0.ending != .streamEnded }.count == 1)
    }

    /// A room that grows 30 dB louder starts an utterance; told that the recognizer heard only
    /// silence and noise in it, the endpointer ends it as noise and learns the new level: the
    /// same noise starts nothing more, and a card spoken over it does.
    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func aRoomThatGrowsLouderIsLearnedWhenTheRecognizerHeardNoWords() throws {
        let card = try AudioFile.read("\(Fixtures.testData)/cards/001.wav").samples
        let loud = Self.roomNoise(seconds: 5, amplitude: 1500, seed: 5)
        var endpointer = Endpointer()
        var events = endpointer.process(Self.roomNoise(seconds: 1) + loud.prefix(Self.rate))
        #expect(endpointer.inSpeech, "the louder room starts speech: \(events)")
        let quietFloor = try #require(endpointer.noiseFloor)
        let ending = endpointer.endAsNoise()
        guard case .speechEnded(let utterance)? = ending else {
            Issue.record("not an end: \(String(describing: ending))")
            return
        }
        #expect(utterance.ending == .noise)
        #expect(!endpointer.inSpeech)
        #expect(endpointer.endAsNoise() == nil)
        let loudFloor = try #require(endpointer.noiseFloor)
        #expect(loudFloor > quietFloor + 20, "\(quietFloor) → \(loudFloor) dBFS")
        // The noise goes on: no utterance starts in it.
        events = endpointer.process(Array(loud[Self.rate..<(3 * Self.rate)]))
        #expect(!events.contains { if case .speechStarted = $0 { true } else { false } }, "\(events)")
        // A card over the noise starts the next.
        let over = zip(card, loud[(3 * Self.rate)...].prefix(card.count)).map { $0 &+ $1 }
        events = endpointer.process(over)
        #expect(events.contains { if case .speechStarted = $0 { true } else { false } }, "\(events)")
    }

    /// A card, then a loud noise that holds the endpointer in speech: told that the recognizer
    /// heard only noise for the last 0.6 s, it ends the utterance there, and the same noise
    /// starts no new one; the next card, spoken over the noise, does.
    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func theRecognizersEvidenceEndsAnUtteranceTheNoiseHoldsOpen() throws {
        let card = try AudioFile.read("\(Fixtures.testData)/cards/001.wav").samples
        let noise = Self.roomNoise(seconds: 6, amplitude: 1500, seed: 5)
        var endpointer = Endpointer()
        var events = endpointer.process(Self.roomNoise(seconds: 1) + card + noise.prefix(Self.rate))
        #expect(endpointer.inSpeech, "the noise holds speech open: \(events)")
        #expect(Self.utterances(events).isEmpty)
        let fed = endpointer.currentSamples.count
        let ending = endpointer.endSpeech(heardQuietFor: 0.6)
        guard case .speechEnded(let utterance)? = ending else {
            Issue.record("not an end: \(String(describing: ending))")
            return
        }
        #expect(utterance.ending == .sentenceEnded)
        // The utterance keeps `tentativeSilence` (0.2 s) of what came after the words.
        #expect(utterance.samples.count == fed - Int(0.4 * Double(Self.rate)))
        #expect(abs(utterance.speechEnd - (endpointer.position - 0.6)) < 0.02)
        #expect(!endpointer.inSpeech)
        #expect(endpointer.endSpeech(heardQuietFor: 0.6) == nil)
        // The noise goes on: no utterance starts in it.
        events = endpointer.process(Array(noise[Self.rate..<(3 * Self.rate)]))
        #expect(!events.contains { if case .speechStarted = $0 { true } else { false } }, "\(events)")
        // A card over the noise starts the next.
        let over = zip(card, noise[(3 * Self.rate)...].prefix(card.count)).map { $0 &+ $1 }
        events = endpointer.process(over)
        #expect(events.contains { if case .speechStarted = $0 { true } else { false } }, "\(events)")
    }

    @Test func aClickIsTooShort() {
        var stream = Self.roomNoise(seconds: 1)
        stream += Self.roomNoise(seconds: 0.1, amplitude: 8000, seed: 4)
        stream += Self.roomNoise(seconds: 1)
        let found = Self.utterances(Self.events(stream))
        #expect(found.map(\.ending) == [.tooShort], "\(found.map(\.ending))")
    }

    @Test func digitalSilenceIsNeverSpeech() {
        #expect(Self.events([Int16](repeating: 0, count: 5 * Self.rate)).isEmpty)
    }

    @Test func resetForgetsTheUtteranceInProgress() {
        var endpointer = Endpointer()
        _ = endpointer.process(Self.roomNoise(seconds: 1))
        _ = endpointer.process(Self.roomNoise(seconds: 0.5, amplitude: 6000, seed: 2))
        #expect(endpointer.inSpeech)
        endpointer.reset()
        #expect(!endpointer.inSpeech)
        #expect(endpointer.currentSamples.isEmpty)
    }

    /// A reset keeps the stream's clock: times go on counting every sample fed, part frames too,
    /// so an utterance found after it starts where the stream had it.
    @Test func resetKeepsTheClock() throws {
        var endpointer = Endpointer()
        let before = Self.roomNoise(seconds: 1) + Array(Self.roomNoise(seconds: 0.5, amplitude: 6000, seed: 2).prefix(7_955))
        _ = endpointer.process(before)
        endpointer.reset()
        #expect(abs(endpointer.position - Double(before.count) / Double(Self.rate)) < 1e-9)
        let after = Self.roomNoise(seconds: 1, seed: 3) + Self.roomNoise(seconds: 0.5, amplitude: 6000, seed: 4) + Self.roomNoise(seconds: 1, seed: 5)
        let utterance = try #require(Self.utterances(endpointer.process(after)).first)
        let first = Int((utterance.start * Double(Self.rate)).rounded())
        let stream = before + after
        #expect(Array(stream[first..<(first + utterance.samples.count)]) == utterance.samples)
    }
}

/// `holdOpen(forQuiet:)`: a pause mid-sentence ends the utterance only when it lasts.
@Suite struct EndpointerHoldTests {
    /// Two bursts of speech-like sound `gap` seconds apart, fed in 1024-sample chunks; at each
    /// likely end the utterance is held open for `hold` seconds of quiet when `hold` is given.
    static func utterances(gap: Double, hold: Double?) -> [Endpointer.Utterance] {
        let samples = TestAudio.roomNoise(seconds: 1) + TestAudio.speechLike(seconds: 1) + TestAudio.roomNoise(seconds: gap)
            + TestAudio.speechLike(seconds: 1, seed: 4) + TestAudio.roomNoise(seconds: 2)
        var endpointer = Endpointer()
        var ended: [Endpointer.Utterance] = []
        for start in stride(from: 0, to: samples.count, by: 1024) {
            for event in endpointer.process(Array(samples[start..<min(samples.count, start + 1024)])) {
                switch event {
                case .likelyEnd: if let hold { endpointer.holdOpen(forQuiet: hold) }
                case .speechEnded(let utterance): ended.append(utterance)
                default: break
                }
            }
        }
        return ended
    }

    @Test func aHeldPauseDoesNotEndTheUtterance() {
        let held = Self.utterances(gap: 1, hold: 1.5)
        try? #require(held.count == 1)
        #expect(held.first?.ending == .unfinished, "held again at its last pause")
        #expect((held.first?.speechEnd ?? 0) - (held.first?.speechStart ?? 0) > 2.9)
        // Without the hold the same pause is the end.
        #expect(Self.utterances(gap: 1, hold: nil).count == 2)
    }

    @Test func aLongerPauseStillEndsIt() {
        // Held for 1.5 s, a pause of 2 s ends the first utterance 1.5 s into it.
        let ended = Self.utterances(gap: 2, hold: 1.5)
        #expect(ended.map(\.ending) == [.unfinished, .unfinished])
        // The hold ends with the pause it was given for; a hold shorter than the usual end changes nothing.
        #expect(Self.utterances(gap: 1, hold: 0.1).count == 2)
    }
}
