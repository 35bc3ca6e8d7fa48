import Dispatch
import Foundation
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
/// The process is started with Foundation's `Process` on our own descriptors: close-on-exec
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
        var process: Process?
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
    ///   - maximumLineLength: The longest output line accepted, in bytes.
    ///   - logger: Receives each line of the plugin's standard error.
    ///   - onNotification: Called on the reader thread for each notification line.
    /// - Returns: The connection.
    /// - Throws: An `Errno`-like error or Foundation's error when the process cannot be started.
    static func launch(
        executableURL: URL,
        arguments: [String],
        appID: String,
        maximumLineLength: Int,
        logger: Logger,
        onNotification: @escaping @Sendable (PluginNotification) -> Void
    ) throws -> PluginConnection {
        let sockets = try makeSocketPair()
        let output: [Int32]
        let errorOutput: [Int32]
        do {
            output = try makeSocketPair()
        } catch {
            closeAll(sockets)
            throw error
        }
        do {
            errorOutput = try makeSocketPair()
        } catch {
            closeAll(sockets + output)
            throw error
        }

        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        process.standardInput = FileHandle(fileDescriptor: sockets[1], closeOnDealloc: false)
        process.standardOutput = FileHandle(fileDescriptor: output[1], closeOnDealloc: false)
        process.standardError = FileHandle(fileDescriptor: errorOutput[1], closeOnDealloc: false)
        do {
            try process.run()
        } catch {
            closeAll(sockets + output + errorOutput)
            throw error
        }
        // The child has its copies; ours would keep end-of-file from ever arriving.
        closeAll([sockets[1], output[1], errorOutput[1]])

        let connection = PluginConnection(inputDescriptor: sockets[0], processIdentifier: process.processIdentifier)
        connection.state.withLock { $0.process = process }
        process.terminationHandler = { [weak connection] process in
            let status =
                process.terminationReason == .uncaughtSignal
                ? "was killed by signal \(process.terminationStatus)"
                : "exited with status \(process.terminationStatus)"
            connection?.state.withLock { $0.exitStatus = status }
        }

        let outputDescriptor = output[0]
        let outputThread = Thread { [connection] in
            connection.readOutput(from: outputDescriptor, maximumLineLength: maximumLineLength, onNotification: onNotification)
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

    private static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }

    /// A connected pair of close-on-exec stream sockets; the child gets index 1.
    private static func makeSocketPair() throws -> [Int32] {
        var descriptors: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return descriptors
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
        let pending = state.withLock { state -> [CheckedContinuation<ConnectionEvent, Never>] in
            if state.closed == nil { state.closed = (kind, detail) }
            let pending = Array(state.pending.values)
            state.pending.removeAll()
            return pending
        }
        for continuation in pending { continuation.resume(returning: .failure(kind, detail: detail)) }
        signal(SIGKILL)
        closeInput()
    }

    /// Sends a signal to the process if it has not ended yet.
    func signal(_ signal: Int32) {
        state.withLock { state in
            if state.exitStatus == nil, state.process?.isRunning == true { _ = kill(processIdentifier, signal) }
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
            if state.withLock({ $0.process?.isRunning != true }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.withLock { $0.process?.isRunning != true }
    }

    // MARK: Reading (dedicated threads)

    private func readOutput(
        from descriptor: Int32, maximumLineLength: Int, onNotification: @Sendable (PluginNotification) -> Void
    ) {
        defer { _ = Glibc.close(descriptor) }
        let decoder = JSONDecoder()
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
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
                if !handleLine(line, decoder: decoder, onNotification: onNotification) { return }
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
        _ line: [UInt8], decoder: JSONDecoder, onNotification: @Sendable (PluginNotification) -> Void
    ) -> Bool {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return true }
        let message: PluginMessage
        do {
            message = try decoder.decode(PluginMessage.self, from: Data(line))
        } catch {
            let text = String(decoding: line.prefix(120), as: UTF8.self)
            close(.malformedReply, detail: "wrote a line that is not a protocol message: \(text)")
            return false
        }
        switch message {
        case .notification(let notification):
            onNotification(notification)
        case .response(let response):
            take(response.id)?.resume(returning: .reply(response.body))
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
                "\(String(decoding: line, as: UTF8.self))", metadata: ["plugin": "\(appID)", "stream": "stderr"])
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
