public import HeedCore
internal import CSpeexDSP
import Foundation

/// Noise suppression and automatic gain for 16 kHz mono audio, by speexdsp's preprocessor
/// (Debian libspeexdsp): a spectral noise estimate that follows the background, subtracted
/// frame by frame, then the level brought towards a target.
///
/// It keeps state (the noise estimate), so one suppressor follows one stream: a recording, or
/// the microphone. It takes any number of samples and returns as many, 10 ms later (one frame
/// is held back until it is complete); ``flush()`` returns the rest. Every raw `speex_` call of
/// Heed is in this file.
///
/// Not `Sendable`: one stream owns it.
public final class NoiseSuppressor {
    /// How the preprocessor is set up.
    public struct Settings: Sendable, Hashable {
        /// The most noise is lowered by, in dB: by default ``measuredAttenuation``, not speexdsp's 15.
        public var maximumAttenuation: Int = Self.measuredAttenuation
        /// Automatic gain control.
        public var automaticGain: Bool = false

        /// The attenuation chosen by measurement over speexdsp's 15 dB: the listener understood 183
        /// orders of 309 in kitchen noise at 6 dB with it, 176 with 15 (docs/MEASUREMENTS.md, "Noise
        /// suppression front end" and "The listener in kitchen noise").
        public static let measuredAttenuation = 8

        public init(maximumAttenuation: Int = Self.measuredAttenuation, automaticGain: Bool = false) {
            self.maximumAttenuation = maximumAttenuation
            self.automaticGain = automaticGain
        }
    }

    /// 10 ms at 16 kHz.
    public static let frameLength = 160

    private let settings: Settings
    private var state: OpaquePointer
    private var pending: [Int16] = []

    /// A suppressor for one stream of 16 kHz mono audio.
    /// - Parameter settings: What to do besides denoising.
    public init(settings: Settings = .init()) {
        self.settings = settings
        state = Self.makeState(settings)
    }

    private static func makeState(_ settings: Settings) -> OpaquePointer {
        // The corresponding C function is `speex_preprocess_state_init`; it allocates or aborts.
        let state = speex_preprocess_state_init(Int32(Self.frameLength), 16_000)!
        func set(_ request: Int32, _ value: Int32) {
            var value = value
            speex_preprocess_ctl(state, request, &value)
        }
        set(SPEEX_PREPROCESS_SET_DENOISE, 1)
        set(SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, Int32(-abs(settings.maximumAttenuation)))
        set(SPEEX_PREPROCESS_SET_AGC, settings.automaticGain ? 1 : 0)
        // Not its dereverberation: speexdsp 1.2 takes the setting and does nothing with it (the
        // output is the same to the byte; docs/MEASUREMENTS.md, "Noise suppression front end").
        // Its VAD is off by default; setting it at all prints a warning on standard error.
        return state
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Denoises the next samples of the stream.
    /// - Parameter samples: Any number of 16 kHz mono samples.
    /// - Returns: The denoised samples of every complete 10 ms frame so far.
    public func process(_ samples: [Int16]) -> [Int16] {
        pending += samples
        let complete = pending.count - pending.count % Self.frameLength
        guard complete > 0 else { return [] }
        var output = Array(pending[..<complete])
        pending.removeFirst(complete)
        run(&output)
        return output
    }

    /// Runs the preprocessor over whole frames, in place.
    private func run(_ frames: inout [Int16]) {
        frames.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, to: buffer.count - buffer.count % Self.frameLength, by: Self.frameLength) {
                _ = speex_preprocess_run(state, buffer.baseAddress! + start)
            }
        }
    }

    /// Forgets the noise learned so far and learns `noise` instead, as a suppressor started on it
    /// would (its output is dropped); what follows is denoised against it. For a room that changed
    /// at once, a fan switched on: speexdsp takes a louder background for speech until the
    /// minimum it tracks catches up (windows of 300 frames once it has run 100 s, so up to 6 s),
    /// and lets the new noise through meanwhile. The samples held back stay.
    public func relearn(_ noise: ArraySlice<Int16>) {
        speex_preprocess_state_destroy(state)
        state = Self.makeState(settings)
        var scratch = Array(noise)
        run(&scratch)
    }

    /// The samples held back, denoised (a last partial frame is padded with silence, then cut).
    public func flush() -> [Int16] {
        guard !pending.isEmpty else { return [] }
        let count = pending.count
        let output = process([Int16](repeating: 0, count: Self.frameLength - count))
        return Array(output.prefix(count))
    }

    /// A whole recording, denoised by a fresh suppressor.
    public static func denoise(_ audio: AudioBuffer, settings: Settings = .init()) -> AudioBuffer {
        precondition(audio.sampleRate == 16_000, "the suppressor takes 16 kHz audio")
        let suppressor = NoiseSuppressor(settings: settings)
        return AudioBuffer(samples: suppressor.process(audio.samples) + suppressor.flush(), sampleRate: audio.sampleRate)
    }
}

