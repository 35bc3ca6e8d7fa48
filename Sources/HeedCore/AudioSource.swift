/// A stream of 16 kHz mono signed 16-bit samples, read in chunks: a microphone, or a file
/// played as if it were one.
///
/// Not `Sendable`: one reader owns a source (the listener reads it on a thread of its own,
/// because reading a device blocks).
public protocol AudioSource: AnyObject {
    /// Samples per second of what ``read(maximumFrames:)`` returns.
    var sampleRate: Int { get }

    /// A name for messages: the device name or the file path.
    var name: String { get }

    /// Reads up to `maximumFrames` samples, waiting until at least one is available.
    ///
    /// - Returns: The samples; an empty array only at the end of a finite source.
    /// - Throws: ``AudioError`` when the device or file fails and cannot be recovered.
    func read(maximumFrames: Int) throws(AudioError) -> [Int16]

    /// Drops what was heard during the last `seconds` while nobody read: what a microphone
    /// captured while Heed was speaking. A file skips that much audio; a device drops its buffer.
    ///
    /// - Throws: ``AudioError`` when reading fails.
    func discard(seconds: Double) throws(AudioError)

    /// Whether audio comes no faster than it is spoken (a microphone, a file read in real time):
    /// a reader that stops reading for a while falls behind it. A file read as fast as possible
    /// is not; nothing is lost by making it wait.
    var isPaced: Bool { get }
}

extension AudioSource {
    /// Not paced, unless the source says so.
    public var isPaced: Bool { false }

    /// Reads and drops `seconds` of audio: right for a source that delivers audio only as it
    /// is read (a file).
    ///
    /// - Throws: ``AudioError`` when reading fails.
    public func discard(seconds: Double) throws(AudioError) {
        var remaining = Int(seconds * Double(sampleRate))
        while remaining > 0 {
            let chunk = try read(maximumFrames: min(remaining, 1024))
            if chunk.isEmpty { return }
            remaining -= chunk.count
        }
    }
}

/// Somewhere to play audio: a loudspeaker, or a file standing in for one.
public protocol AudioSink: AnyObject {
    /// Plays mono samples and returns when they have been played.
    ///
    /// - Throws: ``AudioError`` when the device fails.
    func play(_ samples: [Int16], sampleRate: Int) throws(AudioError)
}
