public import Foundation
import Glibc

/// Version 1 of the wire protocol of `heed serve`: JSON objects, one a line, both ways.
///
/// See docs/CLIENTS.md for the whole protocol and a transcript.
public enum HeedProtocol {
    /// The protocol version this library speaks.
    public static let version = 1
    /// The longest line either side accepts, in bytes (1 MiB), without its newline.
    public static let maximumLineLength = 1 << 20
    /// The default socket: `$XDG_RUNTIME_DIR/heed/heed.sock`, or `/run/user/UID/heed/heed.sock`
    /// when the variable is unset.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        runtimeFolder(environment: environment) + "/heed.sock"
    }

    /// Heed's runtime folder: `$XDG_RUNTIME_DIR/heed`, or `/run/user/UID/heed` when the variable
    /// is unset. The socket, hand-off results and microphone claims live there.
    public static func runtimeFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/run/user/\(getuid())"
        return runtime + "/heed"
    }

    /// Where the service leaves an app's last hand-off dictation (``DictationRecord``):
    /// `$XDG_RUNTIME_DIR/heed/dictation/APP-ID/result.json`.
    public static func dictationResultPath(appID: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let socket = defaultSocketPath(environment: environment)
        return (socket as NSString).deletingLastPathComponent + "/dictation/\(appID)/result.json"
    }
}

/// A message's id: the client chooses it (a string or an integer) and every reply echoes it.
public enum MessageID: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case number(Int)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        }
    }

    public var description: String {
        switch self {
        case .string(let text): text
        case .number(let number): String(number)
        }
    }
}

/// Where a recognition request's audio comes from.
public enum AudioSourceChoice: Sendable, Hashable, Codable {
    /// A file the service reads (WAV, any rate, mono or not): `{"file": PATH}`.
    case file(String)
    /// Audio the client sends in `audio` messages: `"stream"`.
    case stream
    /// Heed's own microphone: `"microphone"`, the hand-off for a client without one
    /// (the service records until the speaker stops; see docs/DICTATION.md).
    case microphone

    private enum Key: String, CodingKey { case file }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer(), let name = try? container.decode(String.self) {
            switch name {
            case "stream": self = .stream
            case "microphone": self = .microphone
            default:
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "'source' must be \"stream\", \"microphone\" or {\"file\": PATH}, not \"\(name)\""))
            }
            return
        }
        let container = try decoder.container(keyedBy: Key.self)
        self = .file(try container.decode(String.self, forKey: .file))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .file(let path):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(path, forKey: .file)
        case .stream:
            var container = encoder.singleValueContainer()
            try container.encode("stream")
        case .microphone:
            var container = encoder.singleValueContainer()
            try container.encode("microphone")
        }
    }
}

/// What a request recognizes: the shipped intents, a named grammar, or the client's phrases.
public enum GrammarChoice: Sendable, Hashable, Codable {
    /// The intents Heed ships (`"intents"`, the default); the final result carries the parsed intent.
    case intents
    /// A grammar of Heed's `grammars/` folder by name, without `.gram`: `"commands"`.
    case named(String)
    /// The client's own phrases: `{"phrases": ["lights on", "lights off"]}`.
    case phrases([String])

    private enum Key: String, CodingKey { case phrases }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer(), let name = try? container.decode(String.self) {
            self = name == "intents" ? .intents : .named(name)
            return
        }
        let container = try decoder.container(keyedBy: Key.self)
        self = .phrases(try container.decode([String].self, forKey: .phrases))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .intents:
            var container = encoder.singleValueContainer()
            try container.encode("intents")
        case .named(let name):
            var container = encoder.singleValueContainer()
            try container.encode(name)
        case .phrases(let phrases):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(phrases, forKey: .phrases)
        }
    }
}

/// What kind of speech a request expects, as `SFSpeechRecognitionTaskHint`.
public struct TaskHint: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Whatever the grammar allows (the default).
    public static let unspecified = TaskHint(rawValue: "unspecified")
    /// Free speech: a message, a note, a title. The language model replaces the grammar, and the
    /// text is formatted (spoken punctuation, amounts in digits).
    public static let dictation = TaskHint(rawValue: "dictation")
    /// A short search query; recognized like `unspecified` for now.
    public static let search = TaskHint(rawValue: "search")
    /// A yes, a no, a short answer; recognized like `unspecified` for now.
    public static let confirmation = TaskHint(rawValue: "confirmation")

    /// The hints the service knows.
    public static let all: [TaskHint] = [.unspecified, .dictation, .search, .confirmation]
}

