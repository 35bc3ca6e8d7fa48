public import HeedCore
import Foundation

/// Finds where speech starts and ends in a stream of 16 kHz samples.
///
/// Each 10 ms frame's energy is compared with a noise floor that follows the quiet parts of
/// the stream (down at once, up slowly): a frame is speech when it is `startThreshold` dB
/// above the floor, and goes on being speech down to `continueThreshold` dB (hysteresis).
/// Speech begins after `minimumSpeechStart` of speech frames and ends after `endSilence` of
/// quiet; a pause of `tentativeSilence` is announced first, so a listener can start decoding
/// the utterance before the end is certain (the utterance it gets at the end has exactly
/// the samples it had at the pause). Frames from before the start (`preRoll`) are kept, so
/// a soft first sound is not lost.
///
/// A value type with no I/O: feed it samples with ``process(_:)``, read the events.
public struct Endpointer: Sendable {
    /// How speech is told from silence, and how long utterances may be.
    public struct Configuration: Sendable, Hashable {
        /// Seconds of quiet that end an utterance.
        public var endSilence: Double
        /// Seconds of quiet after which the end is announced as likely (≤ `endSilence`).
        public var tentativeSilence: Double
        /// Utterances longer than this (seconds) end there and are marked too long.
        public var maximumUtterance: Double
        /// Seconds of speech frames, in a row, that start an utterance.
        public var minimumSpeechStart: Double
        /// Utterances with less speech than this (seconds) are marked too short.
        public var minimumUtterance: Double
        /// Seconds of audio kept from before the start.
        public var preRoll: Double
        /// dB above the noise floor at which a frame starts speech.
        public var startThreshold: Double
        /// dB above the noise floor at which a frame continues speech.
        public var continueThreshold: Double
        /// Frames quieter than this (dBFS) are never speech.
        public var absoluteFloor: Double

        /// Half a second of silence ends an utterance; at most ten seconds.
        public static let standard = Configuration(
            endSilence: 0.5, tentativeSilence: 0.2, maximumUtterance: 10, minimumSpeechStart: 0.08, minimumUtterance: 0.2,
            preRoll: 0.3, startThreshold: 12, continueThreshold: 7, absoluteFloor: -62
        )

        /// Dictation: natural pauses between phrases do not end it (a second of quiet does), up to
        /// `maximumUtterance` seconds (the task's limit).
        public static func dictation(maximumUtterance: Double) -> Configuration {
            var configuration = standard
            configuration.endSilence = 1.0
            configuration.tentativeSilence = 0.3
            configuration.maximumUtterance = maximumUtterance
            return configuration
        }

        /// Creates a configuration.
        public init(
            endSilence: Double, tentativeSilence: Double, maximumUtterance: Double, minimumSpeechStart: Double, minimumUtterance: Double,
            preRoll: Double, startThreshold: Double, continueThreshold: Double, absoluteFloor: Double
        ) {
            self.endSilence = endSilence
            self.tentativeSilence = tentativeSilence
            self.maximumUtterance = maximumUtterance
            self.minimumSpeechStart = minimumSpeechStart
            self.minimumUtterance = minimumUtterance
            self.preRoll = preRoll
            self.startThreshold = startThreshold
            self.continueThreshold = continueThreshold
            self.absoluteFloor = absoluteFloor
        }
    }

    /// A stretch of speech with its surroundings.
    public struct Utterance: Sendable, Hashable {
        /// Why the utterance ended.
        public enum Ending: String, Sendable, Hashable, Codable {
            /// Speech, then `endSilence` of quiet.
            case complete
            /// The recognizer heard a whole sentence, then `endSilence` of nothing but silence and
            /// noise, though the room stayed loud enough to hold speech open
            /// (``Endpointer/endSpeech(heardQuietFor:)``).
            case sentenceEnded
            /// Quiet ended it after a pause held open (``Endpointer/holdOpen(forQuiet:)``): its words
            /// were unfinished, and the speaker did not go on.
            case unfinished
            /// Less speech than `minimumUtterance`: a click or a cough, not a command.
            case tooShort
            /// It reached `maximumUtterance`: not a command (talk, music, a steady noise).
            case tooLong
            /// The stream ended during speech.
            case streamEnded
            /// The recognizer heard only silence and noise in it (``Endpointer/endAsNoise()``): the
            /// room grew louder (a tap, a fan, a television switched on), nobody spoke.
            case noise
        }

