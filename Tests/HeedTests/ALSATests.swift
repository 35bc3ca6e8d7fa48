import Foundation
import Glibc
@testable import HeedAudio
import HeedCore
import Testing

/// Capture and playback through real alsa-lib, without a sound card: PCMs are ALSA's `file`
/// plugin over its `null` plugin (see ``ALSAFixture``), opened from configuration text with
/// `snd_pcm_open_lconf`, or by name from `~/.asoundrc` in a child process.
@Suite("ALSA audio devices")
struct ALSATests {
    /// Reads exactly `count` samples in chunks of at most `chunk`.
    private func read(_ source: some AudioSource, count: Int, chunk: Int) throws -> [Int16] {
        var samples: [Int16] = []
        while samples.count < count {
            let next = try source.read(maximumFrames: min(chunk, count - samples.count))
            #expect(!next.isEmpty && next.count <= chunk)
            if next.isEmpty { break }
            samples += next
        }
        return samples
    }

    // MARK: Capture

    @Test func captureReturnsTheSamplesOfTheFile() throws {
        let fixture = try ALSAFixture()
        let expected = ALSAFixture.tone(440, count: 5_000, rate: 16_000).enumerated().map { $1 &+ Int16($0 % 7) }
        let infile = try fixture.writeRaw(expected, to: "in.raw")
        let capture = try ALSACapture(device: "mic", configuration: ALSAFixture.capture("mic", infile: infile))
        #expect(capture.name == "mic")
        #expect(capture.sampleRate == 16_000)
        #expect(capture.nativeFormat == "16000 Hz, 1 channel")
        // 1500 is more than one `snd_pcm_readi` may ask for (1024): reads come back shorter, not failing.
        let first = try capture.read(maximumFrames: 1500)
        #expect(first.count == 1024)
        let rest = try read(capture, count: expected.count - first.count, chunk: 700)
        #expect(first + rest == expected)
        #expect(capture.overruns == 0)
    }

    @Test func captureConvertsWhatTheDeviceCannotDeliverAsMono16kHz() throws {
        // A "sound card" that records only 48 kHz stereo: left and right differ by ±3000 around
        // a 440 Hz tone, so their average is the tone.
        let fixture = try ALSAFixture()
        let tone = ALSAFixture.tone(440, count: 48_000, rate: 48_000)
        let stereo = ALSAFixture.interleave([tone.map { $0 + 3_000 }, tone.map { $0 - 3_000 }])
        let infile = try fixture.writeRaw(stereo, to: "in48.raw")
        let configuration = ALSAFixture.fixedFormatCapture("card", infile: infile, rate: 48_000, channels: 2)

        let capture = try ALSACapture(device: "card", configuration: configuration, alsaConverts: false)
        #expect(capture.setup.sampleRate == 48_000 && capture.setup.channels == 2)
        #expect(capture.nativeFormat == "48000 Hz, 2 channels (converted)")
        #expect(capture.sampleRate == 16_000)
        // Only output whose filter window lies inside the file: the `file` plugin has no end.
        let converted = try read(capture, count: 15_000, chunk: 512)
        let reference = Resampler.resample(AudioBuffer(samples: tone, sampleRate: 48_000), to: 16_000).samples
        let worst = zip(converted, reference).map { abs(Int($0) - Int($1)) }.max() ?? .max
        #expect(converted.count == 15_000)
        #expect(worst <= 1, "the streamed conversion matches the whole-buffer Resampler to ±1")
        #expect((410...414).contains(ALSAFixture.crossings(converted)), "440 Hz for 0.9375 s")

        // Opened normally, ALSA's plug converts and the audio arrives as asked.
        let converting = try ALSACapture(device: "card", configuration: configuration)
        #expect(converting.nativeFormat == "16000 Hz, 1 channel")
    }

