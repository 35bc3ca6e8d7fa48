import Foundation
import HeedClient
import Glibc
public import HeedRuntime
public import Logging
public import ServiceLifecycle
import Synchronization

/// Something the service did, for its log (`heed serve --json` prints each as a JSON line).
public struct ServiceEvent: Sendable, Encodable {
    /// `listening`, `staleSocketRemoved`, `connected`, `refused`, `task`, `final`, `disconnected`,
    /// `stopped`. Events never hold what a client's audio said: that is for the client only.
    public var event: String
    public var socket: String?
    /// The connection's number, counting from 1.
    public var connection: Int?
    public var pid: Int32?
    public var executable: String?
    public var appId: String?
    /// `task`: the task's id and its new state.
    public var task: String?
    /// How long something took, in milliseconds: for `handoff`, from the end the microphone
    /// heard to the result sent; for `final` and the Wyoming door's `wyomingTranscript`, the
    /// final decode.
    public var milliseconds: Double?
    public var state: String?
    public var status: String?
    public var message: String?

    /// Creates an event.
    public init(_ event: String) { self.event = event }
}

/// Why the service cannot start on its socket.
public struct ServiceSocketError: Error, CustomStringConvertible, Sendable {
    /// The whole message, naming the path.
    public var message: String
    public var description: String { message }
}

/// The listening socket of `heed serve`, made before the service runs so that a busy or
/// unusable socket ends the command with a clear error.
public struct ListeningSocket: Sendable {
    /// The listening descriptor.
    package let descriptor: Int32
    /// The socket file.
    public let path: String
    /// The file's inode: at the end the service removes the file only if it is still its own.
    let inode: UInt64
    /// Whether systemd made the socket and handed it over (socket activation): it keeps the file.
    public let activated: Bool

    /// The socket systemd handed over (socket activation: `LISTEN_PID` is this process,
    /// `LISTEN_FDS` is 1, the socket is descriptor 3), or `nil` when there is none.
    /// The variables are removed so that nothing this process starts takes them for its own.
    /// - Throws: ``ServiceSocketError`` when systemd passed more than one socket, or one that is
    ///   not a listening Unix stream socket on a file.
    public static func inherited(environment: [String: String]? = nil) throws(ServiceSocketError) -> ListeningSocket? {
        let environment = environment ?? ProcessInfo.processInfo.environment
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count > 0
        else { return nil }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        let descriptor: Int32 = 3  // SD_LISTEN_FDS_START
        guard count == 1 else {
            throw ServiceSocketError(message: "systemd passed \(count) sockets; heed serve takes one (a .socket unit with one ListenStream=)")
        }
        guard let path = UnixSocket.listeningPath(descriptor) else {
            throw ServiceSocketError(message: "the socket systemd passed (descriptor 3) is not a listening Unix stream socket on a file: use ListenStream=%t/heed/heed.sock")
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var information = stat()
        _ = lstat(path, &information)
        return ListeningSocket(descriptor: descriptor, path: path, inode: UInt64(information.st_ino), activated: true)
    }

    /// Creates the socket file, its folder (0700) and removes a stale socket left by a crashed service.
    ///
    /// - Parameters:
    ///   - path: The socket file.
    ///   - removedStale: Called when a stale socket file was removed.
    /// - Returns: The socket.
    /// - Throws: ``ServiceSocketError`` when another service answers there, the path is not a
    ///   socket, or the folder or socket cannot be made.
    public static func open(at path: String, removedStale: () -> Void = {}) throws(ServiceSocketError) -> ListeningSocket {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try makeFolder(folder) }
        var information = stat()
        if lstat(path, &information) == 0 {
            guard information.st_mode & S_IFMT == S_IFSOCK else {
                throw ServiceSocketError(message: "\(path) exists and is not a socket; move it away or give another --socket")
            }
            do {
                let probe = try UnixSocket.connect(to: path)
                UnixSocket.close(probe)
                throw ServiceSocketError(
                    message: "another Heed service answers on \(path): stop it first (systemctl --user stop heed-serve), or give another --socket")
            } catch let error as SocketError where error.code == ECONNREFUSED {
                // Nobody listens: a crashed service left it.
                guard unlink(path) == 0 else {
                    throw ServiceSocketError(message: "\(path): cannot remove the stale socket: \(String(cString: strerror(errno)))")
                }
                removedStale()
            } catch let error as ServiceSocketError {
                throw error
            } catch {
                throw ServiceSocketError(message: "\(path): cannot tell whether another service uses it: \(error)")
            }
        }
        let descriptor: Int32
        do {
            descriptor = try UnixSocket.listen(at: path)
        } catch {
            throw ServiceSocketError(message: "cannot listen on \(path): \(error.description)")
        }
        var created = stat()
        _ = lstat(path, &created)
        return ListeningSocket(descriptor: descriptor, path: path, inode: UInt64(created.st_ino), activated: false)
    }

