public import Foundation

/// Folders for a test's files, all inside one folder per test process that is removed when the
/// process exits: a run of the suite no longer leaves hundreds of folders in the system's
/// temporary folder (12,071 had gathered on a development machine).
public enum TemporaryFolder {
    /// A new, empty folder inside this process's folder.
    ///
    /// ```swift
    /// let state = try TemporaryFolder.make()
    /// ```
    public static func make() throws -> URL {
        let url = root.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `heed-tests-PID-…` in the system's temporary folder, removed at exit (not after a crash).
    private static let root: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("heed-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        atexit { try? FileManager.default.removeItem(at: TemporaryFolder.root) }
        return url
    }()
}