    @Test(arguments: [44_100, 8_000, 22_050])
    func streamingResamplerMatchesTheWholeBufferResamplerInAnyChunks(rate: Int) {
        let input = ALSAFixture.tone(1_000, count: rate / 2, rate: rate)
        let whole = Resampler.resample(AudioBuffer(samples: input, sampleRate: rate), to: 16_000).samples
        var resampler = StreamingResampler(inputRate: rate, outputRate: 16_000)
        var streamed: [Int16] = []
        let sizes = [1, 7, 333, 1024, 5, 4096]
        var offset = 0
        var chunk = 0
        while offset < input.count {
            let end = min(input.count, offset + sizes[chunk % sizes.count])
            streamed += resampler.process(Array(input[offset..<end]))
            offset = end
            chunk += 1
        }
        // The stream lags by the filter's half width (17 output samples down to 16 kHz, 34 up
        // from 8 kHz): what it has given must agree.
        #expect(streamed.count >= whole.count - 36)
        let worst = zip(streamed, whole).map { abs(Int($0) - Int($1)) }.max() ?? .max
        #expect(worst <= 1)
    }

    @Test func captureRecoversFromOverrunsAndCountsThem() throws {
        // A `file` PCM never overruns (nothing runs in real time), so `-EPIPE` and `-ESTRPIPE`
        // are injected in place of `snd_pcm_readi` results; recovery runs the real
        // `snd_pcm_recover` on the real PCM, and reading goes on with the file's samples.
        let fixture = try ALSAFixture()
        let expected = (0..<3_000).map { Int16($0) }
        let infile = try fixture.writeRaw(expected, to: "in.raw")
        let device = try PCMDevice(name: "mic", stream: .capture, configurationText: ALSAFixture.capture("mic", infile: infile))
        let capture = try ALSACapture(device, sampleRate: 16_000)
        device.injectedReadResults = [-Int(EPIPE), -Int(ESTRPIPE)]
        let first = try capture.read(maximumFrames: 1_000)
        #expect(capture.overruns == 2)
        device.injectedReadResults = [-Int(EPIPE)]
        let rest = try read(capture, count: 2_000, chunk: 1_000)
        #expect(first + rest == expected)
        #expect(capture.overruns == 3)
    }

    @Test func captureGivesUpWhenOverrunsNeverEnd() throws {
        let fixture = try ALSAFixture()
        let infile = try fixture.writeRaw([1, 2, 3, 4], to: "in.raw")
        let device = try PCMDevice(name: "mic", stream: .capture, configurationText: ALSAFixture.capture("mic", infile: infile))
        let capture = try ALSACapture(device, sampleRate: 16_000)
        device.injectedReadResults = Array(repeating: -Int(EPIPE), count: 20)
        let error = #expect(throws: AudioError.self) { try capture.read(maximumFrames: 4) }
        #expect(error?.code == .device)
        #expect(error?.description.contains("17 times in a row") == true)
        #expect(capture.overruns == PCMDevice.maximumFailuresInARow)
    }

