import Foundation
import HeedClient
import Logging
import Synchronization

/// One client's connection: a thread reads its lines and answers them; its recognition tasks
/// run on threads of their own, so `cancel` and more audio are read while a task decodes.
final class Connection: Sendable {
    private struct State {
        var tasks: [MessageID: RecognitionRun] = [:]
        /// Ids of the last tasks that ended (at most ``Connection/rememberedTasks``, oldest
        /// first): late `audio`, `finish` or `cancel` for them are ignored.
        var ended: [MessageID] = []
        /// The reader has seen the end: no new task starts.
        var closed = false
        /// Whether the descriptor is still open. It is closed when the reader has ended and
        /// the last task has ended, never before: a task sending to a closed descriptor whose
        /// number was reused would write to another client.
        var descriptorOpen = true
    }

    let descriptor: Int32
    let number: Int
    let identity: ClientIdentity
    let service: SpeechService
    private let state = Mutex(State())
    private let writing = Mutex(())

    init(descriptor: Int32, number: Int, service: SpeechService) {
        self.descriptor = descriptor
        self.number = number
        self.service = service
        identity = ClientIdentity(
            descriptor: descriptor, catalog: ClientCatalog.discover(in: service.permission.clientFolders))
        UnixSocket.setSendTimeout(descriptor, seconds: Self.sendTimeout)
    }

    /// How many ended tasks a connection remembers, to ignore late messages for them.
    static let rememberedTasks = 64

    /// Seconds a client may leave the service's messages unread before it is disconnected.
    static let sendTimeout = 30

    /// Starts reading the connection's lines.
    func start() {
        var event = event("connected")
        event.executable = identity.executable
        service.emit(event)
        let thread = Thread { [self] in
            readLines()
        }
        thread.name = "heed serve connection \(number)"
        thread.start()
    }

    /// Ends the connection: its reader sees the end and cancels its tasks.
    func close() {
        state.withLock { state in
            if state.descriptorOpen { UnixSocket.shutdown(descriptor) }
        }
    }

    /// Closes the descriptor once the reader and every task have ended.
    private func closeWhenUnused(_ state: inout State) {
        guard state.closed, state.tasks.isEmpty, state.descriptorOpen else { return }
        state.descriptorOpen = false
        UnixSocket.close(descriptor)
    }

    func event(_ name: String) -> ServiceEvent {
        var event = ServiceEvent(name)
        event.connection = number
        event.pid = identity.credentials?.processID
        event.appId = identity.manifest?.appID
        return event
    }

    /// Sends one message. A client that went away, or reads nothing for ``sendTimeout``
    /// seconds, is disconnected: its reader sees the end and cancels its tasks.
    func send(_ message: ServiceMessage) {
        guard let line = try? MessageCoding.line(message) else { return }
        writing.withLock { _ in
            do {
                try UnixSocket.send(descriptor, line)
            } catch {
                close()
            }
        }
    }

    // MARK: Reading

    private func readLines() {
        let reader = LineReader(descriptor: descriptor, maximumLength: HeedProtocol.maximumLineLength)
        reading: while true {
            let next: LineReader.Line
            do {
                next = try reader.next()
            } catch {
                break
            }
            switch next {
            case .end: break reading
            case .tooLong:
                send(
                    .error(
                        nil, .tooLarge,
                        "a line longer than \(HeedProtocol.maximumLineLength) bytes (the limit) was skipped; "
                            + "send audio in smaller messages (a second of audio is about 43 KB of base64)"))
            case .line(let bytes):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                handle(bytes)
            }
        }
        service.remove(self)
        let tasks = state.withLock { state in
            state.closed = true
            closeWhenUnused(&state)
            return Array(state.tasks.values)
        }
        // A client that goes away cancels its tasks (a hand-off goes on, for the shared storage);
        // the last one to end closes the descriptor.
        for task in tasks { task.cancel(silently: true) }
        service.emit(event("disconnected"))
    }

    private func handle(_ bytes: [UInt8]) {
        let message: ClientMessage
        do {
            message = try MessageCoding.decode(ClientMessage.self, from: bytes)
        } catch {
            send(.error(Self.id(in: bytes), .malformed, "not a message of Heed's protocol v1: \(Self.reason(error)); see docs/CLIENTS.md"))
            return
        }
        switch message.type {
        case .hello: hello(message)
        case .requestAuthorization: requestAuthorization(message)
        case .recognize: recognize(message)
        case .audio, .finish, .cancel: forward(message)
        default:
            send(
                .error(
                    message.id, .malformed,
                    "unknown message type '\(message.type)': expected hello, requestAuthorization, recognize, audio, finish or cancel"))
        }
    }

    private func hello(_ message: ClientMessage) {
        if let version = message.protocol, version != HeedProtocol.version {
            send(
                .error(
                    message.id, .unsupportedProtocol,
                    "this service speaks protocol \(HeedProtocol.version), not \(version); update the client or the service"))
            return
        }
        var reply = ServiceMessage(id: message.id, type: .hello)
        reply.protocol = HeedProtocol.version
        reply.version = service.configuration.version
        reply.appId = identity.manifest?.appID
        send(reply)
    }

    private func requestAuthorization(_ message: ClientMessage) {
        switch service.permission.status(of: identity, asking: true) {
        case .refused(let status, let text):
            refuse(message.id, status, text)
        case .status(let status, let text):
            var reply = ServiceMessage(id: message.id, type: .authorization)
            reply.status = status
            reply.message = text
            reply.appId = identity.manifest?.appID
            send(reply)
        }
    }

