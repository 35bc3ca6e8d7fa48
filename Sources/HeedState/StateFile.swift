package import Foundation
import Glibc
import HeedCore

/// What a ``StateFile`` holds: read through the located JSON reader, written with `JSONEncoder`.
protocol StateFileContent: Encodable {
    /// The content of a state file that does not exist yet.
    init()
    /// Reads the content from a parsed file.
    /// - Throws: ``SourceError`` located at the offending spot when the file has the wrong shape.
    init(from root: JSONNode, reader: JSONSchemaReader) throws
}

/// One JSON file of Heed's state (authorization records, vocabulary), read and written safely
/// by several processes at once.
///
/// - Reads need no lock: a writer never changes the file in place, so a reader sees either the
///   old or the new file.
/// - ``update(_:)`` holds an exclusive advisory lock (`flock(2)`) on a sibling `NAME.lock` file
///   for the whole read-modify-write, so the CLI and a running listener writing at the same time
///   are serialised and neither loses the other's change. The lock file is never removed:
///   removing it would let two writers lock two different files.
/// - The new content goes to a temporary file in the same folder, which is flushed to disk
///   (`fsync`) and renamed over the old file; the folder is flushed too. A crash leaves either
///   the old file or the new one, never half of one.
/// - A file that is not JSON or not of the expected shape is reported as a located
///   ``SourceError`` and left exactly as it is; it is never reset or overwritten.
/// - A missing file is empty content. The folder is created (mode 0700) on the first write.
struct StateFile<Content: StateFileContent>: Sendable {
    /// The JSON file.
    let url: URL

    /// The sibling file that writers lock.
    var lockURL: URL { url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".lock") }

    /// Reads the current content.
    /// - Returns: The content, or empty content when the file does not exist.
    /// - Throws: ``SourceError`` when the file cannot be read or is corrupt.
    func read() throws -> Content {
        try load()
    }

    /// Reads, changes and writes the file while holding its lock.
    ///
    /// When `body` throws, nothing is written.
    /// - Parameter body: Changes the content; its result is returned.
    /// - Returns: What `body` returned.
    /// - Throws: ``SourceError`` when the file is corrupt (it is left untouched), ``StateFileError``
    ///   when the folder, the lock or the new file cannot be made, or what `body` throws.
    func update<Result>(_ body: (inout Content) throws -> Result) throws -> Result {
        let directory = url.deletingLastPathComponent()
        try AtomicFile.createDirectory(directory)
        let lock = try Self.lock(lockURL)
        defer { close(lock) }
        var content = try load()
        let result = try body(&content)
        try write(content)
        return result
    }

    // MARK: Reading

    private func load() throws -> Content {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return Content() }
            throw SourceError(
                .unreadableFile, "cannot read the state file: \(error.localizedDescription)",
                at: SourceLocation(path: url.path, line: 1, column: 1), underlyingError: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Self.corrupt(
                SourceError(.jsonSyntax, "the state file is not UTF-8 text", at: SourceLocation(path: url.path, line: 1, column: 1)))
        }
        let source = SourceText(path: url.path, text: text)
        do {
            let root = try LocatedJSONParser.parse(source)
            return try Content(from: root, reader: JSONSchemaReader(source: source))
        } catch let error as SourceError {
            throw Self.corrupt(error)
        }
    }

    /// Adds what Heed did about a corrupt file to its error.
    private static func corrupt(_ error: SourceError) -> SourceError {
        var error = error
        error.message += " (the state file is corrupt; Heed left it as it is: fix it, or move it away to start afresh)"
        return error
    }

    // MARK: Writing

    private func write(_ content: Content) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(content)
        data.append(UInt8(ascii: "\n"))

        try AtomicFile.replace(url, with: data)
    }

    // MARK: Folder and lock

    /// Opens and exclusively locks `lockURL`, waiting for other holders.
    private static func lock(_ lockURL: URL) throws -> Int32 {
        let fd = open(lockURL.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateFileError(.lock, path: lockURL.path, errno: errno) }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            throw StateFileError(.lock, path: lockURL.path, errno: code)
        }
        return fd
    }
}

/// A state file or its folder or lock could not be made.
public struct StateFileError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable { case directory, lock, write }
        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// The state folder could not be created.
        public static let directory = Code(.directory)
        /// The lock file could not be opened or locked.
        public static let lock = Code(.lock)
        /// The new file could not be written or renamed into place.
        public static let write = Code(.write)

        public var description: String { "\(storage)" }
    }

    /// What failed.
    public var code: Code
    /// The file or folder concerned.
    public var path: String
    /// The system error, e.g. `EACCES`.
    public var underlyingError: (any Error & Sendable)?

    init(_ code: Code, path: String, errno: Int32) {
        self.code = code
        self.path = path
        self.underlyingError = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    public var description: String {
        let reason = (underlyingError as? POSIXError).map { String(cString: strerror($0.code.rawValue)) } ?? "unknown error"
        switch code {
        case .directory: return "\(path): cannot create the state folder: \(reason)"
        case .lock: return "\(path): cannot lock the state file: \(reason)"
        default: return "\(path): cannot write the state file: \(reason)"
        }
    }
}

/// Replaces a file's content so that a reader, or a crash, sees the old content or the new,
/// never half of it: a temporary file (mode 0600) in the same folder, flushed to disk and
/// renamed over the file; the folder is flushed too. Shared by the state files and by the
/// service's dictation results.
package enum AtomicFile {
    /// Writes `data` to `url` atomically; the folder must exist.
    /// - Throws: ``StateFileError`` `.write` when the temporary file cannot be written or renamed.
    package static func replace(_ url: URL, with data: Data) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateFileError(.write, path: temporary.path, errno: errno) }
        var written = false
        defer { if !written { unlink(temporary.path) } }
        do {
            defer { close(fd) }
            try data.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let count = Glibc.write(fd, base + offset, buffer.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw StateFileError(.write, path: temporary.path, errno: errno)
                    }
                    offset += count
                }
            }
            guard fsync(fd) == 0 else { throw StateFileError(.write, path: temporary.path, errno: errno) }
        }
        guard rename(temporary.path, url.path) == 0 else { throw StateFileError(.write, path: url.path, errno: errno) }
        written = true
        // Make the rename itself durable.
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Creates `directory` and any missing parents with mode 0700.
    /// - Throws: ``StateFileError`` `.directory`.
    package static func createDirectory(_ directory: URL) throws {
        var missing: [String] = []
        var path = directory.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        while !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            missing.append(path)
            let parent = (path as NSString).deletingLastPathComponent
            if parent == path || parent.isEmpty { break }
            path = parent
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw StateFileError(.directory, path: path, errno: ENOTDIR)
        }
        for path in missing.reversed() where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw StateFileError(.directory, path: path, errno: errno)
        }
    }
}
