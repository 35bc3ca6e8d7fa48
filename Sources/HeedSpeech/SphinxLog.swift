import Logging
import Synchronization

/// Receives sphinxbase's log, line by line, and hands it to a swift-log `Logger`.
///
/// PocketSphinx logs model loading and decoding details at its "info" level and
/// expected conditions (no phone language model, no end node in silence) as warnings;
/// those go to `debug`, its errors to `info` (a library logs at info or below).
/// The last error lines are kept so that Heed's own errors can quote them.
///
/// sphinxbase has one log callback for the whole process, so there is one sink: each new
/// recognizer points it at its own logger.
final class SphinxLogSink: Sendable {
    private struct State {
        var logger: Logger?
        var pending = ""
        var recentErrors: [String] = []
        var pendingLevel = 1
    }

    /// The process's sink, installed as sphinxbase's log callback on first use.
    static let shared: SphinxLogSink = {
        let sink = SphinxLogSink()
        installSphinxLog(sink)
        return sink
    }()

    private let state = Mutex(State())

    private init() {}

    /// Sends sphinxbase's log to `logger` from now on.
    func use(_ logger: Logger) {
        state.withLock { $0.logger = logger }
    }

    /// Takes a formatted fragment; sphinxbase sends a line in several pieces.
    func receive(level: Int, fragment: String) {
        let (logger, lines): (Logger?, [(Int, String)]) = state.withLock { state in
            if level != 2 { state.pendingLevel = level }  // 2 is ERR_INFOCONT: continues the line
            state.pending += fragment
            var complete: [(Int, String)] = []
            while let newline = state.pending.firstIndex(of: "\n") {
                let line = String(state.pending[..<newline])
                state.pending.removeSubrange(...newline)
                complete.append((state.pendingLevel, line))
                if state.pendingLevel >= 3 {
                    state.recentErrors.append(line)
                    if state.recentErrors.count > 8 { state.recentErrors.removeFirst() }
                }
            }
            return (state.logger, complete)
        }
        guard let logger else { return }
        for (level, line) in lines where !line.isEmpty {
            logger.log(level: level >= 4 ? .info : .debug, "\(line)", metadata: ["source": "pocketsphinx"])
        }
    }

    /// Returns and forgets the warnings and errors logged since the last call.
    func takeRecentErrors() -> [String] {
        state.withLock { state in
            defer { state.recentErrors = [] }
            return state.recentErrors
        }
    }
}
