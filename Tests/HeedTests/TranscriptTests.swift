import Foundation
import HeedRuntime
import Testing
import HeedEvaluation
import HeedTesting

@Suite("Transcripts and manifests")
struct TranscriptTests {
    @Test func countsWordErrors() {
        #expect(Transcript.wordErrors(reference: "go forward ten meters", hypothesis: "go forward ten meters") == 0)
        #expect(Transcript.wordErrors(reference: "go forward ten meters", hypothesis: "go backward ten") == 2)
        #expect(Transcript.wordErrors(reference: "five", hypothesis: "") == 1)
        #expect(Transcript.wordErrors(reference: "", hypothesis: "five five") == 2)
        #expect(Transcript.wordErrors(reference: "a b c", hypothesis: "x a b c") == 1)
    }

    @Test func normalizesTranscripts() {
        #expect(Transcript.normalize("  Go  FORWARD\tten ") == "go forward ten")
    }

    @Test func readsManifestsRelativeToTheirFolder() throws {
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("m.tsv").path
        try "wav\ttranscript\tintent_slots_json\tspeaker\nwav/a.wav\tGo Forward\t{}\ts1\n\nwav/b.wav\t\t\t\n".write(toFile: path, atomically: true, encoding: .utf8)
        let manifest = try CorpusManifest(path: path)
        #expect(manifest.entries.count == 2)
        #expect(manifest.entries[0].audioPath == folder.appendingPathComponent("wav/a.wav").path)
        #expect(manifest.entries[0].transcript == "go forward")
        #expect(manifest.entries[1].transcript == nil)
        #expect(manifest.entries[1].line == 4)
    }

    @Test func namesTheLineOfABadManifest() throws {
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("m.tsv").path
        try "transcript\twav\nhello\ta.wav\nbye\t\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ManifestError(path: path, line: 3, reason: "the `wav` field (column 2) is empty")) {
            try CorpusManifest(path: path)
        }
        try "file\ttranscript\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ManifestError(path: path, line: 1, reason: "the header row has no `wav` column (columns: file, transcript)")) {
            try CorpusManifest(path: path)
        }
    }
}
