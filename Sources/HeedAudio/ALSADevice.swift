// Every raw `snd_*` call of Heed lives in this file. It is the seam between Swift and
// alsa-lib (Debian 12 ships 1.2.8): capture and playback classes talk to `PCMDevice` only.

internal import CALSA
internal import Glibc
import HeedCore
import Synchronization

/// Which way audio flows through a PCM.
///
/// The corresponding C type is `snd_pcm_stream_t`.
enum PCMStream: Sendable {
    case capture
    case playback

    var raw: snd_pcm_stream_t { self == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK }

    /// How messages name a device of this direction.
    var deviceNoun: String { self == .capture ? "audio capture device" : "audio playback device" }

    /// The alsa-utils command that lists devices of this direction.
    var listCommand: String { self == .capture ? "arecord -L" : "aplay -L" }
}

/// What a capture PCM was configured to deliver: always interleaved S16_LE.
struct PCMSetup: Sendable, Hashable {
    var sampleRate: Int
    var channels: Int
    /// The ring buffer, in frames. One read must not ask for more (the `file` plugin fails).
    var bufferFrames: Int
    var periodFrames: Int
}

/// One open ALSA PCM, capture or playback.
///
/// Not `Sendable`: one thread drives a PCM. ALSA's error log is collected per call on the
/// calling thread (`snd_lib_error_set_local`) and never printed: it goes into thrown errors,
/// and ``messages`` keeps what the last call logged.
final class PCMDevice {
    private let raw: OpaquePointer
    /// The configuration tree the PCM was opened from (`snd_pcm_open_lconf`); freed after the PCM.
    private let configuration: OpaquePointer?

    /// The PCM name as the user gave it.
    let name: String
    let stream: PCMStream

    /// What ALSA logged during the last call.
    private(set) var messages: [String] = []

    /// Results that the next reads return instead of calling `snd_pcm_readi`: a test seam
    /// for conditions a file-backed PCM cannot produce, such as an overrun (`-EPIPE`).
    var injectedReadResults: [Int] = []

    /// Opens a PCM by name from the system's ALSA configuration (including `~/.asoundrc`).
    ///
    /// The PCM is opened non-blocking, so that a busy device fails at once with `EBUSY`
    /// instead of waiting, then switched to blocking.
    /// The corresponding C functions are `snd_pcm_open` and `snd_pcm_nonblock`.
    /// - Parameters:
    ///   - name: an ALSA PCM name such as `default`, `plughw:1,0` or `pulse`.
    ///   - stream: capture or playback.
    ///   - alsaConverts: `false` opens with `SND_PCM_NO_AUTO_RESAMPLE`, `_CHANNELS` and `_FORMAT`,
    ///     so `plug` layers pass the device's own formats through as a `hw:` device does.
    /// - Throws: ``AudioError`` `.deviceNotFound`, `.deviceBusy` or `.device`.
    convenience init(name: String, stream: PCMStream, alsaConverts: Bool = true) throws(AudioError) {
        try self.init(name: name, stream: stream, configurationText: nil, alsaConverts: alsaConverts)
    }

