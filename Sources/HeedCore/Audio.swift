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
}
