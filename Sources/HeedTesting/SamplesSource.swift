import Foundation
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
    /// Whether reads wait for the audio clock, as a microphone's do.
    public let isPaced: Bool
    private var started: ContinuousClock.Instant?

    /// Creates a source of `samples`, doing each action once reading has passed its offset.
    /// - Parameter paced: deliver the samples no faster than they would be spoken.
    public init(_ samples: [Int16], actions: [(offset: Int, action: @Sendable () -> Void)] = [], paced: Bool = false) {
        self.samples = samples
        self.actions = actions
        self.isPaced = paced
    }

    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        while let first = actions.first, first.offset <= offset {
            actions.removeFirst()
            first.action()
        }
        let end = min(samples.count, offset + maximumFrames)
        defer { offset = end }
        if isPaced {
            let clock = ContinuousClock()
            let start = started ?? clock.now
            started = start
            let wait = clock.now.duration(to: start + .microseconds(Int64(end) * 1_000_000 / Int64(sampleRate)))
            if wait > .zero {
                let (seconds, attoseconds) = wait.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
        }
        return Array(samples[offset..<end])
    }
}