    /// Opens a PCM, from the system's ALSA configuration or from configuration text.
    ///
    /// The corresponding C functions are `snd_pcm_open`, or `snd_pcm_open_lconf` over a tree
    /// built with `snd_config_top`, `snd_input_buffer_open` and `snd_config_load`.
    /// - Parameters:
    ///   - name: the PCM name.
    ///   - stream: capture or playback.
    ///   - configurationText: ALSA configuration syntax that defines `name`, as in `~/.asoundrc`;
    ///     `nil` uses the system's configuration. The tree lives as long as the PCM.
    ///   - alsaConverts: `false` keeps `plug` layers from converting, as with a `hw:` device.
    /// - Throws: ``AudioError`` `.deviceNotFound`, `.deviceBusy` or `.device`; `.device` also
    ///   when the configuration text does not parse.
    init(name: String, stream: PCMStream, configurationText: String?, alsaConverts: Bool = true) throws(AudioError) {
        var mode = SND_PCM_NONBLOCK
        if !alsaConverts { mode |= SND_PCM_NO_AUTO_RESAMPLE | SND_PCM_NO_AUTO_CHANNELS | SND_PCM_NO_AUTO_FORMAT }
        var configuration: OpaquePointer?
        if let configurationText {
            let (tree, messages) = Self.parseConfiguration(configurationText)
            guard let tree else {
                throw AudioError(.device, source: name, reason: "the ALSA configuration does not parse" + Self.quote(messages))
            }
            configuration = tree
        }
        var pcm: OpaquePointer?
        let (status, messages) = collectingALSAMessages {
            if let configuration {
                snd_pcm_open_lconf(&pcm, name, stream.raw, mode, configuration)
            } else {
                snd_pcm_open(&pcm, name, stream.raw, mode)
            }
        }
        guard status == 0, let pcm else {
            if let pcm { _ = collectingALSAMessages { snd_pcm_close(pcm) } }
            if let configuration { _ = snd_config_delete(configuration) }
            throw Self.openingError(name: name, stream: stream, code: status, messages: messages)
        }
        let (blocking, blockingMessages) = collectingALSAMessages { snd_pcm_nonblock(pcm, 0) }
        guard blocking == 0 else {
            _ = collectingALSAMessages { snd_pcm_close(pcm) }
            if let configuration { _ = snd_config_delete(configuration) }
            throw Self.failure(name, "cannot switch to blocking mode", code: blocking, messages: blockingMessages)
        }
        self.raw = pcm
        self.configuration = configuration
        self.name = name
        self.stream = stream
    }

    deinit {
        _ = collectingALSAMessages { snd_pcm_close(raw) }
        if let configuration { _ = snd_config_delete(configuration) }
    }

    /// Parses ALSA configuration text into a new tree, or returns `nil` and ALSA's messages.
    private static func parseConfiguration(_ text: String) -> (OpaquePointer?, [String]) {
        var top: OpaquePointer?
        var input: OpaquePointer?
        let (status, messages) = collectingALSAMessages { () -> Int32 in
            guard snd_config_top(&top) == 0, let top else { return -ENOMEM }
            let opened = text.withCString { snd_input_buffer_open(&input, $0, strlen($0)) }
            guard opened == 0, let input else { return opened }
            defer { _ = snd_input_close(input) }
            return snd_config_load(top, input)
        }
        guard status == 0 else {
            if let top { _ = snd_config_delete(top) }
            return (nil, messages + [String(cString: snd_strerror(status))])
        }
        return (top, messages)
    }

    // MARK: Capture

