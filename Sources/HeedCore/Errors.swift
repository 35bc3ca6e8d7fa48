/// A failure of the speech recognizer: its model, grammar, dictionary or decoding.
public struct RecognizerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The model or decoder settings could not be loaded.
        public static let decoderInitFailed = Code("decoderInitFailed")
        /// The grammar does not parse or compile.
        public static let grammarInvalid = Code("grammarInvalid")
        /// The grammar uses words that have no pronunciation.
        public static let wordsMissing = Code("wordsMissing")
        /// The audio does not suit the decoder (for example its sample rate).
        public static let audioUnsupported = Code("audioUnsupported")
        /// Decoding failed.
        public static let decodeFailed = Code("decodeFailed")

        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence for the user that says what went wrong and where.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A failure to read audio: what is wrong and in which file, at which byte or field.
public struct AudioError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file cannot be opened or read.
        public static let unreadable = Code("unreadable")
        /// The file has no audio at all.
        public static let empty = Code("empty")
        /// The file is not a RIFF/WAVE file.
        public static let notWAV = Code("notWAV")
        /// The WAV file's audio is not 16-bit integer PCM.
        public static let unsupportedEncoding = Code("unsupportedEncoding")
        /// The file ends before its header says it should.
        public static let truncated = Code("truncated")
        /// A header field has an impossible value.
        public static let malformed = Code("malformed")
        /// The capture device failed.
        public static let device = Code("device")
        /// The audio device named does not exist (ALSA's "Unknown PCM", `ENOENT`).
        public static let deviceNotFound = Code("deviceNotFound")
        /// The audio device is in use by another program (`EBUSY`).
        public static let deviceBusy = Code("deviceBusy")

        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// The file or device concerned.
    public var source: String
    /// What is wrong, naming the byte offset or field where it applies.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, source: String, reason: String) {
        self.code = code
        self.source = source
        self.reason = reason
    }

    public var description: String { "\(source): \(reason)" }
}