    private static func makeFolder(_ folder: String) throws(ServiceSocketError) {
        var information = stat()
        if stat(folder, &information) != 0 {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ServiceSocketError(message: "cannot create the socket's folder \(folder): \(error.localizedDescription)")
            }
            return
        }
        guard information.st_mode & S_IFMT == S_IFDIR else {
            throw ServiceSocketError(message: "\(folder) is not a folder; give another --socket")
        }
        guard information.st_uid == getuid() else {
            throw ServiceSocketError(message: "\(folder) belongs to another user; give a --socket in a folder of yours")
        }
        if information.st_mode & 0o077 != 0, chmod(folder, 0o700) != 0 {
            throw ServiceSocketError(message: "\(folder): cannot make it private (0700): \(String(cString: strerror(errno)))")
        }
    }

    /// Closes the socket when the service will not run after all, and removes its file.
    public func close() {
        UnixSocket.close(descriptor)
        remove()
    }

    /// Removes the socket file if it is still the one this service made (systemd's stays).
    func remove() {
        guard !activated else { return }
        var information = stat()
        if lstat(path, &information) == 0, UInt64(information.st_ino) == inode { unlink(path) }
    }
}

/// `heed serve`: speech recognition for other programs on a Unix socket (protocol v1, see
/// docs/CLIENTS.md).
///
/// A thread accepts connections; each connection has a thread that reads its lines, and each
/// recognition task a thread that decodes, with a decoder of its own. Graceful shutdown stops
/// accepting, closes every connection (cancelling their tasks) and removes the socket file.
public final class SpeechService: Service, Sendable {
    /// The service's settings.
    public struct Configuration: Sendable {
        /// The version reported in `hello`.
        public var version: String
        /// Recognition tasks at once, over all clients; more get `busy`.
        public var maximumTasks: Int
        /// The longest audio a task takes when the client does not say, in seconds.
        public var defaultMaxDuration: Double
        /// The ALSA capture device of Heed's microphone, for hand-offs; `nil`: no microphone
        /// (requests for it get `unavailable`).
        public var microphoneDevice: String?
        /// The ALSA device the "listening" sound of a hand-off is played on; `nil`: no sound.
        public var signalDevice: String?
        /// Heed's runtime folder, whatever the socket: hand-off results are left in its
        /// `dictation/APP-ID/result.json`, and microphone claims are taken there. By default
        /// `$XDG_RUNTIME_DIR/heed`.
        public var runtimeFolder: String
        /// Where hand-off results are left: `FOLDER/APP-ID/result.json`.
        public var dictationFolder: String { runtimeFolder + "/dictation" }
        /// Seconds a hand-off waits for speech before it ends with `noSpeech`.
        public var noSpeechTimeout: Double

        public init(
            version: String, maximumTasks: Int = 4, defaultMaxDuration: Double = 60, microphoneDevice: String? = nil,
            signalDevice: String? = nil,
            runtimeFolder: String? = nil,
            noSpeechTimeout: Double = 8
        ) {
            self.version = version
            self.maximumTasks = maximumTasks
            self.defaultMaxDuration = defaultMaxDuration
            self.microphoneDevice = microphoneDevice
            self.signalDevice = signalDevice
            self.runtimeFolder = runtimeFolder ?? HeedProtocol.runtimeFolder()
            self.noSpeechTimeout = noSpeechTimeout
        }
    }

