import Dispatch
import Foundation
import HeedCore
import HeedPluginProtocol
import Logging
import Synchronization

import Glibc

/// What a request got back on one connection: a reply, or why none will come.
enum ConnectionEvent: Sendable {
    case reply(PluginResponse.Body)
    /// `detail` completes a sentence about the plugin: "was killed by signal 9".
    case failure(PluginFailure.Kind, detail: String)
}

/// One running plugin process and the JSON-lines conversation with it.
///
/// The process is started with `posix_spawn`, in a process group of its own, on our own descriptors: close-on-exec
/// Unix socket pairs for its standard input, output and error. Close-on-exec means no other
/// plugin inherits them, so end-of-file means this plugin is gone; a socket for standard input
/// means a write to a plugin that died fails with `EPIPE` under `MSG_NOSIGNAL` instead of
/// raising `SIGPIPE` in Heed.
/// Standard output and standard error are each read by a dedicated thread: blocking `read(2)`
/// stays off the cooperative pool.
final class PluginConnection: Sendable {
    private struct State {
        var pending: [Int: CheckedContinuation<ConnectionEvent, Never>] = [:]
        var closed: (kind: PluginFailure.Kind, detail: String)?
        var exitStatus: String?
        var inputOpen = true
    }

    private let state = Mutex(State())
    private let inputDescriptor: Int32
    /// The process id of the plugin.
    let processIdentifier: Int32

    private init(inputDescriptor: Int32, processIdentifier: Int32) {
        self.inputDescriptor = inputDescriptor
        self.processIdentifier = processIdentifier
    }

    deinit {
        state.withLock { state in
            if state.inputOpen { _ = Glibc.close(inputDescriptor) }
        }
    }

    /// Starts a plugin process.
    /// - Parameters:
    ///   - executableURL: The executable.
    ///   - arguments: Its arguments.
    ///   - appID: The app id, for log metadata.
    ///   - environment: Variables set for the plugin on top of Heed's environment.
    ///   - maximumLineLength: The longest output line accepted, in bytes.
    ///   - logger: Receives each line of the plugin's standard error.
    ///   - onUnsolicited: Called on the reader thread for each line that answers no request: a
    ///     notification, or the app's activities.
    /// - Returns: The connection.
    /// - Throws: An `Errno`-like error or Foundation's error when the process cannot be started.
    static func launch(
        executableURL: URL,
        arguments: [String],
        appID: String,
        environment: [String: String] = [:],
        maximumLineLength: Int,
        logger: Logger,
        onUnsolicited: @escaping @Sendable (PluginMessage) -> Void
    ) throws -> PluginConnection {
        let sockets = try ChildProcess.socketPair()
        let output: [Int32]
        let errorOutput: [Int32]
        do {
            output = try ChildProcess.socketPair()
        } catch {
            closeAll(sockets)
            throw error
        }
        do {
            errorOutput = try ChildProcess.socketPair()
        } catch {
            closeAll(sockets + output)
            throw error
        }

        let processIdentifier: pid_t
        do {
            processIdentifier = try ChildProcess.spawn(
                executableURL, arguments: arguments, environment: environment, input: sockets[1], output: output[1],
                error: errorOutput[1])
        } catch {
            closeAll(sockets + output + errorOutput)
            throw error
        }
        // The child has its copies; ours would keep end-of-file from ever arriving.
        closeAll([sockets[1], output[1], errorOutput[1]])

        let connection = PluginConnection(inputDescriptor: sockets[0], processIdentifier: processIdentifier)
        let waitThread = Thread { [connection] in connection.waitForTermination() }
        waitThread.name = "heed-plugin-wait \(appID)"
        waitThread.start()

        let outputDescriptor = output[0]
        let outputThread = Thread { [connection] in
            connection.readOutput(from: outputDescriptor, maximumLineLength: maximumLineLength, onUnsolicited: onUnsolicited)
        }
        outputThread.name = "heed-plugin-out \(appID)"
        outputThread.start()

        let errorDescriptor = errorOutput[0]
        let errorThread = Thread {
            readErrorOutput(from: errorDescriptor, appID: appID, logger: logger)
        }
        errorThread.name = "heed-plugin-err \(appID)"
        errorThread.start()
        return connection
    }

