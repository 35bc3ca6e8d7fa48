public import HeedCore
import Foundation

/// An audio file read as if it were a microphone: 16 kHz mono chunks, then the end.
///
/// The file is read a block at a time through ``AudioFileReader`` (its errors name the byte or
/// field at fault; an hour of audio takes the memory of a block) and resampled to 16 kHz. It may
/// be a pipe. With `realTime`, each read waits until the audio it returns would have been
/// heard, as a live device delivers it.
///
/// Not `Sendable`: one reader owns a source.
public final class FileAudioSource: AudioSource {
    /// Always ``AudioBuffer/recognitionSampleRate``.
    public let sampleRate = AudioBuffer.recognitionSampleRate

    /// The file's path.
    public let name: String

    private let reader: AudioFileReader
    private let realTime: Bool
    /// Read in real time, the file is paced as a microphone is.
    public var isPaced: Bool { realTime }
    /// The samples returned so far.
    private var offset = 0
    /// When the first read happened: the audio clock's zero.
    private var started: ContinuousClock.Instant?

    /// Reads a WAV or raw S16LE file (via ``AudioFile``), resampled to 16 kHz mono.
    ///
    /// A name ending in `.raw`, `.pcm`, `.s16` or `.s16le` is read as headerless 16 kHz mono
    /// S16LE; anything else as WAV.
    /// - Parameters:
    ///   - path: the file.
    ///   - realTime: pace reads to the audio clock (as a microphone would deliver them).
    /// - Throws: ``AudioError`` naming the file and what is wrong, with the byte offset or field.
    public convenience init(path: String, realTime: Bool = false) throws(AudioError) {
        let rawExtensions: Set<String> = ["raw", "pcm", "s16", "s16le"]
        let isRaw = rawExtensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased())
        try self.init(path: path, format: isRaw ? .raw(sampleRate: AudioBuffer.recognitionSampleRate) : .wav, realTime: realTime)
    }

    /// Reads an audio file in the format given, resampled to 16 kHz mono.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - format: ``AudioFileFormat/wav`` or ``AudioFileFormat/raw(sampleRate:channels:)``.
    ///   - realTime: pace reads to the audio clock (as a microphone would deliver them).
    /// - Throws: ``AudioError`` naming the file and what is wrong, with the byte offset or field.
    public init(path: String, format: AudioFileFormat, realTime: Bool = false) throws(AudioError) {
        self.reader = try AudioFileReader(path: path, format: format)
        self.name = path
        self.realTime = realTime
    }

    /// Returns the next `maximumFrames` samples or fewer; with `realTime`, not before the
    /// audio clock has reached their end.
    ///
    /// - Parameter maximumFrames: a positive number of samples.
    /// - Returns: the samples, or an empty array at the end of the file (and after it).
    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        precondition(maximumFrames > 0, "maximumFrames must be positive")
        let chunk = try reader.read(maximumFrames: maximumFrames)
        guard !chunk.isEmpty else { return [] }
        offset += chunk.count
        let end = offset
        if realTime {
            let clock = ContinuousClock()
            let start = started ?? clock.now
            started = start
            let due = start + .microseconds(Int64(end) * 1_000_000 / Int64(sampleRate))
            let wait = clock.now.duration(to: due)
            if wait > .zero {
                let (seconds, attoseconds) = wait.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
        }
        return chunk
    }
}