    /// Configures interleaved S16_LE capture, as close to `sampleRate` and mono as the device allows.
    ///
    /// Rate and channel count are tested first (`snd_pcm_hw_params_test_rate`/`_channels`); when the
    /// device refuses them, the nearest it offers is taken and the caller converts. The ring buffer
    /// is asked for 500 ms.
    /// - Returns: what the device will deliver.
    /// - Throws: ``AudioError`` `.device` naming the step that failed and ALSA's reason.
    func configureCapture(sampleRate: Int) throws(AudioError) -> PCMSetup {
        try configure { (pcm, params) throws(AudioError) in
            try check(snd_pcm_hw_params_any(pcm, params), "has no usable configuration")
            try check(
                snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED),
                "does not offer interleaved reads (SND_PCM_ACCESS_RW_INTERLEAVED)"
            )
            try check(
                snd_pcm_hw_params_set_format(pcm, params, SND_PCM_FORMAT_S16_LE),
                "cannot deliver signed 16-bit little-endian samples (S16_LE); its plughw: name converts"
            )
            var channels: UInt32 = 1
            if snd_pcm_hw_params_test_channels(pcm, params, channels) == 0 {
                try check(snd_pcm_hw_params_set_channels(pcm, params, channels), "refuses 1 channel")
            } else {
                try check(snd_pcm_hw_params_set_channels_near(pcm, params, &channels), "offers no channel count")
            }
            var rate = UInt32(sampleRate)
            var direction: Int32 = 0
            if snd_pcm_hw_params_test_rate(pcm, params, rate, 0) == 0 {
                try check(snd_pcm_hw_params_set_rate(pcm, params, rate, 0), "refuses \(rate) Hz")
            } else {
                try check(snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction), "offers no sample rate near \(rate) Hz")
            }
            // Buffer and period are wishes: a device that cannot meet them keeps its own. Two
            // seconds hold what arrives while the listener decodes an utterance or rebuilds a grammar.
            var bufferTime: UInt32 = 2_000_000
            _ = snd_pcm_hw_params_set_buffer_time_near(pcm, params, &bufferTime, &direction)
            var periodTime: UInt32 = 50_000
            _ = snd_pcm_hw_params_set_period_time_near(pcm, params, &periodTime, &direction)
            try check(snd_pcm_hw_params(pcm, params), "refuses the configuration \(rate) Hz, \(channels) channel(s), S16_LE")
            return hardwareSetup(params)
        }
    }

    /// Reads up to `frames` interleaved frames into `buffer`.
    ///
    /// The corresponding C function is `snd_pcm_readi`.
    /// - Returns: the frames read, or a negative error code (`-EPIPE` after an overrun).
    func read(into buffer: UnsafeMutableBufferPointer<Int16>, frames: Int) -> Int {
        if !injectedReadResults.isEmpty { return injectedReadResults.removeFirst() }
        let (result, messages) = collectingALSAMessages {
            snd_pcm_readi(raw, buffer.baseAddress, snd_pcm_uframes_t(frames))
        }
        self.messages = messages
        return result
    }

    /// Throws away what the device has captured and not yet been read, and captures afresh.
    ///
    /// The corresponding C functions are `snd_pcm_drop`, `snd_pcm_prepare` and `snd_pcm_start`.
    func dropCaptured() {
        let (_, messages) = collectingALSAMessages { () -> Int32 in
            _ = snd_pcm_drop(raw)
            _ = snd_pcm_prepare(raw)
            return snd_pcm_start(raw)
        }
        self.messages = messages
    }

    // MARK: Playback

    /// Configures interleaved S16_LE mono playback at `sampleRate`, ALSA resampling if needed,
    /// with about 100 ms of latency. The corresponding C function is `snd_pcm_set_params`.
    /// - Throws: ``AudioError`` `.device` with ALSA's reason.
    func configurePlayback(sampleRate: Int) throws(AudioError) {
        let (status, messages) = collectingALSAMessages {
            snd_pcm_set_params(raw, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, UInt32(sampleRate), 1, 100_000)
        }
        guard status == 0 else {
            throw Self.failure(name, "cannot play mono 16-bit audio at \(sampleRate) Hz", code: status, messages: messages)
        }
    }

    /// Writes up to `frames` mono frames from `samples`.
    ///
    /// The corresponding C function is `snd_pcm_writei`.
    /// - Returns: the frames written, or a negative error code (`-EPIPE` after an underrun).
    func write(_ samples: UnsafeBufferPointer<Int16>, frames: Int) -> Int {
        let (result, messages) = collectingALSAMessages {
            snd_pcm_writei(raw, samples.baseAddress, snd_pcm_uframes_t(frames))
        }
        self.messages = messages
        return result
    }

    /// Waits until everything written has been played. The corresponding C function is `snd_pcm_drain`.
    /// - Throws: ``AudioError`` `.device` with ALSA's reason.
    func drain() throws(AudioError) {
        let (status, messages) = collectingALSAMessages { snd_pcm_drain(raw) }
        guard status == 0 else { throw Self.failure(name, "cannot finish playing", code: status, messages: messages) }
    }

    /// Makes a drained or stopped PCM ready for new audio. The corresponding C function is `snd_pcm_prepare`.
    /// - Throws: ``AudioError`` `.device` with ALSA's reason.
    func prepare() throws(AudioError) {
        let (status, messages) = collectingALSAMessages { snd_pcm_prepare(raw) }
        guard status == 0 else { throw Self.failure(name, "cannot be prepared for new audio", code: status, messages: messages) }
    }

    // MARK: Both directions

    /// Recovers from an overrun or underrun (`-EPIPE`), a suspend (`-ESTRPIPE`) or an interrupted
    /// call (`-EINTR`), without logging. The corresponding C function is `snd_pcm_recover`.
    /// - Returns: 0 when the PCM can go on, or a negative error code.
    func recover(from code: Int) -> Int32 {
        let (status, messages) = collectingALSAMessages { snd_pcm_recover(raw, Int32(truncatingIfNeeded: code), 1) }
        self.messages += messages
        return status
    }

    /// What a read or write that moved no frames (`result` ≤ 0) means for the loop around it:
    /// repeat it at once (interrupted, or nothing yet), or after repairing an overrun or
    /// underrun, which it counts; anything else, or too many failures in a row, is thrown.
    ///
    /// - Parameters:
    ///   - result: what `snd_pcm_readi` or `snd_pcm_writei` returned.
    ///   - failuresInARow: failures since the last call that moved frames, this one included.
    /// - Returns: whether an overrun or underrun was repaired.
    /// - Throws: ``AudioError`` `.device` naming the device and quoting ALSA.
    func handleFailure(_ result: Int, failuresInARow: Int) throws(AudioError) -> Bool {
        let (moved, verb, xrun) =
            stream == .capture ? ("delivering audio", "cannot be read", "overran") : ("playing", "cannot be written to", "underran")
        guard failuresInARow <= Self.maximumFailuresInARow else {
            throw Self.failure(name, "failed \(failuresInARow) times in a row without \(moved)", code: result, messages: messages)
        }
        if result == 0 || Self.isInterruption(result) { return false }
        guard Self.isXRun(result) else { throw Self.failure(name, verb, code: result, messages: messages) }
        let recovered = recover(from: result)
        guard recovered == 0 else { throw Self.failure(name, "\(xrun) and cannot recover", code: recovered, messages: messages) }
        return true
    }

    /// Reads or writes that fail this many times in a row, without moving a frame, give up.
    static let maximumFailuresInARow = 16

    /// Whether `code` is an overrun/underrun or a suspend, which ``recover(from:)`` can repair.
    static func isXRun(_ code: Int) -> Bool { code == -Int(EPIPE) || code == -Int(ESTRPIPE) }

    /// Whether `code` says the call was interrupted and may simply be repeated.
    static func isInterruption(_ code: Int) -> Bool { code == -Int(EINTR) || code == -Int(EAGAIN) }

    // MARK: Helpers

    /// Runs `body` with a hardware parameter space allocated for this PCM.
    private func configure<R>(_ body: (OpaquePointer, OpaquePointer) throws(AudioError) -> R) throws(AudioError) -> R {
        var params: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&params) == 0, let params else {
            throw AudioError(.device, source: name, reason: "out of memory for ALSA hardware parameters")
        }
        defer { snd_pcm_hw_params_free(params) }
        _ = ALSALog.take()
        let previous = snd_lib_error_set_local(alsaLogHandler)
        defer { _ = snd_lib_error_set_local(previous) }
        return try body(raw, params)
    }

    /// Throws `.device` naming what the device `refuses` when `status` is an error.
    private func check(_ status: Int32, _ complaint: String) throws(AudioError) {
        guard status < 0 else { return }
        throw Self.failure(name, complaint, code: status, messages: ALSALog.take())
    }

    private func hardwareSetup(_ params: OpaquePointer) -> PCMSetup {
        var rate: UInt32 = 0
        var direction: Int32 = 0
        var channels: UInt32 = 0
        var bufferFrames: snd_pcm_uframes_t = 0
        var periodFrames: snd_pcm_uframes_t = 0
        _ = snd_pcm_hw_params_get_rate(params, &rate, &direction)
        _ = snd_pcm_hw_params_get_channels(params, &channels)
        _ = snd_pcm_hw_params_get_buffer_size(params, &bufferFrames)
        _ = snd_pcm_hw_params_get_period_size(params, &periodFrames, &direction)
        _ = ALSALog.take()
        return PCMSetup(sampleRate: Int(rate), channels: Int(channels), bufferFrames: Int(bufferFrames), periodFrames: Int(periodFrames))
    }

    /// ALSA's message for an error code. The corresponding C function is `snd_strerror`.
    static func describe(_ code: Int) -> String {
        String(cString: snd_strerror(Int32(truncatingIfNeeded: code)))
    }

    /// `" (ALSA: first; last)"` from what ALSA logged, or `""`.
    ///
    /// The first message is the cause (`cannot find card '0'`), the last what it led to
    /// (`Unknown PCM default`); those in between trace ALSA's configuration functions.
    static func quote(_ messages: [String]) -> String {
        guard let first = messages.first, let last = messages.last else { return "" }
        return first == last ? " (ALSA: \(first))" : " (ALSA: \(first); \(last))"
    }

    /// A `.device` error: the device `complaint`, ALSA's text for `code` and what it logged.
    static func failure(_ name: String, _ complaint: String, code: some BinaryInteger, messages: [String]) -> AudioError {
        AudioError(.device, source: name, reason: "the audio device \(complaint): \(describe(Int(code)))" + quote(messages))
    }

    /// The error for a PCM that does not open: not found, busy, or another failure.
    static func openingError(name: String, stream: PCMStream, code: Int32, messages: [String]) -> AudioError {
        let alsa = quote(messages)
        // ENOENT also means a file the configuration names is missing (the `file` plugin's
        // infile): the name is unknown only when ALSA says so, or says nothing.
        let unknownName = messages.contains { $0.hasPrefix("Unknown PCM") || $0.lowercased().contains("card") }
        let missing = [ENOENT, ENODEV, ENXIO].contains(-code) && (unknownName || messages.isEmpty)
        if missing || (code == -EINVAL && unknownName) {
            return AudioError(
                .deviceNotFound,
                source: name,
                reason: "no \(stream.deviceNoun) named \"\(name)\"\(alsa). List the devices with "
                    + "\"\(stream.listCommand)\" (Debian package alsa-utils) and choose one with --device NAME"
            )
        }
        switch -code {
        case EBUSY:
            return AudioError(
                .deviceBusy,
                source: name,
                reason: "the \(stream.deviceNoun) is busy: another program is using it\(alsa). "
                    + "Close that program (\"fuser -v /dev/snd/*\" shows which one); with PulseAudio or PipeWire "
                    + "running, use --device pulse or --device default, which share the sound card"
            )
        case EACCES, EPERM:
            return AudioError(
                .device,
                source: name,
                reason: "cannot open the \(stream.deviceNoun): \(describe(Int(code)))\(alsa). "
                    + "Is this user in the \"audio\" group?"
            )
        default:
            return AudioError(.device, source: name, reason: "cannot open the \(stream.deviceNoun): \(describe(Int(code)))\(alsa)")
        }
    }
}

