import Foundation
import HeedAudio
import HeedCore
import Synchronization
import Testing
import HeedTesting

@Suite("Audio files")
struct AudioFileTests {
    private func decode(_ builder: WAVBuilder, name: String = "test.wav") throws(AudioError) -> AudioBuffer {
        try AudioFile.decode(builder.data, format: .wav, source: name)
    }

    private func failure(_ builder: WAVBuilder) -> AudioError? {
        failure(builder.data)
    }

    private func failure(_ data: Data, format: AudioFileFormat = .wav) -> AudioError? {
        do {
            _ = try AudioFile.decode(data, format: format, source: "bad.wav")
            return nil
        } catch {
            return error
        }
    }

    @Test func readsMono16BitPCM() throws {
        let audio = try decode(WAVBuilder())
        #expect(audio.samples == [0, 1000, -1000, 32767, -32768])
        #expect(audio.sampleRate == 16_000)
    }

    @Test func skipsUnknownChunksWithPadding() throws {
        var builder = WAVBuilder()
        builder.extraChunk = true
        #expect(try decode(builder).samples == builder.samples)
    }

    @Test func averagesStereoToMono() throws {
        var builder = WAVBuilder()
        builder.channels = 2
        builder.samples = [100, 300, -200, -400, 32767, 32767]
        #expect(try decode(builder).samples == [200, -300, 32767])
    }

    @Test func resamplesOtherRatesTo16kHz() throws {
        // One second of a 440 Hz tone at 44.1 kHz keeps its length and its pitch.
        var builder = WAVBuilder()
        builder.sampleRate = 44_100
        builder.samples = (0..<44_100).map { Int16(10_000 * sin(2 * Double.pi * 440 * Double($0) / 44_100)) }
        let audio = try decode(builder)
        #expect(audio.sampleRate == 16_000)
        #expect(audio.samples.count == 16_000)
        let crossings = zip(audio.samples, audio.samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect((438...442).contains(crossings))
        let peak = audio.samples[1000..<15_000].map { abs(Int($0)) }.max() ?? 0
        #expect((9_500...10_500).contains(peak))
    }

    @Test func readsRawS16LE() throws {
        var data = Data()
        for sample: Int16 in [1, -2, 3, -4] { data.append(le: UInt16(bitPattern: sample)) }
        let audio = try AudioFile.decode(data, format: .raw(sampleRate: 16_000), source: "a.raw")
        #expect(audio.samples == [1, -2, 3, -4])
        let stereo = try AudioFile.decode(data, format: .raw(sampleRate: 16_000, channels: 2), source: "a.raw")
        #expect(stereo.samples == [0, 0])
    }

    @Test func refusesAnEmptyFile() {
        let error = failure(Data())
        #expect(error?.code == .empty)
        #expect(error?.description == "bad.wav: the file is empty (0 bytes)")
    }

    @Test func refusesAFileThatIsNotWAV() {
        let error = failure(Data("hello, this is text and not audio".utf8))
        #expect(error?.code == .notWAV)
        #expect(error?.description.contains("bytes 0–11") == true)
        #expect(failure(Data("RIFF".utf8))?.code == .notWAV)
    }

    @Test func refusesFloatAndOtherEncodings() {
        var float = WAVBuilder()
        float.formatTag = 3
        float.bitsPerSample = 32
        let floatError = failure(float)
        #expect(floatError?.code == .unsupportedEncoding)
        #expect(floatError?.description.contains("32-bit float, not integer PCM (field audioFormat at byte 20)") == true)

        var eightBit = WAVBuilder()
        eightBit.bitsPerSample = 8
        #expect(failure(eightBit)?.description.contains("8-bit PCM, only 16-bit is read (field bitsPerSample at byte 34)") == true)
    }

    @Test func refusesATruncatedFile() {
        var builder = WAVBuilder()
        builder.declaredDataSize = 1000
        let truncated = failure(builder)
        #expect(truncated?.code == .truncated)
        #expect(truncated?.description == "bad.wav: the \"data\" chunk at byte 36 declares 1000 bytes but only 10 follow: the file is truncated")

        let headerOnly = failure(WAVBuilder().data.prefix(30))
        #expect(headerOnly?.code == .truncated)
        #expect(headerOnly?.description.contains("\"fmt \" chunk at byte 12 is cut short") == true)

        let noData = failure(WAVBuilder().data.prefix(36))
        #expect(noData?.description == "bad.wav: the file ends at byte 36 before a \"data\" chunk")
    }

    @Test func refusesAnEmptyDataChunk() {
        var builder = WAVBuilder()
        builder.samples = []
        #expect(failure(builder)?.code == .empty)
    }

    @Test func refusesImpossibleHeaderFields() {
        var builder = WAVBuilder()
        builder.channels = 0
        #expect(failure(builder)?.description.contains("0 channels (field numChannels at byte 22)") == true)
        builder.channels = 1
        builder.sampleRate = 12
        #expect(failure(builder)?.description.contains("field sampleRate at byte 24") == true)
    }

    @Test func refusesRawAudioThatEndsMidSample() {
        let error = failure(Data([1, 2, 3]), format: .raw(sampleRate: 16_000))
        #expect(error?.code == .truncated)
        #expect(error?.description.contains("3 bytes is not a multiple of 2") == true)
    }

    @Test func namesAMissingFile() {
        #expect(throws: AudioError(.unreadable, source: "/no/such/file.wav", reason: "no such file")) {
            try AudioFile.read("/no/such/file.wav")
        }
    }
}

