public import HeedCore

/// Samples in memory as an audio source: the in-process stand-in for a microphone. The real
/// capture path (ALSA's file plugin) is tested through `heed listen`.
public final class SamplesSource: AudioSource {
    private var samples: [Int16]
    private var offset = 0
    /// Something to do once reading has passed a sample offset (a user registering vocabulary).
    private var actions: [(offset: Int, action: @Sendable () -> Void)]
    public let sampleRate = AudioBuffer.recognitionSampleRate
    public let name = "samples"

    /// Creates a source of `samples`, doing each action once reading has passed its offset.
    public init(_ samples: [Int16], actions: [(offset: Int, action: @Sendable () -> Void)] = []) {
        self.samples = samples
        self.actions = actions
    }

    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        while let first = actions.first, first.offset <= offset {
            actions.removeFirst()
            first.action()
        }
        let end = min(samples.count, offset + maximumFrames)
        defer { offset = end }
        return Array(samples[offset..<end])
    }
}
