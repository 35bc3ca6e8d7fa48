import Foundation
import HeedCore

/// A labelled corpus listing: a TSV file with a header row and the columns `wav`,
/// `transcript`, `intent_slots_json`, `speaker` and `expect` (only `wav` is required).
/// Paths are relative to the manifest's folder. Other columns are ignored.
public struct CorpusManifest: Sendable {
    /// What a row says the recognizer should do with its recording (the `expect` column).
    public enum Expectation: String, Sendable, Hashable, Codable {
        /// A command: it should be heard right and accepted.
        case accept
        /// Not a command of the grammar (other speech, out-of-vocabulary words): it should be rejected.
        case reject
    }

    /// One labelled recording.
    public struct Entry: Sendable, Hashable {
        /// The audio file's absolute path.
        public var audioPath: String
        /// The path as written in the manifest.
        public var relativePath: String
        /// The expected words, normalised; `nil` when the row has none.
        public var transcript: String?
        /// The `intent_slots_json` column, unparsed.
        public var labels: String?
        /// The speaker column.
        public var speaker: String?
        /// The `expect` column; `nil` when empty or absent (the transcript and labels decide).
        public var expectation: Expectation? = nil
        /// The 1-based line of the manifest the entry comes from.
        public var line: Int
    }

    /// The manifest file.
    public var path: String
    /// The rows, in file order.
    public var entries: [Entry]

    /// Reads a manifest.
    ///
    /// - Throws: ``ManifestError`` naming the file and line.
    public init(path: String) throws(ManifestError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ManifestError(path: path, line: nil, reason: FileManager.default.fileExists(atPath: path) ? "cannot be read as UTF-8 text" : "no such file")
        }
        self.path = path
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard let header = lines.first, !header.isEmpty else {
            throw ManifestError(path: path, line: 1, reason: "the manifest is empty; expected a header row with a `wav` column")
        }
        let columns = header.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard let wavColumn = columns.firstIndex(of: "wav") else {
            throw ManifestError(path: path, line: 1, reason: "the header row has no `wav` column (columns: \(columns.joined(separator: ", ")))")
        }
        let transcriptColumn = columns.firstIndex(of: "transcript")
        let labelColumn = columns.firstIndex(of: "intent_slots_json")
        let speakerColumn = columns.firstIndex(of: "speaker")
        let expectColumn = columns.firstIndex(of: "expect")
        var entries: [Entry] = []
        for (index, line) in lines.enumerated().dropFirst() where !line.trimmed.isEmpty {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func field(_ column: Int?) -> String? {
                guard let column, column < fields.count, !fields[column].isEmpty else { return nil }
                return fields[column]
            }
            guard let wav = field(wavColumn) else {
                throw ManifestError(path: path, line: index + 1, reason: "the `wav` field (column \(wavColumn + 1)) is empty")
            }
            let expectation = try field(expectColumn).map { (text) throws(ManifestError) in
                guard let expectation = Expectation(rawValue: text.trimmed.lowercased()) else {
                    throw ManifestError(path: path, line: index + 1, reason: "the `expect` field is \"\(text)\"; expected `accept`, `reject` or nothing")
                }
                return expectation
            }
            entries.append(
                Entry(
                    audioPath: wav.hasPrefix("/") ? wav : folder.appendingPathComponent(wav).path,
                    relativePath: wav,
                    transcript: field(transcriptColumn).map(Transcript.normalize),
                    labels: field(labelColumn),
                    speaker: field(speakerColumn),
                    expectation: expectation,
                    line: index + 1
                )
            )
        }
        guard !entries.isEmpty else {
            throw ManifestError(path: path, line: nil, reason: "the manifest lists no recordings")
        }
        self.entries = entries
    }
}

/// A manifest that cannot be used, with the file and line.
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The manifest file.
    public var path: String
    /// The 1-based line, when one line is at fault.
    public var line: Int?
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(path: String, line: Int?, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    public var description: String {
        line.map { "\(path):\($0): \(reason)" } ?? "\(path): \(reason)"
    }
}

/// Word-level comparison of transcripts.
public enum Transcript {
    /// Lower-cases and collapses whitespace; keeps apostrophes inside words.
    public static func normalize(_ text: String) -> String {
        text.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The word edit distance (substitutions + insertions + deletions) between two transcripts.
    public static func wordErrors(reference: String, hypothesis: String) -> Int {
        let expected = reference.split(separator: " ")
        let heard = hypothesis.split(separator: " ")
        var previous = Array(0...heard.count)
        for (i, word) in expected.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: heard.count)
            for (j, candidate) in heard.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == candidate ? 0 : 1))
            }
            previous = current
        }
        return previous[heard.count]
    }
}
