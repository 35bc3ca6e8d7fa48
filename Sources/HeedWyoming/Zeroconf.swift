import Foundation
import HeedService
import Logging

/// The `_wyoming._tcp` announcement that lets Home Assistant discover Heed, made by avahi's
/// `avahi-publish-service` (Debian `avahi-utils`, with `avahi-daemon` running) as a child process
/// for as long as the service runs. Optional: without avahi the door works, and the log says so.
final class Zeroconf: Sendable {
    private let processes: [Process]

    private init(processes: [Process]) { self.processes = processes }

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
        let name = "Heed on \(ProcessInfo.processInfo.hostName)"
        var started: [Process] = []
        for port in ports {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = [name, "_wyoming._tcp", String(port)]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            process.terminationHandler = { process in
                // Stopped at the end (SIGTERM) is the normal ending; any other is avahi's complaint.
                guard process.terminationReason != .uncaughtSignal else { return }
                let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                report("announcement on port \(port) ended: avahi-publish-service exited with status \(process.terminationStatus)"
                    + (said.isEmpty ? "" : ": \(said)") + " (is avahi-daemon running?)")
            }
            do {
                try process.run()
                started.append(process)
                report("announcing \"\(name)\" as _wyoming._tcp on port \(port) through avahi")
            } catch {
                report("not announced on port \(port): cannot run \(tool): \(error.localizedDescription)")
            }
        }
        return started.isEmpty ? nil : Zeroconf(processes: started)
    }

    /// Withdraws the announcements.
    func stop() {
        for process in processes where process.isRunning { process.terminate() }
        for process in processes { process.waitUntilExit() }
    }
}
