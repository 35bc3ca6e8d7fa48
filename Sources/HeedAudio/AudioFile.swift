public import HeedCore
public import Foundation
import Glibc

/// How the bytes of an audio file are laid out.
public struct AudioFileFormat: Sendable, Hashable {
    enum Kind: Hashable {
        case wav
        case raw(sampleRate: Int, channels: Int)
    }

    let kind: Kind

    /// A RIFF/WAVE file with 16-bit integer PCM, any rate, one or more channels.
    public static let wav = AudioFileFormat(kind: .wav)

    /// Headerless signed 16-bit little-endian samples (S16LE), interleaved when `channels` > 1.
    public static func raw(sampleRate: Int, channels: Int = 1) -> AudioFileFormat {
        AudioFileFormat(kind: .raw(sampleRate: sampleRate, channels: channels))
    }
}

/// Reads audio files into mono 16 kHz buffers, the form the recognizer takes.
///
/// Stereo and multi-channel audio is averaged to mono. Other sample rates are
/// resampled to 16 kHz with a windowed-sinc filter (see ``Resampler``). Both go through
/// ``AudioFileReader``, which reads a block at a time.
public enum AudioFile {
    /// Reads a file and converts it for recognition.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - format: ``AudioFileFormat/wav`` or ``AudioFileFormat/raw(sampleRate:channels:)``.
    /// - Returns: mono audio at ``AudioBuffer/recognitionSampleRate``.
    /// - Throws: ``AudioError`` naming the file and what is wrong, with the byte offset or field.
    public static func read(_ path: String, format: AudioFileFormat = .wav) throws(AudioError) -> AudioBuffer {
        try AudioFileReader(path: path, format: format).readAll()
    }

    /// Decodes bytes already in memory; `source` names them in errors.
    public static func decode(_ data: Data, format: AudioFileFormat, source: String) throws(AudioError) -> AudioBuffer {
        try AudioFileReader(bytes: MemoryBytes(data: data), format: format, source: source).readAll()
    }
}

/// Where an ``AudioFileReader`` gets its bytes: an open file (or pipe), or memory.
protocol ByteSource: AnyObject {
    /// The total number of bytes when known up front (a regular file, memory); `nil` for a pipe.
    var size: Int? { get }
    /// Up to `count` bytes; fewer only at the end.
    func read(_ count: Int) throws(AudioError) -> Data
}

/// The bytes of a file descriptor, read as they are asked for.
final class FileBytes: ByteSource {
    private let descriptor: Int32
    private let path: String
    let size: Int?

    init(path: String) throws(AudioError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AudioError(.unreadable, source: path, reason: errno == ENOENT ? "no such file" : "cannot be read (\(String(cString: strerror(errno))))")
        }
        var information = stat()
        guard fstat(descriptor, &information) == 0, information.st_mode & S_IFMT != S_IFDIR else {
            close(descriptor)
            throw AudioError(.unreadable, source: path, reason: "cannot be read (it is a directory)")
        }
        self.descriptor = descriptor
        self.path = path
        self.size = information.st_mode & S_IFMT == S_IFREG ? Int(information.st_size) : nil
    }

    deinit { close(descriptor) }

    func read(_ count: Int) throws(AudioError) -> Data {
        var data = Data(count: count)
        var filled = 0
        while filled < count {
            let got = data.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, count - filled) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw AudioError(.unreadable, source: path, reason: "cannot be read (\(String(cString: strerror(errno))))") }
            if got == 0 { break }
            filled += got
        }
        data.count = filled
        return data
    }
}

/// Bytes already in memory.
final class MemoryBytes: ByteSource {
    private let data: Data
    private var offset = 0
    var size: Int? { data.count }

    init(data: Data) { self.data = data }

    func read(_ count: Int) throws(AudioError) -> Data {
        let end = min(data.count, offset + count)
        defer { offset = end }
        return Data(data[(data.startIndex + offset)..<(data.startIndex + end)])
    }
}