    @Test func captureThrowsOtherReadErrorsWithWhatALSASaid() throws {
        // For real: the `file` plugin copies captured audio to its `file`; writing /dev/full
        // fails with ENOSPC once its buffer fills, and `snd_pcm_readi` returns -EIO.
        let fixture = try ALSAFixture()
        let infile = try fixture.writeRaw(Array(repeating: 0, count: 100), to: "in.raw")
        let configuration = "pcm.full { type file  slave.pcm { type null }  file \"/dev/full\"  infile \"\(infile)\"  format \"raw\" }"
        let capture = try ALSACapture(device: "full", configuration: configuration)
        let error = #expect(throws: AudioError.self) {
            for _ in 0..<1_000 { _ = try capture.read(maximumFrames: 1_024) }
        }
        #expect(error?.code == .device)
        #expect(error?.source == "full")
        #expect(error?.reason.contains("cannot be read: Input/output error") == true)
        #expect(error?.reason.contains("/dev/full write failed") == true, "ALSA's own message, not printed to stderr")
        #expect(capture.overruns == 0)
    }

    // MARK: Errors

    @Test func aMissingDeviceSaysHowToListDevices() {
        let capture = #expect(throws: AudioError.self) { try ALSACapture(device: "heed-no-such-device") }
        #expect(capture?.code == .deviceNotFound)
        #expect(capture?.source == "heed-no-such-device")
        #expect(capture?.reason.contains("no audio capture device named \"heed-no-such-device\"") == true)
        #expect(capture?.reason.contains("Unknown PCM heed-no-such-device") == true)
        #expect(capture?.reason.contains("\"arecord -L\" (Debian package alsa-utils)") == true)
        #expect(capture?.reason.contains("--device") == true)

        let playback = #expect(throws: AudioError.self) { try ALSAPlayback(device: "heed-no-such-device") }
        #expect(playback?.code == .deviceNotFound)
        #expect(playback?.reason.contains("\"aplay -L\"") == true)

        let inConfiguration = #expect(throws: AudioError.self) {
            try ALSACapture(device: "other", configuration: ALSAFixture.capture("mic", infile: "/dev/null"))
        }
        #expect(inConfiguration?.code == .deviceNotFound)
    }

    @Test func aMissingFileBehindADeviceIsNotAMissingDevice() {
        let error = #expect(throws: AudioError.self) {
            try ALSACapture(device: "mic", configuration: ALSAFixture.capture("mic", infile: "/heed/no/such/in.raw"))
        }
        #expect(error?.code == .device)
        #expect(error?.reason == "cannot open the audio capture device: No such file or directory (ALSA: open /heed/no/such/in.raw for reading failed: No such file or directory)")
    }

    @Test(arguments: ["", "{", "hw:99", "plughw:99,0", "plug:", "hw:0,abc", "default:CARD=heednosuchcard", "a b \" }"])
    func badDeviceNamesThrowInsteadOfCrashing(name: String) {
        let error = #expect(throws: AudioError.self) { try ALSACapture(device: name) }
        #expect(error?.source == name)
        #expect([.deviceNotFound, .device].contains(error?.code))
    }

    @Test func aBusyDeviceSaysWhatMayHoldIt() {
        // No file-backed PCM can be busy: this checks the text for EBUSY from snd_pcm_open.
        let error = PCMDevice.openingError(name: "hw:0", stream: .capture, code: -EBUSY, messages: [])
        #expect(error.code == .deviceBusy)
        #expect(error.description.hasPrefix("hw:0: the audio capture device is busy: another program is using it"))
        #expect(error.reason.contains("--device pulse or --device default"))
    }

    @Test func otherOpeningFailuresCarryALSAsText() {
        let denied = PCMDevice.openingError(name: "hw:0", stream: .playback, code: -EACCES, messages: ["cannot open /dev/snd/pcmC0D0p"])
        #expect(denied.code == .device)
        #expect(denied.reason == "cannot open the audio playback device: Permission denied (ALSA: cannot open /dev/snd/pcmC0D0p). Is this user in the \"audio\" group?")

        let unparsable = #expect(throws: AudioError.self) { try ALSACapture(device: "mic", configuration: "pcm.mic { type") }
        #expect(unparsable?.code == .device)
        #expect(unparsable?.reason.hasPrefix("the ALSA configuration does not parse") == true)
    }

    // MARK: Playback

    @Test func playbackWritesExactlyTheSamples() throws {
        let fixture = try ALSAFixture()
        let output = fixture.path("out.raw")
        let first = ALSAFixture.tone(300, count: 3_333, rate: 16_000)
        let second = ALSAFixture.tone(500, count: 2_500, rate: 16_000)
        let playback = try ALSAPlayback(device: "speaker", configuration: ALSAFixture.playback("speaker", file: output))
        #expect(playback.name == "speaker")
        try playback.play(first, sampleRate: 16_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == ALSAFixture.rawBytes(first), "written once drained")
        try playback.play([], sampleRate: 16_000)
        try playback.play(second, sampleRate: 16_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == ALSAFixture.rawBytes(first + second))
        // Another rate reconfigures the PCM; the file PCM takes it as it is.
        let third = ALSAFixture.tone(700, count: 1_000, rate: 22_050)
        try playback.play(third, sampleRate: 22_050)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == ALSAFixture.rawBytes(first + second + third))
        #expect(playback.underruns == 0)
    }

    @Test func playbackAtAnotherRateIsResampledByALSA() throws {
        // The file PCM takes any rate itself; behind a `plug` fixed at 16 kHz, ALSA converts.
        let fixture = try ALSAFixture()
        let output = fixture.path("out.raw")
        let configuration = ALSAFixture.playback("raw", file: output)
            + "pcm.speaker { type plug  slave { pcm \"raw\"  rate 16000 } }\n"
        let playback = try ALSAPlayback(device: "speaker", configuration: configuration)
        try playback.play(ALSAFixture.tone(440, count: 22_050, rate: 22_050), sampleRate: 22_050)
        let written = try Data(contentsOf: URL(fileURLWithPath: output))
        let samples = littleEndianSamples(written[...])
        #expect(abs(samples.count - 16_000) < 200)
        #expect((435...445).contains(ALSAFixture.crossings(samples)))
    }

    // MARK: Files as sources

    @Test func fileSourceReturnsChunksThenTheEnd() throws {
        let fixture = try ALSAFixture()
        var wav = WAVBuilder()
        wav.samples = (0..<5_000).map { Int16($0 % 3_000) }
        let path = fixture.path("five-thousand.wav")
        try wav.data.write(to: URL(fileURLWithPath: path))

        let source = try FileAudioSource(path: path)
        #expect(source.name == path)
        #expect(source.sampleRate == 16_000)
        var chunks: [[Int16]] = []
        while true {
            let chunk = try source.read(maximumFrames: 1_600)
            if chunk.isEmpty { break }
            chunks.append(chunk)
        }
        #expect(chunks.map(\.count) == [1_600, 1_600, 1_600, 200])
        #expect(chunks.flatMap { $0 } == wav.samples)
        #expect(try source.read(maximumFrames: 1_600) == [], "the end stays the end")
    }

    @Test(arguments: [8_000, 44_100])
    func fileSourceResamplesTo16kHz(rate: Int) throws {
        let fixture = try ALSAFixture()
        var wav = WAVBuilder()
        wav.sampleRate = UInt32(rate)
        wav.samples = ALSAFixture.tone(440, count: rate, rate: rate)
        let path = fixture.path("tone-\(rate).wav")
        try wav.data.write(to: URL(fileURLWithPath: path))

        let source = try FileAudioSource(path: path)
        let samples = try read(source, count: 16_000, chunk: 4_096)
        #expect(samples == (try AudioFile.read(path).samples))
        #expect(try source.read(maximumFrames: 10) == [])
        #expect((438...442).contains(ALSAFixture.crossings(samples)))
    }

    @Test func fileSourceReadsRawAudioByExtension() throws {
        let fixture = try ALSAFixture()
        let samples: [Int16] = [5, -5, 300, -300, 32_767, -32_768]
        let path = try fixture.writeRaw(samples, to: "audio.raw")
        let source = try FileAudioSource(path: path)
        #expect(try source.read(maximumFrames: 100) == samples)

        let stereo = try FileAudioSource(path: path, format: .raw(sampleRate: 16_000, channels: 2))
        #expect(try stereo.read(maximumFrames: 100) == [0, 0, 0], "channels averaged")
    }

    @Test func fileSourceErrorsKeepTheByteOffset() throws {
        let fixture = try ALSAFixture()
        var wav = WAVBuilder()
        wav.declaredDataSize = 1_000
        let path = fixture.path("truncated.wav")
        try wav.data.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: AudioError.self) { try FileAudioSource(path: path) }
        #expect(error?.code == .truncated)
        #expect(error?.description == "\(path): the \"data\" chunk at byte 36 declares 1000 bytes but only 10 follow: the file is truncated")
        #expect(throws: AudioError(.unreadable, source: fixture.path("none.wav"), reason: "no such file")) {
            try FileAudioSource(path: fixture.path("none.wav"))
        }
    }

    @Test func fileSourceInRealTimeTakesAsLongAsTheAudio() throws {
        let fixture = try ALSAFixture()
        let path = try fixture.writeRaw(Array(repeating: 0, count: 8_000), to: "half-second.raw")
        let source = try FileAudioSource(path: path, realTime: true)
        let clock = ContinuousClock()
        let start = clock.now
        let samples = try read(source, count: 8_000, chunk: 1_600)
        let elapsed = clock.now - start
        #expect(samples.count == 8_000)
        // A lower bound only: the machine may be slow, never fast.
        #expect(elapsed >= .milliseconds(400), "0.5 s of audio took \(elapsed)")
    }

    // MARK: By name, from ~/.asoundrc

    /// The environment variable that makes this test binary, run as a child, run the by-name test.
    static let childDirectory = ProcessInfo.processInfo.environment["HEED_ALSA_CHILD_DIRECTORY"]

    @Test func devicesOpenByNameFromAsoundrcInHOME() throws {
        // ALSA reads `~/.asoundrc` once per process, through HOME: the test binary runs itself
        // with HOME set to a folder holding one, and only the test below.
        let fixture = try ALSAFixture()
        let samples = ALSAFixture.tone(200, count: 4_000, rate: 16_000)
        let infile = try fixture.writeRaw(samples, to: "in.raw")
        let asoundrc = ALSAFixture.capture("filein", infile: infile) + ALSAFixture.playback("fileout", file: fixture.path("out.raw"))
            + "pcm.!default { type asym  capture.pcm \"filein\"  playback.pcm \"fileout\" }\n"
        try asoundrc.write(to: fixture.directory.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)

        let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try #require(testBinary.hasSuffix(".xctest"), "runs the test binary again: \(testBinary)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: testBinary)
        process.arguments = ["--testing-library", "swift-testing", "--filter", "childOpensDevicesByName"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = fixture.directory.path
        environment["HEED_ALSA_CHILD_DIRECTORY"] = fixture.directory.path
        environment["ALSA_CONFIG_PATH"] = nil
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputText = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationStatus == 0, "\(outputText)\(errorText)")
        #expect(FileManager.default.fileExists(atPath: fixture.path("child-passed")), "the child ran the test: \(outputText)\(errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path("out.raw"))) == ALSAFixture.rawBytes(samples))
        #expect(!(outputText + errorText).contains("ALSA lib"), "ALSA printed nothing itself")
        #expect(!(outputText + errorText).contains("Unknown PCM"))
    }

    @Test(.enabled(if: ALSATests.childDirectory != nil, "runs in the child of devicesOpenByNameFromAsoundrcInHOME"))
    func childOpensDevicesByName() throws {
        let directory = try #require(Self.childDirectory)
        let expected = try AudioFile.read(directory + "/in.raw", format: .raw(sampleRate: 16_000)).samples

        let capture = try ALSACapture()
        #expect(capture.name == "default")
        let captured = try read(capture, count: expected.count, chunk: 1_024)
        #expect(captured == expected)

        let playback = try ALSAPlayback()
        try playback.play(captured, sampleRate: 16_000)

        #expect(throws: AudioError.self) { try ALSACapture(device: "heed-no-such-device") }
        try Data("passed".utf8).write(to: URL(fileURLWithPath: directory + "/child-passed"))
    }
}
