public import Foundation
public import HeedCore
import HeedAudio

/// Commands the listener heard and acted on, kept to adapt on: `heed listen --keep-heard`, then
/// `heed adapt --heard`. Each is the utterance as captured and the words Heed heard in it.
///
/// Adapting on what Heed heard, right or not, teaches the model the user's voice, microphone and
/// room without a session of reading prompts (docs/MEASUREMENTS.md, "Adapting on what Heed
/// heard"). Only utterances accepted and matched to an intent are kept, and only the most recent
/// ``limit``. The folder is the user's alone (0700); ``forget()`` removes it. The manifest
/// (`manifest.tsv`: `wav` and `transcript`, paths relative to it) is what `heed adapt` and
/// `heed eval` read, and is replaced atomically, so a reader sees the list before a keep or after.
public struct HeardRecordings: Sendable {
    /// The folder of the recordings and their manifest.
    public let folder: URL
    /// The most recordings kept; a new one past it removes the oldest.
    public let limit: Int

    /// 200 commands: about five minutes of speech, four times what an adaptation needs.
    public static let defaultLimit = 200
    /// The fewest kept commands `heed adapt --heard` adapts on. On FSDD speakers, 50 recordings
    /// with the words heard helped every speaker; 6–10 made one worse (docs/MEASUREMENTS.md).
    public static let minimumToAdapt = 50

    /// Creates the store of `folder`.
    public init(folder: URL, limit: Int = defaultLimit) {
        self.folder = folder
        self.limit = max(1, limit)
    }

    /// The manifest of the kept recordings.
    public var manifest: URL { folder.appendingPathComponent("manifest.tsv") }

    /// One kept recording: its file, relative to ``folder``, and the words heard.
    public struct Row: Sendable, Hashable {
        public var file: String
        public var words: String
    }

    /// The kept recordings, oldest first (none when nothing was kept).
    public func rows() -> [Row] {
        guard let text = try? String(contentsOf: manifest, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else { return nil }
            return Row(file: String(fields[0]), words: String(fields[1]))
        }
    }

    /// Keeps an utterance with the words heard in it; removes the oldest past ``limit``.
    ///
    /// - Throws: ``HeardRecordingsError`` when the folder or a file cannot be written; the
    ///   recordings kept before stay as they were.
    public func keep(_ audio: AudioBuffer, words: [String], at date: Date = Date()) throws(HeardRecordingsError) {
        let transcript = words.joined(separator: " ")
        guard !transcript.isEmpty, !transcript.contains(where: { $0 == "\t" || $0.isNewline }) else { return }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw HeardRecordingsError("cannot create \(folder.path): \(error.localizedDescription)")
        }
        let stamp = date.iso8601Text.replacingOccurrences(of: ":", with: "")
        let name = "\(stamp)-\(UUID().uuidString.prefix(8).lowercased()).wav"
        try write(audio.wavData, to: folder.appendingPathComponent(name))
        var rows = rows() + [Row(file: name, words: transcript)]
        let dropped = rows.count > limit ? Array(rows.prefix(rows.count - limit)) : []
        rows.removeFirst(dropped.count)
        try write(Data(("wav\ttranscript\n" + rows.map { "\($0.file)\t\($0.words)\n" }.joined()).utf8), to: manifest)
        for row in dropped { try? FileManager.default.removeItem(at: folder.appendingPathComponent(row.file)) }
    }

    /// Removes every kept recording and the folder.
    /// - Returns: How many recordings there were.
    @discardableResult
    public func forget() -> Int {
        let count = rows().count
        try? FileManager.default.removeItem(at: folder)
        return count
    }

    private func write(_ data: Data, to file: URL) throws(HeardRecordingsError) {
        do {
            try data.write(to: file, options: .atomic)
            chmod(file.path, 0o600)
        } catch {
            throw HeardRecordingsError("cannot write \(file.path): \(error.localizedDescription)")
        }
    }
}

/// Why a heard command could not be kept.
public struct HeardRecordingsError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
