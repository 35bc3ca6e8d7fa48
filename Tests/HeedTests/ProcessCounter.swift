import Foundation

/// Counts the starts of a plugin executable: a shell wrapper appends a line to a file, then runs
/// the fault plugin as `appID` (its hello says that id).
enum ProcessCounter {
    static func wrapper(in folder: URL, appID: String = "org.heed.fault") throws -> URL {
        let wrapper = folder.appendingPathComponent("counted-\(appID)")
        if FileManager.default.fileExists(atPath: wrapper.path) { return wrapper }
        let plugin = Fixtures.heedBinary.deletingLastPathComponent().appendingPathComponent("heed-fault-plugin").path
        let log = folder.appendingPathComponent("starts").path
        try Fixtures.writeExecutable("#!/bin/sh\necho '\(appID)' >> '\(log)'\nHEED_FAULT_APP_ID='\(appID)' exec '\(plugin)' \"$@\"\n", to: wrapper)
        return wrapper
    }

    /// The app ids started, one per start, in order.
    static func started(in folder: URL) throws -> [String] {
        let log = folder.appendingPathComponent("starts")
        guard FileManager.default.fileExists(atPath: log.path) else { return [] }
        return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    static func starts(in folder: URL) throws -> Int { try started(in: folder).count }
}
