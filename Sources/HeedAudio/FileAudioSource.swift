public import HeedCore
import Foundation

/// An audio file read as if it were a microphone: 16 kHz mono chunks, then the end.
///
/// The file is read whole through ``AudioFile`` (so its errors name the byte or field at
/// fault) and resampled to 16 kHz. With `realTime`, each read waits until the audio it
/// returns would have been heard, as a live device delivers it.
///
/// Not `Sendable`: one reader owns a source.
public final class FileAudioSource: AudioSource {
    /// Always ``AudioBuffer/recognitionSampleRate``.
    public let sampleRate = AudioBuffer.recognitionSampleRate

    /// The file's path.
    public let name: String

    /// The length of the audio in seconds.
    public let durationSeconds: Double

    private let samples: [Int16]
    private let realTime: Bool
    /// The next sample to return.
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
        let audio = try AudioFile.read(path, format: format)
        self.name = path
        self.samples = audio.samples
        self.durationSeconds = audio.duration
        self.realTime = realTime
    }

    /// Returns the next `maximumFrames` samples or fewer; with `realTime`, not before the
    /// audio clock has reached their end.
    ///
    /// - Parameter maximumFrames: a positive number of samples.
    /// - Returns: the samples, or an empty array at the end of the file (and after it).
    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        precondition(maximumFrames > 0, "maximumFrames must be positive")
        let end = min(samples.count, offset + maximumFrames)
        guard offset < end else { return [] }
        let chunk = Array(samples[offset..<end])
        offset = end
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