        /// The samples: the pre-roll, the speech and `tentativeSilence` of the quiet after it.
        public var samples: [Int16]
        /// Where the first sample is, in seconds from the start of the stream.
        public var start: Double
        /// Where the speech started, in seconds from the start of the stream.
        public var speechStart: Double
        /// Where the speech ended, in seconds from the start of the stream.
        public var speechEnd: Double
        /// Why it ended.
        public var ending: Ending

        /// The samples from where the speech started on: the pre-roll left out.
        public var speechSamples: ArraySlice<Int16> {
            samples.dropFirst(Int(((speechStart - start) * Double(Endpointer.sampleRate)).rounded()))
        }

        /// The samples as audio to recognize.
        public var audio: AudioBuffer { AudioBuffer(samples: samples, sampleRate: Endpointer.sampleRate) }

        /// What the utterance holds from `sample` on (an index into ``samples``), as an utterance of
        /// its own: the words after a pause the listener waited out.
        public func from(sample: Int) -> Utterance {
            let first = min(max(0, sample), samples.count)
            let start = start + Double(first) / Double(Endpointer.sampleRate)
            return Utterance(samples: Array(samples[first...]), start: start, speechStart: max(speechStart, start), speechEnd: speechEnd, ending: ending)
        }
    }

    /// What the endpointer noticed in the samples just fed.
    public enum Event: Sendable, Hashable {
        /// Speech began at this time (seconds from the start of the stream).
        case speechStarted(at: Double)
        /// The speaker paused for `tentativeSilence`; if the pause lasts, this is the utterance.
        case likelyEnd(Utterance)
        /// Speech went on after a ``likelyEnd(_:)``.
        case speechResumed
        /// The utterance is over.
        case speechEnded(Utterance)
    }

    /// The sample rate the endpointer works at.
    public static let sampleRate = AudioBuffer.recognitionSampleRate
    private static let frameLength = sampleRate / 100

    /// The settings in use.
    public let configuration: Configuration
    /// The current noise floor, in dBFS.
    public private(set) var noiseFloor: Double?
    /// Whether an utterance is in progress.
    public var inSpeech: Bool { speech != nil }
    /// The samples of the utterance in progress so far (empty between utterances).
    public var currentSamples: [Int16] { speech?.samples ?? [] }
    /// Seconds of audio processed since the stream started.
    public var position: Double { Double(framesSeen * Self.frameLength + pending.count) / Double(Self.sampleRate) }

    private struct Speech {
        var samples: [Int16]
        /// The frame of the first sample (the pre-roll's first).
        var firstFrame: Int
        var startFrame: Int
        /// Frames of speech-level energy so far.
        var speechFrames = 0
        /// The last frame that was speech.
        var lastSpeechFrame: Int
        /// Quiet frames since the last speech frame.
        var quietFrames = 0
        /// Samples when the likely end was announced, if it was.
        var likelyEndSampleCount: Int?
        /// Quiet frames that end this utterance, when ``Endpointer/holdOpen(forQuiet:)`` made
        /// them more than ``Configuration/endSilence``'s until speech resumed.
        var endSilenceFrames: Int?
    }

    private var pending: [Int16] = []
    private var recent: [[Int16]] = []
    private var run = 0
    private var speech: Speech?
    private var framesSeen = 0

    /// Creates an endpointer.
    public init(configuration: Configuration = .standard) {
        self.configuration = configuration
    }

    private func frames(_ seconds: Double) -> Int { max(1, Int((seconds * 100).rounded())) }