    private func refuse(_ id: MessageID, _ status: ServiceStatus, _ text: String) {
        send(.error(id, status, text))
        var event = event("refused")
        event.executable = identity.executable
        event.status = status.rawValue
        event.message = text
        service.emit(event)
    }

    private func recognize(_ message: ClientMessage) {
        switch service.permission.status(of: identity) {
        case .refused(let status, let text): return refuse(message.id, status, text)
        case .status(.authorized, _): break
        case .status(let status, let text): return refuse(message.id, status, text ?? "speech recognition is not authorized")
        }
        guard let source = message.source else {
            return send(.error(message.id, .malformed, "'recognize' needs a 'source': {\"file\": PATH}, \"stream\" or \"microphone\""))
        }
        let hint = message.taskHint ?? .unspecified
        guard TaskHint.all.contains(hint) else {
            return send(
                .error(message.id, .malformed, "unknown 'taskHint' '\(hint)': expected \(TaskHint.all.map(\.rawValue).joined(separator: ", "))"))
        }
        let contextualStrings = message.contextualStrings ?? []
        if hint == .dictation, message.grammar != nil {
            return send(.error(message.id, .malformed, "a 'dictation' task takes no 'grammar': it recognizes free speech"))
        }
        if hint != .dictation, !contextualStrings.isEmpty {
            return send(.error(message.id, .malformed, "'contextualStrings' go with \"taskHint\": \"dictation\""))
        }
        guard contextualStrings.count <= 100, contextualStrings.allSatisfy({ $0.count <= 100 }) else {
            return send(.error(message.id, .malformed, "'contextualStrings' may hold 100 phrases of at most 100 characters"))
        }
        if case .file(let path) = source, !path.hasPrefix("/") {
            return send(.error(message.id, .malformed, "'source.file' must be an absolute path, not '\(path)'"))
        }
        let maxDuration = message.maxDuration ?? service.configuration.defaultMaxDuration
        guard maxDuration > 0, maxDuration <= 600 else {
            return send(.error(message.id, .malformed, "'maxDuration' must be more than 0 and at most 600 seconds, not \(maxDuration)"))
        }
        guard !service.isStopping else {
            return send(.error(message.id, .unavailable, "the service is stopping; try again when it is back"))
        }
        var handoff: Handoff?
        if case .microphone = source {
            switch Handoff.check(identity, service: service) {
            case .failure(let refusal): return refuse(message.id, refusal.status, refusal.message)
            case .success(let checked): handoff = checked
            }
        }
        let inUse = state.withLock { $0.tasks[message.id] != nil }
        guard !inUse else {
            return send(.error(message.id, .unknownTask, "task \(message.id) is still running on this connection; give each task a new id"))
        }
        guard service.reserveTask() else {
            handoff?.release()
            return send(
                .error(
                    message.id, .busy,
                    "the service runs \(service.configuration.maximumTasks) recognition tasks already (its --max-tasks); try again shortly"))
        }
        let kind: Recognizers.Kind = hint == .dictation ? .dictation(contextualStrings: contextualStrings) : .grammar(message.grammar ?? .intents)
        let task = RecognitionRun(
            id: message.id, source: source, kind: kind, partialResults: message.partialResults ?? false,
            maxSamples: Int(maxDuration * 16_000), handoff: handoff, connection: self)
        let added = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.tasks[message.id] = task
            return true
        }
        guard added else {
            handoff?.release()
            service.releaseTask()
            return
        }
        task.start()
    }

    private func forward(_ message: ClientMessage) {
        let (task, ended) = state.withLock { ($0.tasks[message.id], $0.ended.contains(message.id)) }
        guard let task else {
            if !ended {
                send(.error(message.id, .unknownTask, "no recognition task \(message.id) runs on this connection; start one with 'recognize'"))
            }
            return
        }
        switch message.type {
        case .audio:
            guard let data = message.data, let samples = Self.samples(base64: data) else {
                return send(
                    .error(
                        message.id, .malformed,
                        "'audio' needs 'data': base64 of 16 kHz mono signed 16-bit little-endian samples (an even number of bytes)"))
            }
            task.append(samples)
        case .finish: task.finish()
        default: task.cancel(silently: false)
        }
    }

    /// Called by a task when it has ended (it has given its place in the service back).
    func ended(_ task: RecognitionRun) {
        state.withLock { state in
            state.tasks[task.id] = nil
            state.ended.append(task.id)
            if state.ended.count > Self.rememberedTasks { state.ended.removeFirst() }
            closeWhenUnused(&state)
        }
    }

    // MARK: Decoding lines

    static func samples(base64 text: String) -> [Int16]? {
        guard let data = Data(base64Encoded: text), data.count % 2 == 0 else { return nil }
        let bytes = [UInt8](data)
        return (0..<bytes.count / 2).map { index in
            Int16(bitPattern: UInt16(bytes[2 * index]) | UInt16(bytes[2 * index + 1]) << 8)
        }
    }

    /// The `id` of a line that is JSON but not a valid message, so the error can name it.
    private static func id(in bytes: [UInt8]) -> MessageID? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        if let text = object["id"] as? String { return .string(text) }
        if let number = object["id"] as? Int { return .number(number) }
        return nil
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "'\(at.isEmpty ? key.stringValue : at + "." + key.stringValue)' is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "'\(path(context))' has the wrong type"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "the line is not a JSON object" }
            return "'\(path(context))': \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
