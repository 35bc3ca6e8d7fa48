import Foundation
import HeedClient

/// Tells the service manager how `heed serve` is, when systemd runs it with `Type=notify`:
/// the notification protocol of `sd_notify(3)`, one datagram of `KEY=value` lines to the
/// socket in `NOTIFY_SOCKET`. Without the variable (a terminal, `Type=simple`) nothing is sent.
package enum ServiceManager {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`); a manager that cannot be reached is
    /// ignored, as `sd_notify` does: the service runs the same without it.
    package static func notify(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let socket = environment["NOTIFY_SOCKET"], socket.hasPrefix("/") || socket.hasPrefix("@") else { return }
        try? UnixSocket.sendDatagram(Array(state.utf8), to: socket)
    }
}