    /// Feeds samples (any number) and returns what happened in them, in order.
    public mutating func process(_ samples: [Int16]) -> [Event] {
        pending.append(contentsOf: samples)
        var events: [Event] = []
        var offset = 0
        while pending.count - offset >= Self.frameLength {
            let frame = Array(pending[offset..<(offset + Self.frameLength)])
            offset += Self.frameLength
            events.append(contentsOf: processFrame(frame))
        }
        pending.removeFirst(offset)
        return events
    }

    /// Ends the stream: an utterance in progress ends as ``Utterance/Ending/streamEnded``.
    public mutating func finish() -> [Event] {
        guard let current = speech else { return [] }
        speech = nil
        return [.speechEnded(utterance(current, ending: .streamEnded))]
    }

    /// Forgets any utterance in progress and the recent audio, keeping the noise floor: after
    /// Heed has spoken, what was heard meanwhile is not the user's. The clock goes on: a part
    /// frame not yet judged stays, so ``position`` and the utterances' times keep counting every
    /// sample fed (a ``SuppressedStream`` fed the same samples finds an utterance by them).
    public mutating func reset() {
        speech = nil
        recent.removeAll()
        run = 0
    }

    private mutating func processFrame(_ frame: [Int16]) -> [Event] {
        defer { framesSeen += 1 }
        let level = Self.level(frame)
        let floor = noiseFloor ?? level
        let isStart = level > max(floor + configuration.startThreshold, configuration.absoluteFloor)
        let isContinuation = level > max(floor + configuration.continueThreshold, configuration.absoluteFloor)

        guard var current = speech else {
            adapt(floor: floor, to: level)
            recent.append(frame)
            // The pre-roll comes before the frames that start speech.
            let keep = frames(configuration.preRoll) + frames(configuration.minimumSpeechStart)
            if recent.count > keep { recent.removeFirst(recent.count - keep) }
            run = isStart ? run + 1 : 0
            guard run >= frames(configuration.minimumSpeechStart) else { return [] }
            let startFrame = framesSeen - run + 1
            speech = Speech(
                samples: recent.flatMap { $0 }, firstFrame: framesSeen - recent.count + 1, startFrame: startFrame, speechFrames: run,
                lastSpeechFrame: framesSeen)
            recent.removeAll()
            run = 0
            return [.speechStarted(at: Double(startFrame) / 100)]
        }

        var events: [Event] = []
        // The pauses between words show the room's level too: the floor follows the quiet
        // frames of an utterance, so one that began before the floor was learned does not
        // lose its soft end. Speech frames never move it.
        if !isContinuation { adapt(floor: floor, to: level) }
        current.samples.append(contentsOf: frame)
        if isContinuation {
            current.speechFrames += 1
            current.lastSpeechFrame = framesSeen
            current.quietFrames = 0
            if current.likelyEndSampleCount != nil {
                current.likelyEndSampleCount = nil
                current.endSilenceFrames = nil
                events.append(.speechResumed)
            }
        } else {
            current.quietFrames += 1
        }
        let length = framesSeen - current.startFrame + 1
        if current.quietFrames >= current.endSilenceFrames ?? frames(configuration.endSilence) {
            speech = nil
            let enough = current.speechFrames >= frames(configuration.minimumUtterance)
            let ending: Utterance.Ending = !enough ? .tooShort : current.endSilenceFrames == nil ? .complete : .unfinished
            events.append(.speechEnded(utterance(current, ending: ending)))
        } else if length >= frames(configuration.maximumUtterance) {
            speech = nil
            // A steady sound as loud as speech: let the floor catch up with it.
            noiseFloor = max(floor, level - configuration.continueThreshold)
            events.append(.speechEnded(utterance(current, ending: .tooLong)))
        } else {
            if current.quietFrames == frames(configuration.tentativeSilence),
                current.speechFrames >= frames(configuration.minimumUtterance)
            {
                current.likelyEndSampleCount = current.samples.count
                events.append(.likelyEnd(utterance(current, ending: .complete)))
            }
            speech = current
        }
        return events
    }

