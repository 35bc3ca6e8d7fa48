public import ServiceLifecycle
import Synchronization
public import UnixSignals

// The listener as services of a swift-service-lifecycle group: the command line runs them
// beside a signal handler and stops them together.

/// Runs the listener until it ends, and stops it on SIGINT or SIGTERM.
public final class ListenerService: Service {
    public let listener: Listener
    private let ending = Mutex<(any Error)?>(nil)

    /// What ended the listener, when it failed: reported after the group has shut down.
    public var failure: (any Error)? { ending.withLock { $0 } }

    public init(listener: Listener) { self.listener = listener }

    public func run() async throws {
        let listener = self.listener
        do {
            try await withGracefulShutdownHandler {
                try await listener.run()
            } onGracefulShutdown: {
                listener.stop()
            }
        } catch {
            ending.withLock { $0 = error }
        }
    }
}

/// Turns SIGUSR1 into a push of push-to-talk.
public struct PushToTalkService: Service {
    public let listener: Listener
    public let signals: UnixSignalsSequence

    public init(listener: Listener, signals: UnixSignalsSequence) {
        self.listener = listener
        self.signals = signals
    }

    public func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            listener.pushToTalk()
        }
    }
}