/// An audio file read a block at a time: opening it reads only its header, and each
/// ``read(maximumFrames:)`` reads only the bytes it needs, so an hour of audio takes no more
/// memory than a second of it.
///
/// Not `Sendable`: one reader owns it.
public final class AudioFileReader {
    private let bytes: any ByteSource
    private let source: String
    /// The file's samples a second and channels.
    public let fileSampleRate: Int
    public let channels: Int
    /// The bytes of audio still to read, when the header or the file size says; `nil` until the end.
    private var remaining: Int?
    private var resampler: Resampler.Stream
    /// Samples converted but not yet returned.
    private var pending: [Int16] = []
    private var pendingStart = 0
    private var ended = false

    /// Opens a file and reads its header.
    /// - Throws: ``AudioError`` naming the file and what is wrong, with the byte offset or field.
    public convenience init(path: String, format: AudioFileFormat) throws(AudioError) {
        try self.init(bytes: try FileBytes(path: path), format: format, source: path)
    }

    init(bytes: any ByteSource, format: AudioFileFormat, source: String) throws(AudioError) {
        self.bytes = bytes
        self.source = source
        switch format.kind {
        case .wav:
            let header = try Self.readHeader(bytes, source: source)
            fileSampleRate = header.format.sampleRate
            channels = header.format.channels
            remaining = header.audioBytes
            pending = littleEndianSamples(header.leftover[...])
        case .raw(let sampleRate, let channels):
            guard sampleRate > 0, channels > 0 else {
                throw AudioError(.malformed, source: source, reason: "raw audio needs a positive rate and channel count")
            }
            fileSampleRate = sampleRate
            self.channels = channels
            let frameBytes = 2 * channels
            if let size = bytes.size {
                guard size > 0 else { throw AudioError(.empty, source: source, reason: "the file is empty (0 bytes)") }
                guard size % frameBytes == 0 else {
                    throw AudioError(
                        .truncated, source: source,
                        reason: "raw S16LE audio ends mid-sample: \(size) bytes is not a multiple of \(frameBytes) (last frame starts at byte \(size - size % frameBytes))"
                    )
                }
                remaining = size
            }
        }
        resampler = Resampler.Stream(from: fileSampleRate, to: AudioBuffer.recognitionSampleRate)
        pending = resampler.process(InterleavedPCM(samples: pending, channels: channels, sampleRate: fileSampleRate).downmixed())
    }

