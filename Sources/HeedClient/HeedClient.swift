import Foundation
import Glibc
import Synchronization

/// A refusal or failure from the service, or a connection that ended.
public struct ServiceError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The status: `denied`, `notDetermined`, `unknownClient`, `busy`, …
    public var status: ServiceStatus
    /// The service's sentence.
    public var message: String

    public init(status: ServiceStatus, message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status.rawValue): \(message)" }
}

/// A recognition result: a partial one while audio comes, then the final one
/// (as `SFSpeechRecognitionResult`).
public struct RecognitionResult: Sendable, Hashable {
    /// Whether this is the task's last result.
    public var isFinal: Bool
    /// The best transcription.
    public var transcription: String
    /// The probability, 0–1, that `transcription` is right (final results only).
    public var confidence: Double?
    /// Whether the audio was judged not to be a sentence of the grammar (final results only).
    public var rejected: Bool
    /// Other transcriptions, best first.
    public var alternatives: [String]
    /// The words with their times (final results only).
    public var segments: [TranscriptionSegment]
    /// With the intents grammar: `{"intent": NAME, "parameters": {...}}`, or `nil` when no intent matched.
    public var intent: JSONValue?
    /// Seconds of audio recognized (final results only).
    public var audioDuration: Double?
    /// With the `dictation` hint: the words as said, before formatting (`transcription` is formatted).
    public var spokenText: String?
    /// A hand-off's final result: the shared-storage file it was also written to.
    public var resultFile: String?

    init(_ message: ServiceMessage) {
        isFinal = message.isFinal ?? (message.type == .final)
        transcription = message.transcription ?? ""
        confidence = message.confidence
        rejected = message.rejected ?? false
        alternatives = message.alternatives?.map(\.transcription) ?? []
        segments = message.segments ?? []
        intent = message.intent.flatMap { $0 == .null ? nil : $0 }
        audioDuration = message.audioDuration
        spokenText = message.spokenText
        resultFile = message.resultFile
    }
}

/// A client's speech-recognition authorization.
public struct Authorization: Sendable, Hashable {
    /// `authorized`, `denied`, `restricted` or `notDetermined`.
    public var status: ServiceStatus
    /// Unless authorized: what the user can do about it.
    public var message: String?
    /// The client's app id, as the service identified it.
    public var appID: String?
}

/// What a recognition task reports, in order.
public enum RecognitionUpdate: Sendable, Hashable {
    /// The task's state changed; `completed` is the last update.
    case state(TaskState)
    /// A result: partial (`isFinal` false) or final.
    case result(RecognitionResult)
    /// The task was refused or failed. A refused task reports nothing after this.
    case failed(ServiceError)
}

/// How a recognition task recognizes.
public struct RecognitionOptions: Sendable, Hashable {
    /// The grammar: the shipped intents (default), one of Heed's grammars, or your phrases.
    public var grammar: GrammarChoice
    /// Whether to report partial results while audio comes.
    public var partialResults: Bool
    /// The most audio the task takes, in seconds; `nil` for the service's default (60).
    public var maxDuration: Double?
    /// What kind of speech to expect; ``TaskHint/dictation`` uses no grammar.
    public var taskHint: TaskHint
    /// With ``TaskHint/dictation``: phrases to expect, such as names (`SFSpeechRecognitionRequest.contextualStrings`).
    public var contextualStrings: [String]

    public init(
        grammar: GrammarChoice = .intents, partialResults: Bool = false, maxDuration: Double? = nil, taskHint: TaskHint = .unspecified,
        contextualStrings: [String] = []
    ) {
        self.grammar = grammar
        self.partialResults = partialResults
        self.maxDuration = maxDuration
        self.taskHint = taskHint
        self.contextualStrings = contextualStrings
    }

    /// Dictation: free speech, formatted text, with partial results.
    public static func dictation(contextualStrings: [String] = [], partialResults: Bool = true) -> RecognitionOptions {
        RecognitionOptions(partialResults: partialResults, taskHint: .dictation, contextualStrings: contextualStrings)
    }
}

