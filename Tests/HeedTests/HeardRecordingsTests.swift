import Foundation
import HeedAudio
import HeedCore
import HeedEvaluation
import HeedRuntime
import Testing
import HeedTesting

/// The commands `heed listen --keep-heard` keeps for `heed adapt --heard`: real files in a
/// temporary folder, read back by the corpus manifest reader that `heed adapt` uses.
@Suite("Heard commands kept to adapt on")
struct HeardRecordingsTests {
    static func tone(seconds: Double, frequency: Double) -> AudioBuffer {
        let count = Int(seconds * 16_000)
        return AudioBuffer(samples: (0..<count).map { Int16(8_000 * sin(2 * .pi * frequency * Double($0) / 16_000)) }, sampleRate: 16_000)
    }

    @Test func keptCommandsAreAManifestOfTheirAudioAndWords() throws {
        let folder = try TemporaryFolder.make().appendingPathComponent("heard")
        let kept = HeardRecordings(folder: folder)
        #expect(kept.rows().isEmpty)
        try kept.keep(Self.tone(seconds: 1.2, frequency: 440), words: ["pause", "the", "music"])
        try kept.keep(Self.tone(seconds: 0.8, frequency: 220), words: ["skip"])
        #expect(kept.rows().map(\.words) == ["pause the music", "skip"])

        let manifest = try CorpusManifest(path: kept.manifest.path)
        #expect(manifest.entries.map(\.transcript) == ["pause the music", "skip"])
        let first = try AudioFile.read(try #require(manifest.entries.first).audioPath)
        #expect(first.samples == Self.tone(seconds: 1.2, frequency: 440).samples)
        // The user's alone.
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
        #expect(folderMode == 0o700)
        let fileMode = try FileManager.default.attributesOfItem(atPath: kept.manifest.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
    }

    @Test func theOldestGoPastTheLimit() throws {
        let folder = try TemporaryFolder.make().appendingPathComponent("heard")
        let kept = HeardRecordings(folder: folder, limit: 2)
        for (index, word) in ["one", "two", "three"].enumerated() {
            try kept.keep(Self.tone(seconds: 0.5, frequency: 200 + 100 * Double(index)), words: [word])
        }
        let rows = kept.rows()
        #expect(rows.map(\.words) == ["two", "three"])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wav") }.sorted()
        #expect(files == rows.map(\.file).sorted(), "the first recording's file is removed with its row")
        #expect(kept.forget() == 2)
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        #expect(kept.rows().isEmpty)
    }

    @Test func nothingIsKeptWithoutWords() throws {
        let kept = HeardRecordings(folder: try TemporaryFolder.make().appendingPathComponent("heard"))
        try kept.keep(Self.tone(seconds: 0.5, frequency: 300), words: [])
        #expect(kept.rows().isEmpty)
    }
}