    private struct State {
        var connections: [Int: Connection] = [:]
        var nextConnection = 1
        var runningTasks = 0
        var stopping = false
        /// The app Heed's microphone records for, during a hand-off.
        var microphoneUser: String?
    }

    let socket: ListeningSocket
    let configuration: Configuration
    let permission: ClientPermission
    let recognizers: Recognizers
    /// The hands-free listener of `heed serve --listen`: it holds the microphone and lends it
    /// to hand-offs.
    let listener: Listener?
    let logger: Logger
    let emit: @Sendable (ServiceEvent) -> Void
    private let state = Mutex(State())
    private let accepting: AcceptLoop

    /// Creates the service on a socket made with ``ListeningSocket/open(at:removedStale:)``;
    /// with a `listener` (running beside it), hand-offs borrow its microphone.
    /// - Throws: ``ServiceSocketError`` when the wake-up pipe cannot be made.
    public init(
        socket: ListeningSocket, configuration: Configuration, permission: ClientPermission, recognizers: Recognizers,
        listener: Listener? = nil, logger: Logger, emit: @escaping @Sendable (ServiceEvent) -> Void
    ) throws {
        self.socket = socket
        self.configuration = configuration
        self.permission = permission
        self.recognizers = recognizers
        self.listener = listener
        self.logger = logger
        self.emit = emit
        do {
            accepting = try AcceptLoop()
        } catch {
            throw ServiceSocketError(message: "cannot start: \(error)")
        }
    }

    public func run() async throws {
        var event = ServiceEvent("listening")
        event.socket = socket.path
        emit(event)
        ServiceManager.notify("READY=1\nSTATUS=listening on \(socket.path)")
        await withGracefulShutdownHandler {
            await accepting.run([socket.descriptor], threadName: "heed serve accept") { [logger] error in
                logger.warning("heed serve: \(error)")
            } accepted: { [self] _, descriptor in
                let connection = state.withLock { state in
                    defer { state.nextConnection += 1 }
                    let connection = Connection(descriptor: descriptor, number: state.nextConnection, service: self)
                    state.connections[connection.number] = connection
                    return connection
                }
                connection.start()
            }
            closeConnections()
        } onGracefulShutdown: { [self] in
            stop()
        }
    }

    /// Stops accepting and ends the accept loop; ``run()`` then returns.
    public func stop() {
        ServiceManager.notify("STOPPING=1")
        accepting.stop()
    }

    private func closeConnections() {
        let connections = state.withLock { state in
            state.stopping = true
            return Array(state.connections.values)
        }
        UnixSocket.close(socket.descriptor)
        socket.remove()
        for connection in connections { connection.close() }
        var event = ServiceEvent("stopped")
        event.socket = socket.path
        emit(event)
    }

    // MARK: For connections

    /// Whether the service is stopping: new tasks are refused with `unavailable`.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Takes a place for a task, or `false` when all are taken.
    func reserveTask() -> Bool {
        state.withLock { state in
            guard state.runningTasks < configuration.maximumTasks else { return false }
            state.runningTasks += 1
            return true
        }
    }

    /// Takes Heed's microphone for a hand-off, or returns the app it records for now.
    func reserveMicrophone(for appID: String) -> String? {
        state.withLock { state in
            if let user = state.microphoneUser { return user }
            state.microphoneUser = appID
            return nil
        }
    }

    /// Gives Heed's microphone back.
    func releaseMicrophone() {
        state.withLock { $0.microphoneUser = nil }
    }

    /// Gives a task's place back.
    func releaseTask() {
        state.withLock { $0.runningTasks -= 1 }
    }

    /// Forgets a connection that ended.
    func remove(_ connection: Connection) {
        state.withLock { _ = $0.connections.removeValue(forKey: connection.number) }
    }
}