@Suite("Audio files, streamed")
struct AudioStreamTests {
    /// The windowed-sinc resampler as it was written before streaming: every output sample from the whole input.
    static func reference(_ samples: [Int16], from rate: Int, to target: Int) -> [Int16] {
        let ratio = Double(target) / Double(rate)
        let cutoff = 0.95 * min(1, ratio)
        let halfWidth = 16.0 / cutoff
        let input = samples.map(Double.init)
        return (0..<Int((Double(input.count) * ratio).rounded(.down))).map { index in
            let center = Double(index) / ratio
            let first = max(0, Int((center - halfWidth).rounded(.up)))
            let last = min(input.count - 1, Int((center + halfWidth).rounded(.down)))
            var sum = 0.0
            if first <= last {
                for k in first...last {
                    let x = Double(k) - center
                    let window = 0.5 + 0.5 * cos(Double.pi * x / halfWidth)
                    let argument = Double.pi * cutoff * x
                    sum += input[k] * cutoff * (abs(argument) < 1e-9 ? 1 : sin(argument) / argument) * window
                }
            }
            return Int16(max(-32768, min(32767, sum.rounded())))
        }
    }

    @Test(arguments: [8_000, 22_050, 44_100, 48_000])
    func streamingResamplingMatchesTheWholeAtOnce(rate: Int) {
        var generator = SeededGenerator(seed: UInt64(rate))
        let samples = (0..<(rate / 2)).map { _ in Int16.random(in: -20_000...20_000, using: &generator) }
        var stream = Resampler.Stream(from: rate, to: 16_000)
        let output = inRandomChunks(samples, largest: 3_000, using: &generator) { stream.process($0) } + stream.finish()
        #expect(output == Self.reference(samples, from: rate, to: 16_000))
    }

    /// A pipe delivers the first blocks while its writer is still writing: the reader does not
    /// wait for the end. The writer sends the header and the first second, and sends the rest only
    /// once the reader has its first second (or after 30 s, when a reader waiting for the end
    /// would have given up nothing before it).
    @Test func aPipeIsReadAsItArrives() throws {
        let folder = try TemporaryFolder.make()
        let fifo = folder.appendingPathComponent("live.wav").path
        #expect(mkfifo(fifo, 0o600) == 0)
        var wav = WAVBuilder()
        wav.samples = (0..<32_000).map { Int16($0 % 2_000) }
        wav.declaredDataSize = 0xFFFF_FFFF
        let bytes = wav.data
        let firstSecond = bytes.count - 16_000 * 2
        let readFirst = DispatchSemaphore(value: 0)
        let toldInTime = Mutex(false)
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            handle.write(bytes.prefix(firstSecond))
            let told = readFirst.wait(timeout: .now() + 30) == .success
            toldInTime.withLock { $0 = told }
            handle.write(bytes.dropFirst(firstSecond))
            try? handle.close()
        }
        writer.start()
        let source = try FileAudioSource(path: fifo)
        let first = try source.read(maximumFrames: 16_000)
        readFirst.signal()
        #expect(first == Array(wav.samples.prefix(16_000)))
        var rest: [Int16] = []
        while true {
            let chunk = try source.read(maximumFrames: 4_000)
            if chunk.isEmpty { break }
            rest += chunk
        }
        #expect(rest == Array(wav.samples.dropFirst(16_000)))
        #expect(toldInTime.withLock { $0 }, "the first second was read only after the writer stopped waiting")
    }

    @Test func aFormatChunkOfSizeZeroSaysSo() throws {
        var data = WAVBuilder().data
        // The "fmt " chunk's size field is bytes 16–19.
        data.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        let error = try #require(throws: AudioError.self) { try AudioFile.decode(data, format: .wav, source: "zero.wav") }
        #expect(error.description == "zero.wav: the \"fmt \" chunk at byte 12 declares 0 bytes; a PCM format takes at least 16 (field chunkSize at byte 16)")
    }
}