    /// The next `maximumFrames` samples (16 kHz mono) or fewer; an empty array at the end.
    /// From a pipe it waits for no more than those samples: a file is read at least 4096 frames
    /// at a time, a pipe only as far as the caller asked (its writer may not have sent more yet).
    /// - Throws: ``AudioError`` when reading fails.
    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        precondition(maximumFrames > 0, "maximumFrames must be positive")
        while pending.count - pendingStart < maximumFrames, !ended {
            let missing = maximumFrames - (pending.count - pendingStart)
            try fill(frames: bytes.size == nil ? missing : max(missing, 4096))
        }
        let end = min(pending.count, pendingStart + maximumFrames)
        let chunk = Array(pending[pendingStart..<end])
        pendingStart = end
        if pendingStart > 65_536 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return chunk
    }

    /// Everything left, as one buffer.
    public func readAll() throws(AudioError) -> AudioBuffer {
        while !ended { try fill(frames: 1 << 18) }
        return AudioBuffer(samples: Array(pending[pendingStart...]))
    }

    /// Reads about `frames` output frames' worth of the file and converts them.
    private func fill(frames: Int) throws(AudioError) {
        let frameBytes = 2 * channels
        let wanted = max(1, Int(Double(frames) * Double(fileSampleRate) / Double(AudioBuffer.recognitionSampleRate))) * frameBytes
        let count = remaining.map { min($0, wanted) } ?? wanted
        var data = count > 0 ? try bytes.read(count) : Data()
        data.count -= data.count % frameBytes
        if let left = remaining { remaining = left - data.count }
        if data.isEmpty {
            ended = true
            pending += resampler.finish()
            return
        }
        let interleaved = InterleavedPCM(samples: littleEndianSamples(data[...]), channels: channels, sampleRate: fileSampleRate)
        pending += resampler.process(interleaved.downmixed())
    }

    /// Reads the header a block at a time until the `data` chunk, and what follows it in the last block.
    private static func readHeader(
        _ bytes: any ByteSource, source: String
    ) throws(AudioError) -> (format: WAVParser.Format, audioBytes: Int?, leftover: Data) {
        let block = 4096
        var prefix = try bytes.read(block)
        // The whole size: the file's, or a pipe's once it has ended.
        var wholeSize = bytes.size ?? (prefix.count < block ? prefix.count : nil)
        while true {
            do throws(AudioError) {
                let header = try WAVParser(data: prefix, source: source, fileSize: wholeSize).header()
                let frameBytes = 2 * header.format.channels
                let audioBytes = header.size.map { $0 - $0 % frameBytes }
                guard audioBytes.map({ $0 > 0 }) ?? true else {
                    throw AudioError(.empty, source: source, reason: "the \"data\" chunk at byte \(header.body - 8) holds no audio")
                }
                var leftover = Data(prefix[(prefix.startIndex + header.body)...])
                if let audioBytes, leftover.count > audioBytes { leftover.count = audioBytes }
                leftover.count -= leftover.count % frameBytes
                return (header.format, audioBytes.map { $0 - leftover.count }, leftover)
            } catch where error.code == .truncated && wholeSize.map({ prefix.count < $0 }) ?? true {
                // The header goes on past what was read: read as much again.
                let wanted = prefix.count
                let more = try bytes.read(wanted)
                prefix.append(more)
                if more.count < wanted, bytes.size == nil { wholeSize = prefix.count }
            }
        }
    }
}

/// 16-bit samples as stored, channels interleaved.
struct InterleavedPCM {
    var samples: [Int16]
    var channels: Int
    var sampleRate: Int

    /// The channel average, one sample per frame.
    func downmixed() -> [Int16] {
        guard channels > 1 else { return samples }
        let frames = samples.count / channels
        return (0..<frames).map { frame in
            var sum = 0
            for channel in 0..<channels { sum += Int(samples[frame * channels + channel]) }
            return Int16(sum / channels)
        }
    }
}

func littleEndianSamples(_ bytes: Data.SubSequence) -> [Int16] {
    let count = bytes.count / 2
    var samples = [Int16](repeating: 0, count: count)
    samples.withUnsafeMutableBytes { destination in
        _ = bytes.prefix(count * 2).copyBytes(to: destination)
    }
    return samples.map { Int16(littleEndian: $0) }
}

/// Reads the chunks of a RIFF/WAVE file's header, up to its `data` chunk.
struct WAVParser {
    typealias Format = (channels: Int, sampleRate: Int, bitsPerSample: Int)

    /// The start of the file (at least its header, when the header is whole).
    let data: Data
    let source: String
    /// The file's whole size, when known; `nil` for a pipe.
    let fileSize: Int?

    private func fail(_ code: AudioError.Code, _ reason: String) -> AudioError {
        AudioError(code, source: source, reason: reason)
    }

