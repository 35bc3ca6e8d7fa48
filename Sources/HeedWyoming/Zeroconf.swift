import Foundation
import Glibc
import HeedCore
import HeedService
import Logging
import Synchronization

/// The `_wyoming._tcp` announcement that lets Home Assistant discover Heed, made by avahi's
/// `avahi-publish-service` (Debian `avahi-utils`, with `avahi-daemon` running) as a child process
/// for as long as the service runs. Optional: without avahi the door works, and the log says so.
final class Zeroconf: Sendable {
    private struct Announcement: Sendable {
        let processIdentifier: pid_t
        /// Signalled when the process has ended and been reaped.
        let ended: DispatchSemaphore
    }

    /// Set when Heed withdraws the announcements: their ending is then no complaint.
    private final class Stopping: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    private let announcements: [Announcement]
    private let stopping: Stopping

    private init(announcements: [Announcement], stopping: Stopping) {
        self.announcements = announcements
        self.stopping = stopping
    }

    /// The service name announced: what Home Assistant shows when it discovers Heed.
    static var serviceName: String { "Heed on \(ProcessInfo.processInfo.hostName)" }

    /// Announces the TCP listeners other machines can reach.
    /// - Returns: The announcement to stop at the end, or `nil` when nothing was announced.
    static func announce(_ addresses: [WyomingAddress], logger: Logger, emit: @escaping @Sendable (ServiceEvent) -> Void) -> Zeroconf? {
        let ports = addresses.compactMap { address -> Int? in
            if case .tcp(_, let port) = address, !address.isLocal { port } else { nil }
        }
        guard !ports.isEmpty else { return nil }
        @Sendable func report(_ message: String) {
            var event = ServiceEvent("zeroconf")
            event.message = message
            emit(event)
        }
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard let tool = paths.map({ "\($0)/avahi-publish-service" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            report("not announced: avahi-publish-service is not installed (Debian: apt install avahi-utils avahi-daemon); "
                + "add Heed to Home Assistant by hand (Wyoming Protocol, this machine's address and port)")
            return nil
        }
        let name = serviceName
        let stopping = Stopping()
        var started: [Announcement] = []
        for port in ports {
            do {
                started.append(try start(tool, name: name, port: port, stopping: stopping, report: report))
                report("announcing \"\(name)\" as _wyoming._tcp on port \(port) through avahi")
            } catch {
                report("not announced on port \(port): cannot run \(tool): \(error.localizedDescription)")
            }
        }
        return started.isEmpty ? nil : Zeroconf(announcements: started, stopping: stopping)
    }

    /// Runs one `avahi-publish-service` on a thread of its own, which reports an ending Heed did
    /// not ask for with what the tool said.
    private static func start(
        _ tool: String, name: String, port: Int, stopping: Stopping, report: @escaping @Sendable (String) -> Void
    ) throws -> Announcement {
        let started = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<pid_t, any Error>?>(nil)
        let runner = Thread {
            do {
                let (status, said) = try ChildProcess.run(URL(fileURLWithPath: tool), arguments: [name, "_wyoming._tcp", String(port)]) { pid in
                    outcome.withLock { $0 = .success(pid) }
                    started.signal()
                }
                if !stopping.isSet {
                    let text = said.trimmed
                    report("announcement on port \(port) ended: avahi-publish-service exited with status \(status)"
                        + (text.isEmpty ? "" : ": \(text)") + " (is avahi-daemon running?)")
                }
            } catch {
                outcome.withLock { $0 = .failure(error) }
                started.signal()
            }
            ended.signal()
        }
        runner.name = "heed zeroconf \(port)"
        runner.start()
        started.wait()
        let processIdentifier = try outcome.withLock { $0! }.get()
        return Announcement(processIdentifier: processIdentifier, ended: ended)
    }

    /// Withdraws the announcements and waits for the tools to end.
    func stop() {
        stopping.set()
        for announcement in announcements { kill(announcement.processIdentifier, SIGTERM) }
        for announcement in announcements { announcement.ended.wait() }
    }
}