// MARK: - ALSA's error log

/// ALSA's error messages, per thread, from `snd_lib_error_set_local` until taken.
///
/// The local handler has no context pointer, so messages are filed under the thread
/// that logged them; each call that installs the handler takes its thread's messages.
private enum ALSALog {
    static let pending = Mutex<[pthread_t: [String]]>([:])

    static func append(_ message: String) {
        let thread = pthread_self()
        pending.withLock { $0[thread, default: []].append(message) }
    }

    /// Returns and forgets this thread's messages.
    static func take() -> [String] {
        let thread = pthread_self()
        return pending.withLock { $0.removeValue(forKey: thread) ?? [] }
    }
}

/// Formats an ALSA message as alsa-lib's default handler would, without the source location,
/// and files it. The corresponding C type is `snd_local_error_handler_t`.
private let alsaLogHandler: snd_local_error_handler_t = { _, _, _, code, format, arguments in
    guard let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    let length = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
    guard length >= 0 else { return }
    let bytes = buffer.prefix(min(Int(length), buffer.count - 1)).map { UInt8(bitPattern: $0) }
    var message = String(decoding: bytes, as: UTF8.self)
    if code != 0 { message += ": " + String(cString: snd_strerror(code)) }
    ALSALog.append(message)
}

/// Runs `body` with ALSA's error log on this thread collected instead of printed to standard error.
///
/// The corresponding C function is `snd_lib_error_set_local` (alsa-lib 1.1.6 and later).
/// - Returns: what `body` returned, and the messages ALSA logged meanwhile.
private func collectingALSAMessages<R>(_ body: () -> R) -> (R, [String]) {
    let previous = snd_lib_error_set_local(alsaLogHandler)
    let result = body()
    _ = snd_lib_error_set_local(previous)
    return (result, ALSALog.take())
}
