import Foundation
import Synchronization

/// Questions put to the user as desktop notifications with two actions, through the
/// notification server of the session (`org.freedesktop.Notifications`, the Desktop
/// Notifications Specification: GNOME Shell, KDE Plasma, dunst, mako, …).
///
/// A question is a notification that stays until it is answered; the user's click comes back as
/// the `ActionInvoked` signal, a notification closed without a click as `NotificationClosed`.
package final class DesktopNotifications: Sendable {
    private static let name = "org.freedesktop.Notifications"
    private static let path = "/org/freedesktop/Notifications"

    private let bus: SessionBus
    /// Answers by notification id: the action's key, or `nil` for closed without one. A signal
    /// may be read before the asker knows its id, so answers wait here to be claimed.
    private let answers = Mutex<(pending: [UInt32: String?], closing: Set<UInt32>)>(([:], []))
    private let arrived = NSCondition()

    /// Connects to the session bus and its notification server.
    /// - Throws: ``BusError`` when there is no session bus, no notification server, or one that
    ///   cannot show actions (its capabilities lack `actions`).
    package init(address: String? = nil) throws(BusError) {
        bus = try SessionBus(address: address)
        let capabilities = try bus.call(Self.name, path: Self.path, interface: Self.name, member: "GetCapabilities").first?.strings ?? []
        guard capabilities.contains("actions") else {
            throw BusError(name: "capabilities", message: "the notification server cannot show actions (it offers \(capabilities.joined(separator: ", ")))")
        }
        // The bus keeps the handlers: they hold this object weakly.
        let record: @Sendable (UInt32, String?) -> Void = { [weak self] id, action in
            guard let self else { return }
            answers.withLock { answers in
                // The close Heed asked for (after a click, or a time-out) is not an answer.
                if action == nil, answers.closing.remove(id) != nil { return }
                answers.pending[id] = .some(action)
            }
            arrived.lock()
            arrived.broadcast()
            arrived.unlock()
        }
        try bus.onSignal(path: Self.path, interface: Self.name, member: "ActionInvoked") { _, _, arguments in
            guard arguments.count >= 2, case .unsigned(let id) = arguments[0], let action = arguments[1].string else { return }
            record(UInt32(truncatingIfNeeded: id), action)
        }
        try bus.onSignal(path: Self.path, interface: Self.name, member: "NotificationClosed") { _, _, arguments in
            guard case .unsigned(let id)? = arguments.first else { return }
            record(UInt32(truncatingIfNeeded: id), nil)
        }
    }

    /// Shows a question with two buttons and waits for the click.
    ///
    /// - Parameters:
    ///   - application: The application name the server shows.
    ///   - title: The notification's summary.
    ///   - body: Its text.
    ///   - yes: The label of the button that answers yes; `no` that of the other.
    ///   - timeout: How long to wait; the notification is then closed.
    /// - Returns: `true` or `false` for a click, `nil` when it was closed without one or timed out.
    /// - Throws: ``BusError`` when the notification cannot be shown.
    package func ask(application: String, title: String, body: String, yes: String, no: String, timeout: Duration) throws(BusError) -> Bool? {
        let reply = try bus.call(
            Self.name, path: Self.path, interface: Self.name, member: "Notify",
            arguments: [
                .string(application), .uint32(0), .string("dialog-question"), .string(title), .string(body),
                .strings(["yes", yes, "no", no]), .noOptions, .int32(0),
            ])
        guard case .unsigned(let raw)? = reply.first else { throw BusError(name: "Notify", message: "the notification server gave no id") }
        let id = UInt32(truncatingIfNeeded: raw)
        let deadline = Date().addingTimeInterval(timeout / .seconds(1))
        arrived.lock()
        var answer: String??
        while true {
            answer = answers.withLock { $0.pending.removeValue(forKey: id) }
            if answer != nil || !arrived.wait(until: deadline) { break }
        }
        arrived.unlock()
        // A click or a time-out leaves the notification for Heed to close; a close is already one.
        let closedByTheUser = answer.map { $0 == nil } ?? false
        if !closedByTheUser {
            answers.withLock { _ = $0.closing.insert(id) }
            _ = try? bus.call(Self.name, path: Self.path, interface: Self.name, member: "CloseNotification", arguments: [.uint32(id)])
        }
        guard let answer else { return nil }
        return answer.map { $0 == "yes" }
    }
}