/// One line from the client to the service.
public struct ClientMessage: Sendable, Hashable, Codable {
    /// What a client message asks.
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Says which protocol the client speaks; the reply names the service's.
        public static let hello = Kind(rawValue: "hello")
        /// Asks for the client's speech-recognition authorization; recognizes nothing.
        public static let requestAuthorization = Kind(rawValue: "requestAuthorization")
        /// Starts a recognition task; its id names the task in later messages.
        public static let recognize = Kind(rawValue: "recognize")
        /// Audio for a streamed task.
        public static let audio = Kind(rawValue: "audio")
        /// No more audio: the task decodes what it has and gives its final result.
        public static let finish = Kind(rawValue: "finish")
        /// Stops the task without a result.
        public static let cancel = Kind(rawValue: "cancel")
    }

    public var id: MessageID
    public var type: Kind
    /// `hello`: the protocol version the client speaks.
    public var `protocol`: Int?
    /// `recognize`: the audio.
    public var source: AudioSourceChoice?
    /// `recognize`: the grammar (default `intents`).
    public var grammar: GrammarChoice?
    /// `recognize`: whether to send partial results (default false).
    public var partialResults: Bool?
    /// `recognize`: the most audio, in seconds, the task takes (default 60).
    public var maxDuration: Double?
    /// `recognize`: what kind of speech to expect (default `unspecified`); `dictation` takes no grammar.
    public var taskHint: TaskHint?
    /// `recognize` with `dictation`: phrases to expect, such as names; their words are added.
    public var contextualStrings: [String]?
    /// `audio`: base64 of 16 kHz mono signed 16-bit little-endian samples.
    public var data: String?

    public init(
        id: MessageID, type: Kind, protocol: Int? = nil, source: AudioSourceChoice? = nil, grammar: GrammarChoice? = nil,
        partialResults: Bool? = nil, maxDuration: Double? = nil, taskHint: TaskHint? = nil, contextualStrings: [String]? = nil,
        data: String? = nil
    ) {
        self.id = id
        self.type = type
        self.protocol = `protocol`
        self.source = source
        self.grammar = grammar
        self.partialResults = partialResults
        self.maxDuration = maxDuration
        self.taskHint = taskHint
        self.contextualStrings = contextualStrings
        self.data = data
    }
}

/// A status in an `authorization` or `error` reply.
public struct ServiceStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The user allowed the client to use speech recognition.
    public static let authorized = ServiceStatus(rawValue: "authorized")
    /// The user said no.
    public static let denied = ServiceStatus(rawValue: "denied")
    /// The administrator's policy forbids the client.
    public static let restricted = ServiceStatus(rawValue: "restricted")
    /// The user has not decided, and nobody could be asked.
    public static let notDetermined = ServiceStatus(rawValue: "notDetermined")
    /// The client's executable matches no client manifest.
    public static let unknownClient = ServiceStatus(rawValue: "unknownClient")
    /// The client's manifest has no `speechRecognitionUsageDescription`.
    public static let noUsageDescription = ServiceStatus(rawValue: "noUsageDescription")
    /// The line was not a message of the protocol.
    public static let malformed = ServiceStatus(rawValue: "malformed")
    /// The line was longer than ``HeedProtocol/maximumLineLength``.
    public static let tooLarge = ServiceStatus(rawValue: "tooLarge")
    /// What was asked cannot be done now (the microphone, a missing model, a stopping service).
    public static let unavailable = ServiceStatus(rawValue: "unavailable")
    /// Too many tasks are running; try again later.
    public static let busy = ServiceStatus(rawValue: "busy")
    /// The grammar is not one Heed has, or has words without a pronunciation.
    public static let invalidGrammar = ServiceStatus(rawValue: "invalidGrammar")
    /// The audio could not be read or decoded.
    public static let audioError = ServiceStatus(rawValue: "audioError")
    /// The message names a task that is not running, or an id already in use.
    public static let unknownTask = ServiceStatus(rawValue: "unknownTask")
    /// The client speaks a protocol version the service does not.
    public static let unsupportedProtocol = ServiceStatus(rawValue: "unsupportedProtocol")
    /// Heed's microphone heard no speech before its time limit (a hand-off).
    public static let noSpeech = ServiceStatus(rawValue: "noSpeech")
    /// The task was cancelled (a hand-off's record says so).
    public static let canceled = ServiceStatus(rawValue: "canceled")
}

/// A recognition task's state, as `SFSpeechRecognitionTaskState`.
public struct TaskState: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let starting = TaskState(rawValue: "starting")
    public static let running = TaskState(rawValue: "running")
    public static let finishing = TaskState(rawValue: "finishing")
    public static let canceling = TaskState(rawValue: "canceling")
    public static let completed = TaskState(rawValue: "completed")
}

/// One word of a transcription, as `SFTranscriptionSegment`.
public struct TranscriptionSegment: Sendable, Hashable, Codable {
    /// The word.
    public var substring: String
    /// Where it starts in the audio, in seconds.
    public var timestamp: Double
    /// How long it lasts, in seconds.
    public var duration: Double
    /// The probability, 0–1, that the word is right.
    public var confidence: Double

    public init(substring: String, timestamp: Double, duration: Double, confidence: Double) {
        self.substring = substring
        self.timestamp = timestamp
        self.duration = duration
        self.confidence = confidence
    }
}

