import Foundation
import HeedClient
public import HeedRuntime
public import HeedService
public import Logging
public import ServiceLifecycle
import HeedIntents
import HeedPlugins
import HeedState
import Synchronization

/// The Wyoming door of `heed serve`: Home Assistant and voice satellites ask Heed for speech to
/// text, intents, handling and its wake phrase (docs/WYOMING.md).
///
/// A thread accepts each listener's connections; each connection has a thread that reads its
/// events and answers them in order, with decoders of its own. Handling a command goes through
/// the service's ``Dispatcher`` inside ``run()``, so the conversation with the plugin runs in
/// structured concurrency while the connection's thread waits for its outcome.
public final class WyomingService: Service, Sendable {
    /// The door's settings.
    public struct Configuration: Sendable {
        /// The version reported in `info`.
        public var version: String
        /// The wake phrase `detect` spots.
        public var wakePhrase: String
        /// The confidence the wake phrase must reach.
        public var wakeThreshold: Double
        /// The most transcriptions that stream `transcript-start`/`-chunk`/`-stop` while their
        /// audio comes, at once; 0 turns partial results off. Each decodes its stream live on a
        /// second decoder, about half again the CPU of its final transcript: streams beyond the
        /// limit get the final transcript only, so that many satellites speaking at once stay
        /// real-time.
        public var partialStreams: Int
        /// Whether any transcription streams partial results.
        public var partialResults: Bool { partialStreams > 0 }
        /// The default of ``partialStreams``: one per processor core.
        public static var defaultPartialStreams: Int { ProcessInfo.processInfo.activeProcessorCount }
        /// What one event may hold.
        public var limits: WyomingLimits
        /// The most audio one transcription or detection takes, in seconds.
        public var maximumSeconds: Double

        public init(
            version: String, wakePhrase: String = "hey heed", wakeThreshold: Double = WakePhraseSpotter.defaultThreshold,
            partialStreams: Int = Configuration.defaultPartialStreams, limits: WyomingLimits = .standard,
            maximumSeconds: Double = 60
        ) {
            self.version = version
            self.wakePhrase = wakePhrase
            self.wakeThreshold = wakeThreshold
            self.partialStreams = max(0, partialStreams)
            self.limits = limits
            self.maximumSeconds = maximumSeconds
        }
    }

    /// A command for the dispatcher and where its outcome goes.
    struct HandleJob: Sendable {
        let match: IntentMatch
        /// The registered vocabulary the command was parsed with, for the answers to questions.
        let vocabulary: VocabularySnapshot
        let done: @Sendable (WyomingUser.Outcome) -> Void
    }

    private struct State {
        var connections: [Int: WyomingConnection] = [:]
        var nextConnection = 1
        var stopping = false
    }

    let listeners: [WyomingListener]
    let configuration: Configuration
    let permission: ClientPermission
    let recognizers: Recognizers
    let dispatcher: Dispatcher?
    let logger: Logger
    let emit: @Sendable (ServiceEvent) -> Void
    private let state = Mutex(State())
    /// The transcriptions streaming partial results now.
    let partialSlots: PartialSlots
    private let accepting: AcceptLoop
    private let jobs: AsyncStream<HandleJob>
    private let jobContinuation: AsyncStream<HandleJob>.Continuation

    /// Creates the door over listeners opened with ``WyomingListener/open(_:clientAppID:removedStale:)``.
    /// - Parameters:
    ///   - dispatcher: Carries commands to plugins; `nil` answers handling requests with `not-handled`.
    ///   - emit: Receives the door's events for the service's log.
    /// - Throws: ``WyomingAddressError`` when the wake-up pipe cannot be made.
    public init(
        listeners: [WyomingListener], configuration: Configuration, permission: ClientPermission, recognizers: Recognizers,
        dispatcher: Dispatcher?, logger: Logger, emit: @escaping @Sendable (ServiceEvent) -> Void
    ) throws {
        self.listeners = listeners
        self.configuration = configuration
        self.permission = permission
        self.recognizers = recognizers
        self.dispatcher = dispatcher
        self.logger = logger
        self.emit = emit
        self.partialSlots = PartialSlots(limit: configuration.partialStreams)
        do {
            accepting = try AcceptLoop()
        } catch {
            throw WyomingAddressError("cannot start the Wyoming door: \(error)")
        }
        (jobs, jobContinuation) = AsyncStream.makeStream(of: HandleJob.self)
    }

