public import HeedCore
import Synchronization

/// A synthesizer that "speaks" a text as quiet audio of a fixed length per word and keeps
/// what it was given: the listener's spoken responses without espeak-ng.
public final class ScriptedSynthesizer: SpeechSynthesizer {
    private let texts = Mutex<[String]>([])
    private let secondsPerWord: Double

    /// - Parameter secondsPerWord: the length of each word's audio.
    public init(secondsPerWord: Double = 0.25) { self.secondsPerWord = secondsPerWord }

    /// The texts spoken, in order.
    public var spoken: [String] { texts.withLock { $0 } }

    public func synthesize(_ text: String) throws -> AudioBuffer {
        texts.withLock { $0.append(text) }
        let words = text.split(whereSeparator: \.isWhitespace).count
        let rate = AudioBuffer.recognitionSampleRate
        return AudioBuffer(samples: [Int16](repeating: 0, count: Int(Double(words) * secondsPerWord * Double(rate))), sampleRate: rate)
    }
}

/// A speaker that keeps what it was asked to play.
public final class RecordingSpeaker: AudioSink, @unchecked Sendable {
    private let played = Mutex<[AudioBuffer]>([])

    public init() {}

    /// Everything played, in order.
    public var recordings: [AudioBuffer] { played.withLock { $0 } }

    public func play(_ samples: [Int16], sampleRate: Int) throws(AudioError) {
        played.withLock { $0.append(AudioBuffer(samples: samples, sampleRate: sampleRate)) }
    }
}