/// Where a dictation is, as KeyboardKit's `DictationContext` (reference 001) tells it.
public enum DictationStatus: Sendable, Hashable {
    /// Nothing asked yet.
    case idle
    /// The service loads a decoder (and, for a hand-off, opens its microphone).
    case starting
    /// Audio comes: the client's, or Heed's microphone listening for the speaker.
    case recording
    /// The speaker stopped; the final decode runs.
    case processing
    /// The final text is there.
    case finished
    /// Refused, failed or cancelled: the status and the service's sentence.
    case failed(ServiceError)
}

/// A dictation's state and text, folded from its task's updates: each update is an event that
/// changes it.
///
/// ```swift
/// var context = DictationContext()
/// for await update in task.updates {
///     context.apply(update)
///     show(context.status, context.text)
/// }
/// ```
public struct DictationContext: Sendable, Hashable {
    /// Where the dictation is.
    public var status: DictationStatus = .idle
    /// The text so far: the latest partial result, then the final text (formatted).
    public var text = ""
    /// The final text, once ``status`` is ``DictationStatus/finished``.
    public var finalText: String?
    /// The final result, with confidence and segments.
    public var result: RecognitionResult?

    public init() {}

    /// Takes one update of the dictation's task.
    public mutating func apply(_ update: RecognitionUpdate) {
        switch update {
        case .state(.starting): status = .starting
        case .state(.running): status = .recording
        case .state(.finishing): status = .processing
        case .state(.canceling): status = .failed(ServiceError(status: .canceled, message: "the dictation was cancelled"))
        case .state: break
        case .result(let result):
            text = result.transcription
            if result.isFinal {
                finalText = result.transcription
                self.result = result
                status = .finished
            }
        case .failed(let error): status = .failed(error)
        }
    }
}

/// A connection to `heed serve`.
///
/// ```swift
/// let client = try HeedClient()
/// guard try await client.requestAuthorization().status == .authorized else { return }
/// let task = try client.recognize(file: "/tmp/command.wav")
/// for await update in task.updates {
///     if case .result(let result) = update, result.isFinal { print(result.transcription) }
/// }
/// client.close()
/// ```
///
/// A thread of the client reads the service's replies; ``close()`` ends it.
public final class HeedClient: Sendable {
    private struct State {
        var nextID = 1
        var replies: [MessageID: CheckedContinuation<ServiceMessage, any Error>] = [:]
        var tasks: [MessageID: (continuation: AsyncStream<RecognitionUpdate>.Continuation, started: Bool)] = [:]
        var closed: ServiceError?
    }

    private let descriptor: Int32
    private let state = Mutex(State())
    private let writing = Mutex(())

    /// Connects to the service.
    /// - Parameter socketPath: The service's socket; default ``HeedProtocol/defaultSocketPath(environment:)``.
    /// - Throws: ``ServiceError`` with status `unavailable` when no service listens there.
    public init(socketPath: String = HeedProtocol.defaultSocketPath()) throws {
        do {
            descriptor = try UnixSocket.connect(to: socketPath)
        } catch {
            throw ServiceError(
                status: .unavailable,
                message: "cannot connect to the Heed service at \(socketPath): \(String(cString: strerror(error.code))); is `heed serve` running?")
        }
        let thread = Thread { [self] in readReplies() }
        thread.name = "HeedClient reader"
        thread.start()
    }

    /// Closes the connection; running tasks end with a failure, and the service cancels them.
    public func close() {
        UnixSocket.shutdown(descriptor)
    }

    /// Says hello: which protocol the service speaks and its version.
    /// - Returns: The service's reply (`protocol`, `version`, `appId`).
    /// - Throws: ``ServiceError``.
    public func hello() async throws -> ServiceMessage {
        try await request(ClientMessage(id: nextID(), type: .hello, protocol: HeedProtocol.version))
    }

    /// Asks for this program's speech-recognition authorization, as
    /// `SFSpeechRecognizer.requestAuthorization`: recognizes nothing.
    /// - Returns: The status (`authorized`, `denied`, `restricted` or `notDetermined`) and,
    ///   unless authorized, the service's sentence saying what to do.
    /// - Throws: ``ServiceError`` when the service refuses to answer (`unknownClient`, `noUsageDescription`).
    public func requestAuthorization() async throws -> Authorization {
        let reply = try await request(ClientMessage(id: nextID(), type: .requestAuthorization))
        return Authorization(status: reply.status ?? .notDetermined, message: reply.message, appID: reply.appId)
    }

