public import HeedCore
import Synchronization

/// Speech from text with espeak-ng's en-us voice, in process: Heed's spoken responses, the
/// prompts of `heed adapt --speak` and how `heed vocab` lets you hear a pronunciation.
public struct EspeakSynthesizer: SpeechSynthesizer {
    /// Creates the synthesizer; espeak-ng starts on first use.
    public init() {}

    /// Speaks text.
    /// - Returns: mono audio at espeak-ng's rate (22,050 Hz).
    /// - Throws: ``PronunciationError`` `synthesis` when espeak-ng fails.
    public func synthesize(_ text: String) throws -> AudioBuffer {
        try Espeak.shared.withLock { engine in try engine.synthesize(text, phonemeInput: false) }
    }

    /// Speaks ARPAbet phones.
    /// - Parameter words: One phone list per word.
    /// - Returns: mono audio at espeak-ng's rate.
    /// - Throws: ``PronunciationError`` `synthesis` when espeak-ng fails.
    public func synthesize(phones words: [[String]]) throws -> AudioBuffer {
        let input = GraphemeToPhoneme.espeakPhonemeInput(words)
        return try Espeak.shared.withLock { engine in try engine.synthesize(input, phonemeInput: true) }
    }
}
