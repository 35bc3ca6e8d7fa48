public import HeedCore
public import Foundation

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
/// resampled to 16 kHz with a windowed-sinc filter (see ``Resampler``).
public enum AudioFile {
    /// Reads a file and converts it for recognition.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - format: ``AudioFileFormat/wav`` or ``AudioFileFormat/raw(sampleRate:channels:)``.
    /// - Returns: mono audio at ``AudioBuffer/recognitionSampleRate``.
    /// - Throws: ``AudioError`` naming the file and what is wrong, with the byte offset or field.
    public static func read(_ path: String, format: AudioFileFormat = .wav) throws(AudioError) -> AudioBuffer {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"
            throw AudioError(.unreadable, source: path, reason: reason)
        }
        return try decode(data, format: format, source: path)
    }

    /// Decodes bytes already in memory; `source` names them in errors.
    public static func decode(_ data: Data, format: AudioFileFormat, source: String) throws(AudioError) -> AudioBuffer {
        let interleaved: InterleavedPCM
        switch format.kind {
        case .wav:
            interleaved = try WAVParser(data: data, source: source).parse()
        case .raw(let sampleRate, let channels):
            guard sampleRate > 0, channels > 0 else {
                throw AudioError(.malformed, source: source, reason: "raw audio needs a positive rate and channel count")
            }
            guard !data.isEmpty else {
                throw AudioError(.empty, source: source, reason: "the file is empty (0 bytes)")
            }
            let frameBytes = 2 * channels
            guard data.count % frameBytes == 0 else {
                throw AudioError(
                    .truncated,
                    source: source,
                    reason: "raw S16LE audio ends mid-sample: \(data.count) bytes is not a multiple of \(frameBytes) (last frame starts at byte \(data.count - data.count % frameBytes))"
                )
            }
            interleaved = InterleavedPCM(samples: littleEndianSamples(data[...]), channels: channels, sampleRate: sampleRate)
        }
        let mono = AudioBuffer(samples: interleaved.downmixed(), sampleRate: interleaved.sampleRate)
        return Resampler.resample(mono, to: AudioBuffer.recognitionSampleRate)
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

/// Reads the chunks of a RIFF/WAVE file.
struct WAVParser {
    let data: Data
    let source: String

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

    func parse() throws(AudioError) -> InterleavedPCM {
        guard !data.isEmpty else { throw fail(.empty, "the file is empty (0 bytes)") }
        guard data.count >= 12 else {
            throw fail(.notWAV, "not a WAV file: \(data.count) bytes is shorter than a RIFF header (12 bytes)")
        }
        guard tag(at: 0) == "RIFF", tag(at: 8) == "WAVE" else {
            throw fail(.notWAV, "not a WAV file: bytes 0–11 are not \"RIFF....WAVE\" (use --raw --rate N for headerless audio)")
        }
        var offset = 12
        var format: (channels: Int, sampleRate: Int, bitsPerSample: Int)?
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
                return try samples(at: body, declaredSize: size, chunkOffset: offset, format: format)
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

    private func parseFormat(at body: Int, size: Int) throws(AudioError) -> (channels: Int, sampleRate: Int, bitsPerSample: Int) {
        guard size >= 16, body + 16 <= data.count else {
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

    private func samples(
        at body: Int,
        declaredSize: Int,
        chunkOffset: Int,
        format: (channels: Int, sampleRate: Int, bitsPerSample: Int)
    ) throws(AudioError) -> InterleavedPCM {
        let available = data.count - body
        // 0xFFFFFFFF (and 0) is what streaming writers leave when they cannot seek back.
        let size = declaredSize == 0xFFFF_FFFF ? available : declaredSize
        guard size <= available else {
            throw fail(.truncated, "the \"data\" chunk at byte \(chunkOffset) declares \(declaredSize) bytes but only \(available) follow: the file is truncated")
        }
        let frameBytes = 2 * format.channels
        let usable = size - size % frameBytes
        guard usable > 0 else { throw fail(.empty, "the \"data\" chunk at byte \(chunkOffset) holds no audio") }
        let bytes = data[(data.startIndex + body)..<(data.startIndex + body + usable)]
        return InterleavedPCM(samples: littleEndianSamples(bytes), channels: format.channels, sampleRate: format.sampleRate)
    }
}