    /// Recognizes a file the service reads: WAV, 16-bit, any rate and channel count.
    /// - Parameters:
    ///   - path: The file; relative paths are made absolute here.
    ///   - options: The grammar and whether to report partial results.
    /// - Returns: The task; its ``RecognitionTask/updates`` end with `completed` or a failure.
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func recognize(file path: String, options: RecognitionOptions = .init()) throws -> RecognitionTask {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return try start(.file(absolute), options)
    }

    /// Starts recognizing audio you send with ``RecognitionTask/append(samples:)``, then
    /// ``RecognitionTask/finish()`` (as `SFSpeechAudioBufferRecognitionRequest`).
    /// - Parameter options: The grammar and whether to report partial results.
    /// - Returns: The task.
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func recognizeStream(options: RecognitionOptions = .init()) throws -> RecognitionTask {
        try start(.stream, options)
    }

    /// Recognizes what Heed's microphone hears, for a client with none: the hand-off. The
    /// service signals that it listens, records until the speaker stops, and also leaves the
    /// result in shared storage (``DictationRecord``). Needs the client's speech-recognition
    /// authorization and a `microphoneUsageDescription` in its manifest.
    /// - Parameter options: The grammar or ``RecognitionOptions/dictation(contextualStrings:partialResults:)``.
    /// - Returns: The task.
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func recognizeMicrophone(options: RecognitionOptions = .init()) throws -> RecognitionTask {
        try start(.microphone, options)
    }

    private func start(_ source: AudioSourceChoice, _ options: RecognitionOptions) throws -> RecognitionTask {
        let id = nextID()
        let (updates, continuation) = AsyncStream.makeStream(of: RecognitionUpdate.self)
        try state.withLock { state in
            if let closed = state.closed { throw closed }
            state.tasks[id] = (continuation, false)
        }
        let dictation = options.taskHint == .dictation
        let message = ClientMessage(
            id: id, type: .recognize, source: source, grammar: dictation ? nil : options.grammar, partialResults: options.partialResults,
            maxDuration: options.maxDuration, taskHint: options.taskHint == .unspecified ? nil : options.taskHint,
            contextualStrings: options.contextualStrings.isEmpty ? nil : options.contextualStrings)
        try send(message)
        return RecognitionTask(id: id, client: self, updates: updates)
    }

    // MARK: Lines

    private func nextID() -> MessageID {
        state.withLock { state in
            defer { state.nextID += 1 }
            return .number(state.nextID)
        }
    }

    func send(_ message: ClientMessage) throws {
        let line = try MessageCoding.line(message)
        try writing.withLock { _ in
            do {
                try UnixSocket.send(descriptor, line)
            } catch {
                throw ServiceError(status: .unavailable, message: "the connection to the Heed service is closed")
            }
        }
    }

