public import Foundation
public import HeedPluginProtocol
public import Logging

/// Runs one plugin as a long-lived child process and talks the plugin protocol with it.
///
/// The process starts on first use and is reused. Each start does the versioned handshake.
/// Every operation has a time limit. A crash, a hang, a malformed or oversized reply, an
/// exit at start or a protocol mismatch comes back as a ``PluginFailure`` in the
/// ``PluginReply`` — never thrown — and the process is started again on the next use, after
/// a delay that doubles with each failure in a row (``PluginLimits/initialRestartDelay`` up to
/// ``PluginLimits/maximumRestartDelay``).
///
/// Each host is its own actor and its reads happen on threads of its own, so a slow plugin
/// never holds up another. Operations on one host are served one at a time, in call order.
///
/// ```swift
/// let host = PluginHost(manifest: manifest, executableURL: manifest.executableURL(), logger: logger)
/// let reply = await host.resolve(intent: PluginIntent(name: "playMedia", parameters: ["playlist": "road trip"]),
///                                parameter: "playlist")
/// switch reply.result {
/// case .success(.disambiguation(let options)): ask(options)
/// case .success(let outcome): …
/// case .failure(let failure): say(failure.reason)
/// }
/// ```
public actor PluginHost {
    /// The plugin's manifest.
    public nonisolated let manifest: PluginManifest
    /// The executable that is started.
    public nonisolated let executableURL: URL
    /// The time and size limits.
    public nonisolated let limits: PluginLimits
    /// The folder the plugin may keep its state in, passed as `HEED_PLUGIN_STATE_DIR`.
    public nonisolated let stateDirectory: URL?
    /// What the plugin tells the user unasked, across restarts. Finishes at ``shutdown()``.
    public nonisolated let notifications: AsyncStream<PluginNotification>
    /// What the plugin reports unasked besides notifications, across restarts: its app's activities
    /// (`.activities`) and the strings of its vocabulary types (`.vocabulary`). Finishes at ``shutdown()``.
    public nonisolated let reports: AsyncStream<PluginMessage>

    private let notificationContinuation: AsyncStream<PluginNotification>.Continuation
    private let reportContinuation: AsyncStream<PluginMessage>.Continuation
    private let logger: Logger
    private var connection: PluginConnection?
    private var nextRequestID = 1
    private var failuresInARow = 0
    private var restartNotBefore: ContinuousClock.Instant?
    private var isShutDown = false
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// How many times the process was started.
    public private(set) var launchCount = 0

    /// Creates a host; nothing starts until the first operation (or ``start()``).
    /// - Parameters:
    ///   - manifest: The plugin's manifest.
    ///   - executableURL: The executable; usually `manifest.executableURL()`.
    ///   - limits: Time and size limits.
    ///   - stateDirectory: The folder the plugin may keep its state in (created, mode 0700, when
    ///     the plugin starts), passed to it as `HEED_PLUGIN_STATE_DIR`; `nil` passes none.
    ///   - logger: Receives the plugin's standard error (at info level) and the host's events.
    public init(
        manifest: PluginManifest, executableURL: URL, limits: PluginLimits = .standard, stateDirectory: URL? = nil,
        logger: Logger
    ) {
        self.manifest = manifest
        self.executableURL = executableURL
        self.limits = limits
        self.stateDirectory = stateDirectory
        self.logger = logger
        (notifications, notificationContinuation) = AsyncStream.makeStream(
            of: PluginNotification.self, bufferingPolicy: .bufferingNewest(256))
        (reports, reportContinuation) = AsyncStream.makeStream(of: PluginMessage.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit {
        connection?.close(.shutDown, detail: "was shut down")
        notificationContinuation.finish()
        reportContinuation.finish()
    }

    /// Whether the plugin process is running now.
    public var isRunning: Bool { connection.map { !$0.isClosed } ?? false }

    /// The process id of the running plugin, if any.
    public var processIdentifier: Int32? { isRunning ? connection?.processIdentifier : nil }

    // MARK: Operations

    /// Starts the plugin now, if it is not running, instead of on first use.
    /// - Returns: The handshake's failure, or `nil` when the plugin is running.
    @discardableResult
    public func start() async -> PluginFailure? {
        await withTurn {
            if case .failure(let failure) = await ensureStarted() { return failure }
            return nil
        }
    }

    /// Asks the plugin to resolve one parameter.
    /// - Parameters:
    ///   - intent: The intent with the values known so far.
    ///   - parameter: The parameter to resolve.
    ///   - userChoice: Whether the parameter's value is one the user picked from this plugin's
    ///     disambiguation list or confirmed.
    /// - Returns: The outcome, or the failure, and the time taken.
    public func resolve(intent: PluginIntent, parameter: String, userChoice: Bool = false) async
        -> PluginReply<ResolveOutcome>
    {
        await perform(.resolve(intent, parameter: parameter, userChoice: userChoice)) { body in
            if case .resolve(let outcome) = body { return outcome }
            return nil
        }
    }

    /// Asks the plugin whether the intent can be handled.
    /// - Parameter intent: The intent with resolved parameters.
    /// - Returns: `ready` or `failure(reason)`, or the failure of the plugin itself, and the time taken.
    public func confirm(_ intent: PluginIntent) async -> PluginReply<ConfirmOutcome> {
        await perform(.confirm(intent)) { body in
            if case .confirm(let outcome) = body { return outcome }
            return nil
        }
    }

    /// Asks the plugin to carry out the intent.
    /// - Parameter intent: The intent with resolved parameters.
    /// - Returns: The outcome with its response text, or the failure, and the time taken.
    public func handle(_ intent: PluginIntent) async -> PluginReply<HandleOutcome> {
        await perform(.handle(intent)) { body in
            if case .handle(let outcome) = body { return outcome }
            return nil
        }
    }

    /// Asks the plugin for its app's ongoing activities.
    /// - Returns: The activities, or the failure (a plugin that does not know the request answers
    ///   with an error), and the time taken.
    public func activities() async -> PluginReply<[PluginActivity]> {
        await perform(.activities) { body in
            if case .activities(let activities) = body { return activities }
            return nil
        }
    }

    /// Stops the plugin: sends `shutdown`, waits ``PluginLimits/shutdownGracePeriod``, then
    /// terminates it (`SIGTERM`) and, if it still runs, kills it (`SIGKILL`). Later operations
    /// fail with ``PluginFailure/Kind/shutDown``; ``notifications`` finishes.
    public func shutdown() async {
        // Not in turn: an operation in flight (a hung plugin) must not hold the shutdown up to its
        // time limit. Closing the connection ends that operation as `shutDown`.
        isShutDown = true
        if let connection, !connection.isClosed {
            connection.post(PluginRequest(id: nextRequestID, .shutdown))
            nextRequestID += 1
            connection.closeInput()
            // Before the plugin ends: its end must not be reported to them as a crash.
            connection.endRequests(.shutDown, detail: "was shut down")
            if await !connection.waitForExit(timeLimit: limits.shutdownGracePeriod) {
                logger.info("plugin did not exit after shutdown; terminating", metadata: metadata)
                connection.signal(SIGTERM)
                if await !connection.waitForExit(timeLimit: .milliseconds(200)) { connection.signal(SIGKILL) }
            }
            connection.close(.shutDown, detail: "was shut down")
        }
        await withTurn {
            connection = nil
            notificationContinuation.finish()
            reportContinuation.finish()
        }
    }

    // MARK: Internals

    private var metadata: Logger.Metadata { ["plugin": "\(manifest.appID)"] }

    /// Runs `body` when no other operation of this host is running.
    private func withTurn<T: Sendable>(_ body: () async -> T) async -> T {
        if busy {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
        return await body()
    }

    private func perform<Outcome: Sendable>(
        _ body: PluginRequest.Body, extract: @Sendable (PluginResponse.Body) -> Outcome?
    ) async -> PluginReply<Outcome> {
        let clock = ContinuousClock()
        let start = clock.now
        let result: Result<Outcome, PluginFailure> = await withTurn {
            let connection: PluginConnection
            switch await ensureStarted() {
            case .success(let started): connection = started
            case .failure(let failure): return .failure(failure)
            }
            let request = PluginRequest(id: nextRequestID, body)
            nextRequestID += 1
            switch await connection.send(request, timeLimit: limits.operationTimeLimit) {
            case .reply(.error(let message)):
                failuresInARow = 0
                return .failure(failure(.pluginError, "\(manifest.displayName) could not do that: \(message)"))
            case .reply(let reply):
                guard let outcome = extract(reply) else {
                    return .failure(
                        processFailed(
                            connection, .malformedReply,
                            "\(manifest.displayName) answered a \(request.operation) request with the wrong kind of reply."))
                }
                failuresInARow = 0
                return .success(outcome)
            case .failure(let kind, let detail):
                return .failure(processFailed(connection, kind, sentence(kind, detail, operation: request.operation)))
            }
        }
        return PluginReply(result: result, duration: clock.now - start)
    }

    private func failure(_ kind: PluginFailure.Kind, _ reason: String) -> PluginFailure {
        PluginFailure(kind, reason: reason, appID: manifest.appID)
    }

    /// Kills the process, schedules the restart delay and returns the failure.
    private func processFailed(_ connection: PluginConnection, _ kind: PluginFailure.Kind, _ reason: String)
        -> PluginFailure
    {
        connection.close(kind, detail: reason)
        if self.connection === connection { self.connection = nil }
        failuresInARow += 1
        let exponent = min(failuresInARow - 1, 20)
        let delay = min(limits.initialRestartDelay * (1 << exponent), limits.maximumRestartDelay)
        restartNotBefore = .now + delay
        logger.info(
            "plugin failed",
            metadata: metadata.merging(
                ["kind": "\(kind)", "reason": "\(reason)", "restartDelay": "\(delay)"], uniquingKeysWith: { $1 }))
        return failure(kind, reason)
    }

    private func sentence(_ kind: PluginFailure.Kind, _ detail: String, operation: String) -> String {
        let name = manifest.displayName
        switch kind {
        case .timedOut: return "\(name) did not answer within \(limits.operationTimeLimit) and was stopped."
        case .crashed: return "\(name) stopped unexpectedly: it \(detail)."
        case .oversizedReply, .malformedReply: return "\(name) sent a reply Heed cannot read: it \(detail)."
        default: return "\(name) failed: \(detail)."
        }
    }

    /// The running connection, starting the plugin (after any restart delay) and doing the handshake.
    private func ensureStarted() async -> Result<PluginConnection, PluginFailure> {
        if isShutDown { return .failure(failure(.shutDown, "\(manifest.displayName) has been shut down.")) }
        if let connection, !connection.isClosed { return .success(connection) }
        connection = nil
        if let restartNotBefore, restartNotBefore > .now {
            try? await Task.sleep(until: restartNotBefore, clock: .continuous)
        }
        let name = manifest.displayName
        let started: PluginConnection
        do {
            let notifications = notificationContinuation
            let reports = reportContinuation
            var environment: [String: String] = [:]
            if let stateDirectory {
                try FileManager.default.createDirectory(
                    at: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                environment["HEED_PLUGIN_STATE_DIR"] = stateDirectory.path
            }
            started = try PluginConnection.launch(
                executableURL: executableURL, arguments: manifest.arguments, appID: manifest.appID, environment: environment,
                maximumLineLength: limits.maximumLineLength, logger: logger,
                onUnsolicited: { message in
                    switch message {
                    case .notification(let notification): notifications.yield(notification)
                    case .activities, .vocabulary: reports.yield(message)
                    case .response: break
                    }
                })
        } catch {
            failuresInARow += 1
            restartNotBefore = .now + limits.initialRestartDelay
            return .failure(failure(.launchFailed, "\(name) could not be started (\(executableURL.path)): \(error)."))
        }
        launchCount += 1
        logger.info("started plugin", metadata: metadata.merging(["pid": "\(started.processIdentifier)"]) { $1 })
        let hello = PluginRequest(
            id: nextRequestID, .hello(PluginProtocolHeader(), intents: manifest.intents))
        nextRequestID += 1
        switch await started.send(hello, timeLimit: limits.startTimeLimit) {
        case .reply(.hello(let reply)):
            guard reply.header.serializationVersion == PluginProtocol.serializationVersion else {
                return .failure(
                    processFailed(
                        started, .protocolMismatch,
                        "\(name) speaks plugin protocol version \(reply.header.serializationVersion); "
                            + "Heed speaks version \(PluginProtocol.serializationVersion)."))
            }
            guard reply.appID == manifest.appID else {
                return .failure(
                    processFailed(
                        started, .protocolMismatch,
                        "\(name) says it is '\(reply.appID)', but its manifest says '\(manifest.appID)'."))
            }
            let missing = manifest.intents.filter { !reply.intents.contains($0) }
            if !missing.isEmpty {
                logger.info(
                    "plugin does not handle every intent of its manifest",
                    metadata: metadata.merging(["missing": "\(missing)"]) { $1 })
            }
            connection = started
            return .success(started)
        case .reply:
            return .failure(
                processFailed(started, .protocolMismatch, "\(name) did not answer the handshake with a hello reply."))
        case .failure(.crashed, let detail):
            return .failure(processFailed(started, .exitedAtStart, "\(name) exited while starting: it \(detail)."))
        case .failure(.timedOut, _):
            return .failure(
                processFailed(
                    started, .timedOut, "\(name) did not answer the handshake within \(limits.startTimeLimit)."))
        case .failure(let kind, let detail):
            return .failure(processFailed(started, kind, sentence(kind, detail, operation: "hello")))
        }
    }
}