    /// Lets the utterance in progress run on through the pause it is in: it ends after `seconds`
    /// of quiet (never fewer than ``Configuration/endSilence``), unless speech resumes, which
    /// brings the usual end back. For a speaker who stopped mid-sentence to think.
    public mutating func holdOpen(forQuiet seconds: Double) {
        let quiet = max(frames(configuration.endSilence), frames(seconds))
        speech?.endSilenceFrames = quiet
    }

    /// Ends the utterance in progress where the recognizer heard its last word, `quiet` seconds
    /// ago: a noisy room holds the energy above the continue level, but what the recognizer
    /// heard since was silence and noise. The utterance keeps `tentativeSilence` after that point,
    /// as one ended by quiet does, and the noise floor rises to what followed, so that the same
    /// noise does not start the next utterance at once. `nil` when no utterance is in progress.
    public mutating func endSpeech(heardQuietFor quiet: Double) -> Event? {
        guard var current = speech else { return nil }
        speech = nil
        let quietFrames = min(frames(quiet), framesSeen - current.startFrame)
        current.lastSpeechFrame = framesSeen - 1 - quietFrames
        current.quietFrames = quietFrames
        learnNoise(current.samples.suffix(quietFrames * Self.frameLength))
        return .speechEnded(utterance(current, ending: .sentenceEnded))
    }

    /// Ends the utterance in progress as noise: the recognizer heard nothing but silence and noise
    /// since it started, so what started it was the room growing louder, not a voice. The noise
    /// floor rises to what was heard since the start, so that the same noise does not start
    /// another utterance, while speech over it does. `nil` when no utterance is in progress.
    public mutating func endAsNoise() -> Event? {
        guard let current = speech else { return nil }
        speech = nil
        let noise = utterance(current, ending: .noise)
        learnNoise(noise.speechSamples)
        return .speechEnded(noise)
    }

    /// After speech held open by noise: the floor rises to `noise`'s median frame level less
    /// `continueThreshold` (never falls), and its last frames are the next utterance's pre-roll.
    private mutating func learnNoise(_ noise: ArraySlice<Int16>) {
        let noiseFrames = stride(from: noise.startIndex, to: noise.endIndex - Self.frameLength + 1, by: Self.frameLength).map {
            Array(noise[$0..<($0 + Self.frameLength)])
        }
        let levels = noiseFrames.map(Self.level).sorted()
        if !levels.isEmpty {
            noiseFloor = max(noiseFloor ?? levels[0], levels[levels.count / 2] - configuration.continueThreshold)
        }
        recent = Array(noiseFrames.suffix(frames(configuration.preRoll) + frames(configuration.minimumSpeechStart)))
        run = 0
    }

    /// The utterance: everything up to `tentativeSilence` after the last speech frame.
    private func utterance(_ current: Speech, ending: Utterance.Ending) -> Utterance {
        let tail = min(current.quietFrames, frames(configuration.tentativeSilence))
        let trailing = (current.quietFrames - tail) * Self.frameLength
        let samples = Array(current.samples.dropLast(trailing))
        return Utterance(
            samples: samples,
            start: Double(current.firstFrame) / 100,
            speechStart: Double(current.startFrame) / 100,
            speechEnd: Double(current.lastSpeechFrame + 1) / 100,
            ending: ending
        )
    }

    /// The floor falls towards a quieter frame by up to 1 dB a frame and rises towards a louder
    /// one by 0.05 dB a frame (5 dB a second), so short sounds hardly move it and a new steady
    /// noise is learned within seconds. It stays within reach of ``Configuration/absoluteFloor``
    /// (digital silence would otherwise drag it out of sight).
    private mutating func adapt(floor: Double, to level: Double) {
        let moved = level < floor ? max(level, floor - 1) : min(level, floor + 0.05)
        noiseFloor = max(moved, configuration.absoluteFloor - configuration.startThreshold)
    }

    /// A frame's RMS level in dBFS (−100 for digital silence).
    static func level(_ frame: [Int16]) -> Double {
        let energy = frame.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(frame.count, 1))
        guard energy > 0 else { return -100 }
        return 10 * log10(energy / (32768.0 * 32768.0))
    }
}
