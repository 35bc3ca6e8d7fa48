/// Why a plugin operation produced no outcome: a failure value with a reason for the user.
///
/// The host never throws these: a crash, a hang or a garbled reply is an expected
/// outcome of running other people's programs, so it comes back inside ``PluginReply``.
public struct PluginFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The plugin process ended (or closed its output) during an operation.
        public static let crashed = Kind("crashed")
        /// The plugin did not answer within the time limit; it was killed.
        public static let timedOut = Kind("timedOut")
        /// The plugin wrote a line that is not a valid protocol message, or the wrong reply.
        public static let malformedReply = Kind("malformedReply")
        /// The plugin wrote a line longer than ``PluginLimits/maximumLineLength``; it was killed.
        public static let oversizedReply = Kind("oversizedReply")
        /// The plugin exited before answering the handshake.
        public static let exitedAtStart = Kind("exitedAtStart")
        /// The plugin speaks another protocol version, or claims another app id.
        public static let protocolMismatch = Kind("protocolMismatch")
        /// The executable could not be started (missing, not executable).
        public static let launchFailed = Kind("launchFailed")
        /// The plugin answered with an `error` reply: it cannot serve this request.
        public static let pluginError = Kind("pluginError")
        /// The host was shut down.
        public static let shutDown = Kind("shutDown")

        public var description: String { name }
    }

    /// What went wrong.
    public var kind: Kind
    /// A sentence for the user: "Timers stopped unexpectedly (signal 11)."
    public var reason: String
    /// The plugin's app id.
    public var appID: String

    /// Creates a failure.
    public init(_ kind: Kind, reason: String, appID: String) {
        self.kind = kind
        self.reason = reason
        self.appID = appID
    }

    public var description: String { reason }
}

/// The answer to one plugin operation: its outcome or a failure, and how long it took.
public struct PluginReply<Outcome: Sendable>: Sendable {
    /// The plugin's outcome, or why there is none.
    public var result: Result<Outcome, PluginFailure>
    /// The time from the call to the answer, including a start or restart of the plugin.
    public var duration: Duration

    /// Creates a reply.
    public init(result: Result<Outcome, PluginFailure>, duration: Duration) {
        self.result = result
        self.duration = duration
    }

    /// The outcome, or `nil` on failure.
    public var outcome: Outcome? { try? result.get() }

    /// The failure, or `nil` when there is an outcome.
    public var failure: PluginFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }
}

extension PluginReply: Equatable where Outcome: Equatable {}

/// Time and size limits of a plugin host.
public struct PluginLimits: Sendable, Hashable {
    /// How long resolve, confirm and handle may take. Defaults to 3 seconds.
    public var operationTimeLimit: Duration
    /// How long starting the process and the handshake may take. Defaults to 5 seconds.
    public var startTimeLimit: Duration
    /// The longest line a plugin may write, in bytes. Defaults to 1 MiB.
    public var maximumLineLength: Int
    /// How long a plugin has to exit after `shutdown` before it is terminated. Defaults to 0.5 s.
    public var shutdownGracePeriod: Duration
    /// The wait before the first restart after a failure; it doubles with each failure in a row.
    /// Defaults to 50 ms.
    public var initialRestartDelay: Duration
    /// The longest wait before a restart. Defaults to 5 seconds.
    public var maximumRestartDelay: Duration

    /// Creates limits.
    public init(
        operationTimeLimit: Duration = .seconds(3),
        startTimeLimit: Duration = .seconds(5),
        maximumLineLength: Int = 1 << 20,
        shutdownGracePeriod: Duration = .milliseconds(500),
        initialRestartDelay: Duration = .milliseconds(50),
        maximumRestartDelay: Duration = .seconds(5)
    ) {
        self.operationTimeLimit = operationTimeLimit
        self.startTimeLimit = startTimeLimit
        self.maximumLineLength = maximumLineLength
        self.shutdownGracePeriod = shutdownGracePeriod
        self.initialRestartDelay = initialRestartDelay
        self.maximumRestartDelay = maximumRestartDelay
    }

    /// The default limits.
    public static let standard = PluginLimits()
}