/// A stream's audio through one noise suppressor that follows it from its start, keeping the last
/// seconds denoised: an utterance the ``Endpointer`` finds in the same stream is then taken out
/// with the room's noise already learned, where a suppressor started on the utterance alone
/// spends its first words learning it (docs/MEASUREMENTS.md, "A suppressor that follows the
/// stream").
///
/// Feed it every sample the endpointer is fed, in the same order. Not `Sendable`: one stream owns it.
public final class SuppressedStream {
    private let suppressor: NoiseSuppressor
    private let keptSamples: Int
    private var output: [Int16] = []
    /// The stream's sample index of `output[0]`.
    private var firstSample = 0

    /// A suppressor for a stream of 16 kHz mono audio, keeping `seconds` of its output.
    /// - Parameters:
    ///   - settings: What the suppressor does besides denoising.
    ///   - seconds: How far back an utterance may start (the longest utterance and its pre-roll).
    public init(settings: NoiseSuppressor.Settings, keeping seconds: Double) {
        suppressor = NoiseSuppressor(settings: settings)
        keptSamples = Int(seconds * Double(AudioBuffer.recognitionSampleRate))
    }

    /// Denoises the stream's next samples.
    public func process(_ samples: [Int16]) {
        output += suppressor.process(samples)
        // Trimmed a second at a time, so that the copy is rare.
        let excess = output.count - keptSamples
        guard excess >= AudioBuffer.recognitionSampleRate else { return }
        output.removeFirst(excess)
        firstSample += excess
    }

    /// The room changed: what comes next is denoised against `noise` (``NoiseSuppressor/relearn(_:)``).
    public func relearn(_ noise: ArraySlice<Int16>) { suppressor.relearn(noise) }

    /// The denoised version of `samples`, which the stream had from its sample index `start` on.
    /// Samples not denoised yet (the suppressor holds back less than a frame) or no longer kept
    /// are the ones given.
    public func denoised(_ samples: [Int16], from start: Int) -> [Int16] {
        var result = samples
        let lower = max(start, firstSample)
        let upper = min(start + samples.count, firstSample + output.count)
        guard lower < upper else { return result }
        result.replaceSubrange((lower - start)..<(upper - start), with: output[(lower - firstSample)..<(upper - firstSample)])
        return result
    }
}

/// When the noise suppressor runs before recognition.
public enum DenoiseMode: String, Sendable, Hashable, CaseIterable {
    /// Never.
    case off
    /// Always.
    case on
    /// When the audio's estimated signal-to-noise ratio is below ``autoBelowDecibels``: the
    /// suppressor helps in heavy noise and costs accuracy in light noise.
    case auto

    /// The estimated SNR (``SignalToNoise``) below which `auto` suppresses noise. Barista orders
    /// mixed with kitchen noise at 24, 18, 12 and 6 dB (the benchmark's peak-based SNR) read
    /// 31.6, 26.0, 20.3 and 15.0 dB (medians) on this estimator, and suppression helped at 12
    /// and 6 dB and hurt at 18 and 24: the line is drawn between 20.3 and 26.0. One corpus and
    /// one noise: a first setting, to be checked on others (docs/MEASUREMENTS.md).
    public static let autoBelowDecibels = 23.0

    /// Whether to suppress noise in audio with this estimated SNR.
    public func applies(toSNR snr: Double?) -> Bool {
        switch self {
        case .off: false
        case .on: true
        case .auto: snr.map { $0 < Self.autoBelowDecibels } ?? false
        }
    }

    /// A whole recording heard through the front end: where the mode suppresses noise for its
    /// SNR, heard twice, as captured and suppressed (``HeedCore/SpeechRecognizer/recognize(_:suppressed:)``);
    /// else heard as it is. And whether it was suppressed.
    public func hear(
        _ audio: AudioBuffer, with recognizer: some SpeechRecognizer, settings: NoiseSuppressor.Settings = .init()
    ) throws(RecognizerError) -> (result: RecognitionResult, denoised: Bool) {
        try hear(audio, with: recognizer) { NoiseSuppressor.denoise(audio, settings: settings) }
    }

    /// Audio heard through the front end, by a suppressor of the caller's: `denoised()` is
    /// heard beside the captured audio when the mode says so for the audio's SNR.
    public func hear(
        _ audio: AudioBuffer, with recognizer: some SpeechRecognizer, denoised: () -> AudioBuffer
    ) throws(RecognizerError) -> (result: RecognitionResult, denoised: Bool) {
        let front = process(audio, denoised: denoised)
        guard front.denoised else { return (try recognizer.recognize(audio), false) }
        return (try recognizer.recognize(audio, suppressed: front.audio), true)
    }

    /// Audio through the front end, by a suppressor of the caller's: `denoised()` is used when
    /// the mode says so for the audio's SNR; and whether it was.
    public func process(_ audio: AudioBuffer, denoised: () -> AudioBuffer) -> (audio: AudioBuffer, denoised: Bool) {
        guard self != .off, applies(toSNR: SignalToNoise.estimate(audio.samples, sampleRate: audio.sampleRate)) else { return (audio, false) }
        return (denoised(), true)
    }
}
