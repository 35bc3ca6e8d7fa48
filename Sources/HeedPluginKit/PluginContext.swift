internal import Foundation
internal import HeedPluginProtocol
internal import Synchronization

/// The plugin's connection to Heed, handed to every handler call.
///
/// It is `Sendable` and may be kept: a handler that starts a timer keeps it to
/// ``notify(_:intent:event:)`` when the timer ends.
public struct PluginContext: Sendable {
    let output: LineWriter

    /// The plugin's app id.
    public let appID: String

    /// The folder the plugin may keep its state in across runs (`HEED_PLUGIN_STATE_DIR`, one per
    /// app, mode 0700), or `nil` when Heed gave none. `heed run` starts a plugin for one command,
    /// so anything that must outlive it (a workout in progress) belongs here.
    public var stateDirectory: String? { Self.stateDirectory }

    /// ``stateDirectory``, for what a plugin sets up before it runs.
    public static var stateDirectory: String? {
        ProcessInfo.processInfo.environment["HEED_PLUGIN_STATE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Tells Heed the app's activities now, unasked: call it whenever one starts, pauses, resumes
    /// or ends, so that a listening Heed routes bare commands and its context grammar right.
    /// - Parameter activities: Every activity going on now (an empty list when none is).
    public func reportActivities(_ activities: [PluginActivity]) {
        output.write(.activities(activities))
    }

    /// Registers the strings of one of the app's vocabulary types (declared in its manifest), as
    /// SiriKit's `setVocabularyStrings(_:of:)`: the whole list, most important first, replacing the
    /// one before. Heed keeps it only while the app is authorized, and the listener hears the new
    /// words from its next utterance on.
    /// - Parameters:
    ///   - terms: The strings, e.g. the names of the players running.
    ///   - type: The vocabulary type, e.g. `mediaPlayer`.
    public func setVocabulary(_ terms: [String], type: String) {
        output.write(.vocabulary(type: type, terms: terms))
    }

    /// Tells the user something unasked: Heed shows and speaks `text`.
    /// - Parameters:
    ///   - text: A sentence for the user, e.g. "Your pasta timer is done."
    ///   - intent: The intent it relates to, if any.
    ///   - event: A short machine-readable event name, if any (`timerFired`).
    public func notify(_ text: String, intent: String? = nil, event: String? = nil) {
        output.write(.notification(PluginNotification(text: text, intent: intent, event: event)))
    }
}

/// Writes whole JSON lines to standard output, one writer at a time.
final class LineWriter: Sendable {
    private let lock = Mutex(())
    private let fileDescriptor: Int32

    init(fileDescriptor: Int32 = 1) { self.fileDescriptor = fileDescriptor }

    func write(_ message: PluginMessage) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(message) else { return }
        data.append(0x0A)
        lock.withLock { _ in
            data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }
    }
}
