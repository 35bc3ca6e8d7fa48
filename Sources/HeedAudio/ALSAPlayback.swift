public import HeedCore

/// A loudspeaker, or any ALSA playback device, that plays mono signed 16-bit audio.
///
/// ALSA converts the rate and channel count the device needs (`snd_pcm_set_params` with soft
/// resampling on). Underruns are recovered and counted in ``underruns``.
///
/// Not `Sendable`: one thread plays at a time, because ``play(_:sampleRate:)`` blocks.
public final class ALSAPlayback: AudioSink {
    /// Frames per `snd_pcm_writei` at most.
    static let maximumFramesPerWrite = 1024

    /// The ALSA device name, as given.
    public var name: String { device.name }

    /// Underruns recovered with `snd_pcm_recover` so far: a gap was heard each time.
    public private(set) var underruns = 0

    private let device: PCMDevice
    /// The rate the device is configured for, once it is.
    private var configuredRate: Int?

    /// Opens an ALSA playback device by name.
    ///
    /// - Parameter device: an ALSA PCM name: `default`, `pulse`, `plughw:1,0`, or one from
    ///   `~/.asoundrc`; `aplay -L` lists them.
    /// - Throws: ``AudioError`` `.deviceNotFound` (with how to list devices), `.deviceBusy`
    ///   (with what may hold it) or `.device` with ALSA's reason.
    public convenience init(device: String = "default") throws(AudioError) {
        self.init(try PCMDevice(name: device, stream: .playback))
    }

    /// Opens a playback device defined in ALSA configuration text rather than the system's.
    ///
    /// - Parameters:
    ///   - device: the PCM name defined in `configuration`.
    ///   - configuration: ALSA configuration, as in `~/.asoundrc`.
    convenience init(device: String, configuration: String) throws(AudioError) {
        self.init(try PCMDevice(name: device, stream: .playback, configurationText: configuration))
    }

    init(_ device: PCMDevice) {
        self.device = device
    }

    /// Plays mono S16 samples at `sampleRate` and returns when they have been played (drained).
    ///
    /// Samples are written at most 1024 frames at a time (`snd_pcm_writei`); an underrun
    /// (`-EPIPE`) is recovered, counted in ``underruns``, and writing goes on.
    /// - Parameters:
    ///   - samples: mono audio; nothing happens when it is empty.
    ///   - sampleRate: its samples a second.
    /// - Throws: ``AudioError`` `.device` when the device refuses the format or fails.
    public func play(_ samples: [Int16], sampleRate: Int) throws(AudioError) {
        precondition(sampleRate > 0, "sample rate must be positive")
        guard !samples.isEmpty else { return }
        if configuredRate == sampleRate {
            try device.prepare()  // a drained PCM waits in the SETUP state
        } else {
            configuredRate = nil
            try device.configurePlayback(sampleRate: sampleRate)
            configuredRate = sampleRate
        }
        var offset = 0
        var recoveriesInARow = 0
        let device = self.device
        while offset < samples.count {
            let frames = min(Self.maximumFramesPerWrite, samples.count - offset)
            let start = offset
            let result = samples.withUnsafeBufferPointer { buffer in
                device.write(UnsafeBufferPointer(rebasing: buffer[start..<(start + frames)]), frames: frames)
            }
            if result > 0 {
                offset += result
                recoveriesInARow = 0
                continue
            }
            recoveriesInARow += 1
            if try device.handleFailure(result, failuresInARow: recoveriesInARow) { underruns += 1 }
        }
        try device.drain()
    }
}