    private func request(_ message: ClientMessage) async throws -> ServiceMessage {
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ServiceMessage, any Error>) in
            let closed = state.withLock { state -> ServiceError? in
                if let closed = state.closed { return closed }
                state.replies[message.id] = continuation
                return nil
            }
            if let closed { return continuation.resume(throwing: closed) }
            do {
                try send(message)
            } catch {
                if let continuation = state.withLock({ $0.replies.removeValue(forKey: message.id) }) {
                    continuation.resume(throwing: error)
                }
            }
        }
        if reply.type == .error {
            throw ServiceError(status: reply.status ?? .unavailable, message: reply.message ?? "the service refused")
        }
        return reply
    }

    private func readReplies() {
        let reader = LineReader(descriptor: descriptor, maximumLength: HeedProtocol.maximumLineLength)
        var ending = ServiceError(status: .unavailable, message: "the Heed service closed the connection")
        reading: while true {
            let next: LineReader.Line
            do {
                next = try reader.next()
            } catch {
                ending = ServiceError(status: .unavailable, message: "the connection to the Heed service failed: \(error)")
                break
            }
            switch next {
            case .end: break reading
            case .tooLong: continue
            case .line(let bytes):
                guard let message = try? MessageCoding.decode(ServiceMessage.self, from: bytes), let id = message.id else { continue }
                deliver(message, id: id)
            }
        }
        let (replies, tasks) = state.withLock { state in
            state.closed = ending
            defer {
                state.replies = [:]
                state.tasks = [:]
            }
            return (state.replies, state.tasks)
        }
        for continuation in replies.values { continuation.resume(throwing: ending) }
        for task in tasks.values {
            task.continuation.yield(.failed(ending))
            task.continuation.finish()
        }
        UnixSocket.close(descriptor)
    }

    private func deliver(_ message: ServiceMessage, id: MessageID) {
        if let continuation = state.withLock({ $0.replies.removeValue(forKey: id) }) {
            continuation.resume(returning: message)
            return
        }
        let task = state.withLock { state -> (AsyncStream<RecognitionUpdate>.Continuation, ends: Bool)? in
            guard let task = state.tasks[id] else { return nil }
            let ends: Bool
            switch message.type {
            case .state:
                state.tasks[id]?.started = true
                ends = message.state == .completed
            case .error: ends = !task.started
            default: ends = false
            }
            if ends { state.tasks[id] = nil }
            return (task.continuation, ends)
        }
        guard let (continuation, ends) = task else { return }
        switch message.type {
        case .state: continuation.yield(.state(message.state ?? .running))
        case .partial, .final: continuation.yield(.result(RecognitionResult(message)))
        case .error:
            continuation.yield(.failed(ServiceError(status: message.status ?? .unavailable, message: message.message ?? "")))
        default: break
        }
        if ends { continuation.finish() }
    }
}

/// A recognition task (as `SFSpeechRecognitionTask`): its updates, and for a streamed task
/// the audio you send, then ``finish()`` or ``cancel()``.
public final class RecognitionTask: Sendable {
    /// The task's id on the connection.
    public let id: MessageID
    /// States, partial results, the final result, failures; ends after `completed` or a refusal.
    public let updates: AsyncStream<RecognitionUpdate>
    private let client: HeedClient

    init(id: MessageID, client: HeedClient, updates: AsyncStream<RecognitionUpdate>) {
        self.id = id
        self.client = client
        self.updates = updates
    }

    /// Sends audio: 16 kHz mono samples, in messages of at most 10 s (well under the line limit).
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func append(samples: [Int16]) throws {
        for start in stride(from: 0, to: samples.count, by: Self.samplesPerMessage) {
            let part = samples[start..<min(samples.count, start + Self.samplesPerMessage)]
            var bytes = [UInt8]()
            bytes.reserveCapacity(part.count * 2)
            for sample in part {
                let value = UInt16(bitPattern: sample)
                bytes.append(UInt8(value & 0xFF))
                bytes.append(UInt8(value >> 8))
            }
            try client.send(ClientMessage(id: id, type: .audio, data: Data(bytes).base64EncodedString()))
        }
    }

    /// 10 s of audio: 427 KB of base64, under ``HeedProtocol/maximumLineLength``.
    static let samplesPerMessage = 160_000

    /// No more audio: the service decodes what it has and sends the final result.
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func finish() throws {
        try client.send(ClientMessage(id: id, type: .finish))
    }

    /// Stops the task; it ends with `canceling`, `completed` and no final result.
    /// - Throws: ``ServiceError`` when the connection is closed.
    public func cancel() throws {
        try client.send(ClientMessage(id: id, type: .cancel))
    }

    /// Waits for the final result.
    /// - Returns: The final result.
    /// - Throws: ``ServiceError`` when the task was refused, failed or was cancelled.
    public func finalResult() async throws -> RecognitionResult {
        for await update in updates {
            switch update {
            case .result(let result) where result.isFinal: return result
            case .failed(let error): throw error
            default: continue
            }
        }
        throw ServiceError(status: .unavailable, message: "the task ended without a final result")
    }
}