    public func run() async throws {
        for listener in listeners {
            var event = ServiceEvent("wyomingListening")
            event.socket = listener.address.description
            event.appId = listener.clientAppID
            if !listener.address.isLocal {
                event.message = "not a loopback address: other machines can connect; Wyoming has no authentication or encryption"
            }
            emit(event)
        }
        let zeroconf = Zeroconf.announce(listeners.map(\.address), logger: logger, emit: emit)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [self] in
                    await accepting.run(listeners.map(\.descriptor), threadName: "heed serve wyoming accept") { [logger] error in
                        logger.warning("heed serve wyoming: \(error)")
                    } accepted: { [self] index, descriptor in
                        open(descriptor, on: listeners[index])
                    }
                    closeConnections()
                    jobContinuation.finish()
                }
                for await job in jobs {
                    group.addTask { [self] in await handle(job) }
                }
            }
        } onGracefulShutdown: { [self] in
            stop()
        }
        zeroconf?.stop()
        await dispatcher?.shutdown()
    }

    /// Stops accepting, closes every connection and ends ``run()``.
    public func stop() {
        accepting.stop()
    }

    private func open(_ descriptor: Int32, on listener: WyomingListener) {
        if case .tcp = listener.address { UnixSocket.setNoDelay(descriptor) }
        let connection = state.withLock { state in
            defer { state.nextConnection += 1 }
            let connection = WyomingConnection(descriptor: descriptor, number: state.nextConnection, listener: listener, service: self)
            state.connections[connection.number] = connection
            return connection
        }
        connection.start()
    }

    private func closeConnections() {
        let connections = state.withLock { state in
            state.stopping = true
            return Array(state.connections.values)
        }
        for listener in listeners { listener.close() }
        for connection in connections { connection.close() }
        var event = ServiceEvent("wyomingStopped")
        event.message = "\(connections.count) connection(s) closed"
        emit(event)
    }

    /// Forgets a connection that ended.
    func remove(_ connection: WyomingConnection) {
        state.withLock { _ = $0.connections.removeValue(forKey: connection.number) }
    }

    /// Whether the door is stopping.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Carries a command through its conversation; called from a connection's thread, which waits.
    func submit(_ job: HandleJob) {
        if case .terminated = jobContinuation.yield(job) {
            job.done(WyomingUser.Outcome(handled: false, text: "Heed is stopping; try again when it is back."))
        }
    }

    private func handle(_ job: HandleJob) async {
        guard let dispatcher else {
            job.done(WyomingUser.Outcome(handled: false, text: "this Heed serves no plugins"))
            return
        }
        let user = WyomingUser()
        let result = await dispatcher.dispatch(job.match, vocabulary: job.vocabulary, user: user)
        job.done(await user.outcome(of: result))
    }
}

/// The person behind a Wyoming request: Wyoming's handle events cannot ask a question back and
/// wait for its answer in the same request, so a question ends the conversation and becomes
/// the `not-handled` text.
actor WyomingUser: ConversationUser {
    /// What the peer is told.
    struct Outcome: Sendable {
        var handled: Bool
        var text: String
    }

    private var question: String?

    func ask(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String? {
        // Heed's own question (authorization, `app` nil) is not the plugin's: the ending says why.
        if app != nil, self.question == nil { self.question = question }
        return nil
    }

    func tell(_ text: String, app: PluginManifest?) async {}

    /// The reply for how the conversation ended.
    func outcome(of result: ConversationResult) -> Outcome {
        if result.ending == .success || result.ending == .inProgress { return Outcome(handled: true, text: result.message) }
        if result.ending == .cancelled, let question {
            return Outcome(handled: false, text: question + " (Heed needs an answer to go on: say the whole command again with it.)")
        }
        return Outcome(handled: false, text: result.message)
    }
}

/// Counts the transcriptions that stream partial results, up to a limit.
final class PartialSlots: Sendable {
    private let taken = Mutex(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a slot; `false` when all are taken.
    func take() -> Bool {
        taken.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives a slot back.
    func give() {
        taken.withLock { $0 = max(0, $0 - 1) }
    }
}