    /// Waits (on its own thread) for the plugin to end, then kills what is left of its process
    /// group before the plugin is reaped, and records how it ended.
    ///
    /// A plugin that exits leaving a child holding its standard output would otherwise keep
    /// end-of-file from arriving: its request would wait out the time limit and the child would
    /// run on. `waitid` with `WNOWAIT` keeps the plugin unreaped while the group is killed, so its
    /// process id cannot be reused by then.
    private func waitForTermination() {
        var information = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &information, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { break }
        }
        _ = kill(-processIdentifier, SIGKILL)
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0, errno == EINTR {}
        let ended =
            status & 0x7F != 0
            ? "was killed by signal \(status & 0x7F)"
            : "exited with status \((status >> 8) & 0xFF)"
        state.withLock { $0.exitStatus = ended }
        // What the plugin wrote before it ended is read by now or soon; a descendant outside its
        // group could still hold the output open, so the connection ends here if end-of-file is late.
        var waited = 0
        while !isClosed, waited < 40 {
            usleep(5_000)
            waited += 1
        }
        close(.crashed, detail: ended)
    }

    private static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }

    /// Whether the connection has ended.
    var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// How the process ended, once it has: "exited with status 3".
    var exitStatus: String? { state.withLock { $0.exitStatus } }

    // MARK: Requests

    /// Sends a request and waits for its reply, at most `timeLimit`.
    /// - Parameters:
    ///   - request: The request.
    ///   - timeLimit: How long to wait for the reply.
    /// - Returns: The reply, or why there is none.
    func send(_ request: PluginRequest, timeLimit: Duration) async -> ConnectionEvent {
        guard let line = Self.encode(request) else {
            return .failure(.malformedReply, detail: "could not be sent a request")
        }
        let id = request.id
        return await withCheckedContinuation { continuation in
            let closed = state.withLock { state -> (kind: PluginFailure.Kind, detail: String)? in
                if let closed = state.closed { return closed }
                state.pending[id] = continuation
                return nil
            }
            if let closed {
                continuation.resume(returning: .failure(closed.kind, detail: closed.detail))
                return
            }
            guard write(line) else {
                take(id)?.resume(returning: .failure(.crashed, detail: "stopped reading its requests"))
                return
            }
            let seconds = Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                self?.take(id)?.resume(returning: .failure(.timedOut, detail: ""))
            }
        }
    }

    /// Sends a request that has no reply (`shutdown`).
    /// - Returns: Whether the line was written.
    @discardableResult
    func post(_ request: PluginRequest) -> Bool {
        guard let line = Self.encode(request) else { return false }
        return write(line)
    }

    private func take(_ id: Int) -> CheckedContinuation<ConnectionEvent, Never>? {
        state.withLock { $0.pending.removeValue(forKey: id) }
    }

    private static func encode(_ request: PluginRequest) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(request) else { return nil }
        return Array(data) + [0x0A]
    }

    /// Writes a whole line without blocking; a full socket buffer means the plugin stopped reading.
    private func write(_ bytes: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.inputOpen else { return false }
            return bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.send(
                        inputDescriptor, buffer.baseAddress! + offset, buffer.count - offset,
                        Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    if written < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    offset += written
                }
                return true
            }
        }
    }

    // MARK: Ending

    /// Ends the connection: pending requests get `kind`, the process is killed.
    /// - Parameters:
    ///   - kind: The failure pending and later requests report.
    ///   - detail: Completes a sentence about the plugin.
    func close(_ kind: PluginFailure.Kind, detail: String) {
        endRequests(kind, detail: detail)
        signal(SIGKILL)
        closeInput()
    }

    /// Marks the connection closed for `kind` (unless it already is) and ends every request
    /// waiting on it with that failure, leaving the process to end by itself.
    func endRequests(_ kind: PluginFailure.Kind, detail: String) {
        let pending = state.withLock { state -> [CheckedContinuation<ConnectionEvent, Never>] in
            if state.closed == nil { state.closed = (kind, detail) }
            let pending = Array(state.pending.values)
            state.pending.removeAll()
            return pending
        }
        for continuation in pending { continuation.resume(returning: .failure(kind, detail: detail)) }
    }

    /// Sends a signal to the process if it has not ended yet.
    func signal(_ signal: Int32) {
        state.withLock { state in
            if state.exitStatus == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Closes the plugin's standard input.
    func closeInput() {
        state.withLock { state in
            if state.inputOpen {
                state.inputOpen = false
                _ = Glibc.close(inputDescriptor)
            }
        }
    }

    /// Waits until the process has ended, at most `timeLimit`.
    /// - Returns: Whether it ended.
    func waitForExit(timeLimit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeLimit
        while ContinuousClock.now < deadline {
            if exitStatus != nil { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return exitStatus != nil
    }

    // MARK: Reading (dedicated threads)

    private func readOutput(
        from descriptor: Int32, maximumLineLength: Int, onUnsolicited: @Sendable (PluginMessage) -> Void
    ) {
        defer { _ = Glibc.close(descriptor) }
        let decoder = JSONDecoder()
        var line: [UInt8] = []
        // Replies are a few hundred bytes: a page at a time keeps the reading thread's buffer
        // off the listener's peak (64 KiB for each plugin was 0.25 MB with the four shipped apps).
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var start = 0
            while start < count {
                guard let newline = chunk[start..<count].firstIndex(of: 0x0A) else {
                    line.append(contentsOf: chunk[start..<count])
                    break
                }
                line.append(contentsOf: chunk[start..<newline])
                start = newline + 1
                if line.count > maximumLineLength { break }
                if !handleLine(line, decoder: decoder, onUnsolicited: onUnsolicited) { return }
                line.removeAll(keepingCapacity: line.count <= 64 * 1024)
            }
            if line.count > maximumLineLength {
                // Stop reading at once: memory stays bounded by the limit whatever the plugin writes.
                close(.oversizedReply, detail: "wrote a line longer than \(maximumLineLength) bytes")
                return
            }
        }
        // End of file: the plugin exited or closed its output. Give the exit status a moment to arrive.
        var waited = 0
        while exitStatus == nil, waited < 200 {
            usleep(5_000)
            waited += 1
        }
        close(.crashed, detail: exitStatus ?? "closed its output")
    }

    /// Handles one line; returns false when the connection was closed because of it.
    private func handleLine(
        _ line: [UInt8], decoder: JSONDecoder, onUnsolicited: @Sendable (PluginMessage) -> Void
    ) -> Bool {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return true }
        let message: PluginMessage
        do {
            message = try decoder.decode(PluginMessage.self, from: Data(line))
        } catch {
            let text = DisplayText.sanitized(String(decoding: line.prefix(120), as: UTF8.self))
            close(.malformedReply, detail: "wrote a line that is not a protocol message: \(text)")
            return false
        }
        switch message.sanitizedForDisplay {
        case .response(let response):
            take(response.id)?.resume(returning: .reply(response.body))
        case let unsolicited:
            onUnsolicited(unsolicited)
        }
        return true
    }

    private static func readErrorOutput(from descriptor: Int32, appID: String, logger: Logger) {
        defer { _ = Glibc.close(descriptor) }
        let limit = 4096
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        func flush() {
            guard !line.isEmpty else { return }
            logger.info(
                "\(DisplayText.sanitized(String(decoding: line, as: UTF8.self)))", metadata: ["plugin": "\(appID)", "stream": "stderr"])
            line.removeAll(keepingCapacity: true)
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            for byte in chunk[..<count] {
                if byte == 0x0A {
                    flush()
                } else {
                    line.append(byte)
                    if line.count >= limit { flush() }
                }
            }
        }
        flush()
    }
}

extension PluginMessage {
    /// The message with every text a user may see (responses, reasons, notifications, string
    /// values) passed through ``DisplayText/sanitized(_:)``: a plugin cannot put terminal control
    /// sequences in front of the user, e.g. to fake Heed's permission prompt.
    var sanitizedForDisplay: PluginMessage {
        let clean = DisplayText.sanitized
        switch self {
        case .notification(var notification):
            notification.text = clean(notification.text)
            return .notification(notification)
        case .activities(let activities):
            return .activities(activities.map(\.sanitizedForDisplay))
        case .vocabulary:
            // Checked and stored by the vocabulary store, which refuses control characters.
            return self
        case .response(var response):
            switch response.body {
            case .hello: break
            case .resolve(.success(let value)): response.body = .resolve(.success(value.sanitizedForDisplay))
            case .resolve(.confirmationRequired(let value)): response.body = .resolve(.confirmationRequired(value.sanitizedForDisplay))
            case .resolve(.disambiguation(let values)): response.body = .resolve(.disambiguation(values.map(\.sanitizedForDisplay)))
            case .resolve(.unsupported(let reason)): response.body = .resolve(.unsupported(reason: clean(reason)))
            case .resolve: break
            case .confirm(.failure(let reason)): response.body = .confirm(.failure(reason: clean(reason)))
            case .confirm: break
            case .handle(let outcome): response.body = .handle(HandleOutcome(outcome.status, response: outcome.response.map(clean)))
            case .activities(let activities): response.body = .activities(activities.map(\.sanitizedForDisplay))
            case .error(let message): response.body = .error(message: clean(message))
            }
            return .response(response)
        }
    }
}

extension PluginActivity {
    /// The activity with its title and names sanitized for display.
    var sanitizedForDisplay: PluginActivity {
        var activity = self
        activity.title = DisplayText.sanitized(title)
        activity.names = names.map(DisplayText.sanitized)
        return activity
    }
}

extension PluginValue {
    /// The value with its strings (and object keys) sanitized for display.
    var sanitizedForDisplay: PluginValue {
        switch self {
        case .string(let text): .string(DisplayText.sanitized(text))
        case .array(let items): .array(items.map(\.sanitizedForDisplay))
        case .object(let members):
            .object(Dictionary(members.map { (DisplayText.sanitized($0.key), $0.value.sanitizedForDisplay) }) { first, _ in first })
        case .null, .bool, .number: self
        }
    }
}