/// An alternative transcription.
public struct AlternativeTranscription: Sendable, Hashable, Codable {
    public var transcription: String
    public init(transcription: String) { self.transcription = transcription }
}

/// One line from the service to the client.
public struct ServiceMessage: Sendable, Hashable, Codable {
    /// What a service message says.
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The reply to `hello`.
        public static let hello = Kind(rawValue: "hello")
        /// The reply to `requestAuthorization`.
        public static let authorization = Kind(rawValue: "authorization")
        /// A task's new state.
        public static let state = Kind(rawValue: "state")
        /// A partial result (`isFinal` false).
        public static let partial = Kind(rawValue: "partial")
        /// The final result (`isFinal` true).
        public static let final = Kind(rawValue: "final")
        /// A refusal or failure, with a ``ServiceStatus`` and a sentence.
        public static let error = Kind(rawValue: "error")
    }

    /// The id of the client message this answers; `null` for a line that had none.
    public var id: MessageID?
    public var type: Kind
    /// `hello`: the protocol version the service speaks.
    public var `protocol`: Int?
    /// `hello`: the service's version.
    public var version: String?
    /// `hello`, `authorization`: the client's app id, as the service identified it.
    public var appId: String?
    /// `authorization`, `error`: the status.
    public var status: ServiceStatus?
    /// `authorization`, `error`: a sentence for people.
    public var message: String?
    /// `state`: the task's state.
    public var state: TaskState?
    /// `partial`, `final`: whether this is the task's last result.
    public var isFinal: Bool?
    /// `partial`, `final`: the best transcription.
    public var transcription: String?
    /// `final`: the probability, 0–1, that the transcription is right.
    public var confidence: Double?
    /// `final`: whether the audio was judged not to be a sentence of the grammar.
    public var rejected: Bool?
    /// `final`: other transcriptions, best first.
    public var alternatives: [AlternativeTranscription]?
    /// `final`: the words with their times (with `dictation`, as said, before formatting).
    public var segments: [TranscriptionSegment]?
    /// `partial`, `final` with `dictation`: the words as said, before formatting.
    public var spokenText: String?
    /// `final` of a hand-off: the file the result was also written to (``DictationRecord``).
    public var resultFile: String?
    /// `final` with the intents grammar: `{"intent": NAME, "parameters": {...}}`, or `null`.
    public var intent: JSONValue?
    /// `final`: seconds of audio recognized.
    public var audioDuration: Double?

    public init(id: MessageID?, type: Kind) {
        self.id = id
        self.type = type
    }

    /// An `error` reply.
    public static func error(_ id: MessageID?, _ status: ServiceStatus, _ message: String) -> ServiceMessage {
        var reply = ServiceMessage(id: id, type: .error)
        reply.status = status
        reply.message = message
        return reply
    }

    /// A `state` message.
    public static func state(_ id: MessageID, _ state: TaskState) -> ServiceMessage {
        var reply = ServiceMessage(id: id, type: .state)
        reply.state = state
        return reply
    }
}

/// An app's last hand-off dictation, as the service leaves it in shared storage
/// (``HeedProtocol/dictationResultPath(appID:environment:)``, mode 0600, replaced atomically):
/// a client that went away reads it on return.
public struct DictationRecord: Sendable, Hashable, Codable {
    /// `recording`, `processing`, `finished` or `failed`.
    public var status: String
    /// The dictated text, formatted; empty until `finished`.
    public var text: String
    /// With `failed`: why, as a status (`noSpeech`, `unavailable`, `canceled`) and a sentence.
    public var reason: String?
    /// The probability, 0–1, that the text is right (`finished` only).
    public var confidence: Double?
    /// When the status was written (ISO 8601, UTC).
    public var timestamp: String
    /// The app the dictation was for.
    public var appId: String

    public init(status: String, text: String, reason: String? = nil, confidence: Double? = nil, timestamp: String, appId: String) {
        self.status = status
        self.text = text
        self.reason = reason
        self.confidence = confidence
        self.timestamp = timestamp
        self.appId = appId
    }

    /// Reads an app's last record.
    /// - Parameter path: The file; default ``HeedProtocol/dictationResultPath(appID:environment:)``.
    /// - Returns: The record, or `nil` when there is none (or it cannot be read).
    public static func read(path: String) -> DictationRecord? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(DictationRecord.self, from: data)
    }
}

/// Any JSON value: the parsed intent of a final result.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value of `key` in an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The string, for a string.
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }
}

/// Encodes and decodes protocol lines.
public enum MessageCoding {
    /// One line of JSON, with its newline, keys sorted.
    public static func line(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Decodes a line (without its newline).
    public static func decode<Value: Decodable>(_ type: Value.Type, from line: some Collection<UInt8>) throws -> Value {
        try JSONDecoder().decode(type, from: Data(line))
    }
}