    private func uint32(at offset: Int) -> UInt32 {
        let base = data.startIndex + offset
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[base + $1]) << (8 * UInt32($1)) }
    }

    private func uint16(at offset: Int) -> UInt16 {
        let base = data.startIndex + offset
        return UInt16(data[base]) | UInt16(data[base + 1]) << 8
    }

    private func tag(at offset: Int) -> String {
        let base = data.startIndex + offset
        return String(decoding: data[base..<base + 4], as: UTF8.self)
    }

    /// The format, where the audio starts, and how many bytes of it there are (`nil`: up to the
    /// end of a pipe whose writer could not say).
    /// - Throws: ``AudioError``; `truncated` when `data` ends inside the header.
    func header() throws(AudioError) -> (format: Format, body: Int, size: Int?) {
        guard !data.isEmpty else { throw fail(.empty, "the file is empty (0 bytes)") }
        guard data.count >= 12 else {
            throw fail(.notWAV, "not a WAV file: \(data.count) bytes is shorter than a RIFF header (12 bytes)")
        }
        guard tag(at: 0) == "RIFF", tag(at: 8) == "WAVE" else {
            throw fail(.notWAV, "not a WAV file: bytes 0–11 are not \"RIFF....WAVE\" (use --raw --rate N for headerless audio)")
        }
        var offset = 12
        var format: Format?
        while offset + 8 <= data.count {
            let id = tag(at: offset)
            let size = Int(uint32(at: offset + 4))
            let body = offset + 8
            switch id {
            case "fmt ":
                format = try parseFormat(at: body, size: size)
            case "data":
                guard let format else {
                    throw fail(.malformed, "the \"data\" chunk at byte \(offset) comes before any \"fmt \" chunk")
                }
                // 0xFFFFFFFF (and 0) is what streaming writers leave when they cannot seek back.
                let unknown = size == 0xFFFF_FFFF
                if let fileSize {
                    let available = fileSize - body
                    let declared = unknown ? available : size
                    guard declared <= available else {
                        throw fail(.truncated, "the \"data\" chunk at byte \(offset) declares \(size) bytes but only \(available) follow: the file is truncated")
                    }
                    return (format, body, declared)
                }
                return (format, body, unknown ? nil : size)
            default:
                break
            }
            offset = body + size + size % 2  // chunks are padded to an even length
        }
        if format == nil {
            throw fail(.truncated, "the file ends at byte \(data.count) before a \"fmt \" chunk")
        }
        throw fail(.truncated, "the file ends at byte \(data.count) before a \"data\" chunk")
    }

    private func parseFormat(at body: Int, size: Int) throws(AudioError) -> Format {
        guard size >= 16 else {
            throw fail(.malformed, "the \"fmt \" chunk at byte \(body - 8) declares \(size) bytes; a PCM format takes at least 16 (field chunkSize at byte \(body - 4))")
        }
        guard body + 16 <= data.count else {
            throw fail(.truncated, "the \"fmt \" chunk at byte \(body - 8) is cut short (\(max(0, data.count - body)) of 16 bytes)")
        }
        var formatTag = uint16(at: body)
        let channels = Int(uint16(at: body + 2))
        let sampleRate = Int(uint32(at: body + 4))
        let bitsPerSample = Int(uint16(at: body + 14))
        if formatTag == 0xFFFE, size >= 40, body + 26 <= data.count {
            formatTag = uint16(at: body + 24)  // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID's first two bytes
        }
        guard formatTag == 1 else {
            let name = [3: "32-bit float", 6: "A-law", 7: "µ-law", 2: "ADPCM", 0x55: "MP3"][Int(formatTag)] ?? "format tag \(formatTag)"
            throw fail(.unsupportedEncoding, "audio is \(name), not integer PCM (field audioFormat at byte \(body)); convert it with: sox IN -b 16 -e signed-integer OUT.wav")
        }
        guard bitsPerSample == 16 else {
            throw fail(.unsupportedEncoding, "audio is \(bitsPerSample)-bit PCM, only 16-bit is read (field bitsPerSample at byte \(body + 14)); convert it with: sox IN -b 16 OUT.wav")
        }
        guard channels > 0 else { throw fail(.malformed, "0 channels (field numChannels at byte \(body + 2))") }
        guard sampleRate >= 4000, sampleRate <= 384_000 else {
            throw fail(.malformed, "sample rate \(sampleRate) Hz is out of range (field sampleRate at byte \(body + 4))")
        }
        return (channels, sampleRate, bitsPerSample)
    }
}

extension AudioBuffer {
    /// The buffer as a canonical 16-bit mono WAV file.
    public var wavData: Data {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + samples.count * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(1))
        append(UInt32(sampleRate))
        append(UInt32(sampleRate * 2))
        append(UInt16(2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        return data
    }
}
