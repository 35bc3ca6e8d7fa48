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
