public import HeedCore

/// A microphone, or any ALSA capture device, delivering mono signed 16-bit audio at the rate asked for.
///
/// The device is asked for that rate, one channel and S16_LE directly; `plug` devices such as
/// `default` convert inside ALSA. A device that refuses (a `hw:` device that only records
/// 48 kHz stereo) is opened at the nearest rate and channel count it offers, and the audio is
/// converted here: channels averaged, rate converted by a streaming windowed-sinc filter.
/// Overruns are recovered and counted in ``overruns``.
///
/// Not `Sendable`: one reader thread owns a capture, because ``read(maximumFrames:)`` blocks.
public final class ALSACapture: AudioSource {
    /// A device delivers audio as it is captured.
    public var isPaced: Bool { true }

    /// Frames per `snd_pcm_readi` at most: a larger read than the ring buffer fails on some plugins.
    static let maximumFramesPerRead = 1024

    /// Samples a second of what ``read(maximumFrames:)`` returns: always the rate asked for.
    public let sampleRate: Int

    /// The ALSA device name, as given.
    public var name: String { device.name }

    /// Overruns (and suspends) recovered with `snd_pcm_recover` so far: audio was lost each time.
    public private(set) var overruns = 0

    /// What the device delivers, such as "16000 Hz, 1 channel", or
    /// "48000 Hz, 2 channels (converted)" when Heed converts it.
    public var nativeFormat: String {
        let channels = setup.channels == 1 ? "1 channel" : "\(setup.channels) channels"
        return "\(setup.sampleRate) Hz, \(channels)" + (converter == nil ? "" : " (converted)")
    }

    private let device: PCMDevice
    /// What the device was configured to deliver.
    let setup: PCMSetup
    private var converter: CaptureConverter?
    /// Frames asked of each `snd_pcm_readi`.
    private let framesPerRead: Int
    private var readBuffer: [Int16]
    /// Converted samples not yet returned.
    private var pending: [Int16] = []

    /// Opens an ALSA capture device by name.
    ///
    /// - Parameters:
    ///   - device: an ALSA PCM name: `default`, `pulse`, `plughw:1,0`, `hw:1,0`, or one from
    ///     `~/.asoundrc`; `arecord -L` lists them.
    ///   - sampleRate: the rate ``read(maximumFrames:)`` delivers.
    /// - Throws: ``AudioError`` `.deviceNotFound` (with how to list devices), `.deviceBusy`
    ///   (with what may hold it) or `.device` with ALSA's reason.
    public convenience init(device: String = "default", sampleRate: Int = 16_000) throws(AudioError) {
        try self.init(PCMDevice(name: device, stream: .capture), sampleRate: sampleRate)
    }

    /// Opens a capture device defined in ALSA configuration text rather than the system's.
    ///
    /// - Parameters:
    ///   - device: the PCM name defined in `configuration`.
    ///   - configuration: ALSA configuration, as in `~/.asoundrc`.
    ///   - sampleRate: the rate ``read(maximumFrames:)`` delivers.
    ///   - alsaConverts: `false` keeps ALSA's `plug` layers from converting rate, channels or
    ///     format, as with a `hw:` device.
    convenience init(device: String, configuration: String, sampleRate: Int = 16_000, alsaConverts: Bool = true) throws(AudioError) {
        let pcm = try PCMDevice(name: device, stream: .capture, configurationText: configuration, alsaConverts: alsaConverts)
        try self.init(pcm, sampleRate: sampleRate)
    }

    /// Configures an open PCM; it is closed again if that fails.
    init(_ device: PCMDevice, sampleRate: Int) throws(AudioError) {
        precondition(sampleRate > 0, "sample rate must be positive")
        let setup = try device.configureCapture(sampleRate: sampleRate)
        guard setup.sampleRate > 0, setup.channels > 0, setup.bufferFrames > 0 else {
            throw AudioError(.device, source: device.name, reason: "the audio device reports an impossible configuration: \(setup)")
        }
        self.device = device
        self.setup = setup
        self.sampleRate = sampleRate
        self.converter = CaptureConverter(inputRate: setup.sampleRate, channels: setup.channels, outputRate: sampleRate)
        self.framesPerRead = min(Self.maximumFramesPerRead, setup.bufferFrames)
        self.readBuffer = Array(repeating: 0, count: framesPerRead * setup.channels)
    }

    /// Reads up to `maximumFrames` samples, waiting for the device until at least one is there.
    ///
    /// Each `snd_pcm_readi` asks for at most 1024 frames. An overrun (`-EPIPE`) or a suspend
    /// (`-ESTRPIPE`) is recovered with `snd_pcm_recover`, counted in ``overruns``, and reading
    /// goes on; the audio the device dropped is lost.
    /// - Parameter maximumFrames: a positive number of 16-bit mono samples.
    /// - Returns: between 1 and `maximumFrames` samples; never empty, a device does not end.
    /// - Throws: ``AudioError`` `.device` when the device fails and cannot be recovered.
    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        precondition(maximumFrames > 0, "maximumFrames must be positive")
        var recoveriesInARow = 0
        while pending.isEmpty {
            // Without conversion, read no more than was asked, so nothing waits in `pending`.
            let frames = converter == nil ? min(framesPerRead, maximumFrames) : framesPerRead
            let device = self.device
            let result = readBuffer.withUnsafeMutableBufferPointer { device.read(into: $0, frames: frames) }
            if result > 0 {
                recoveriesInARow = 0
                let samples = Array(readBuffer[0..<(result * setup.channels)])
                pending = converter?.convert(samples) ?? samples
                continue
            }
            recoveriesInARow += 1
            if try device.handleFailure(result, failuresInARow: recoveriesInARow) { overruns += 1 }
        }
        if pending.count <= maximumFrames {
            defer { pending = [] }
            return pending
        }
        let chunk = Array(pending[0..<maximumFrames])
        pending.removeFirst(maximumFrames)
        return chunk
    }

    /// Drops everything captured and not yet read, whatever `seconds` says: the microphone
    /// heard Heed speaking for that long, and reading it back would only delay the listener.
    public func discard(seconds: Double) throws(AudioError) {
        pending = []
        device.dropCaptured()
    }
}
