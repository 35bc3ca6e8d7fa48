import Foundation
import HeedAudio
import HeedCore
import HeedEvaluation
@testable import HeedSpeech
import HeedTesting
import Logging
import Testing

/// Heed's evaluator of the acoustic model (CHeedShims/gaussians.c) gives PocketSphinx's senone
/// scores bit for bit, on real recordings, in every way a decoder is used: a grammar and the
/// phone loop, whole utterances and live ones, the active senones or every one.
@Suite(
    "Acoustic scoring",
    .enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us")
)
struct AcousticScoringTests {
    private static let grammar = """
        #JSGF V1.0;
        grammar commands;
        public <command> = pause | stop | play | set a timer for <number> minutes;
        <number> = one | two | three | four | five | ten;
        """

    /// The bundled recordings, and a few real ones of each corpus when the corpora are there.
    private static func recordings() throws -> [AudioBuffer] {
        var paths = ["examples/audio/pause.wav", "examples/audio/set_a_timer_for_5_minutes.wav"]
            .map { Fixtures.packageRoot.appendingPathComponent($0).path }
        if let corpora = Fixtures.corpora {
            for (corpus, count) in [("picovoice_barista", 3), ("speech_commands_v001_sample", 3), ("speech_to_phrase_en", 2)] {
                let manifest = try CorpusManifest(path: corpora + "/\(corpus)/manifest.tsv")
                paths += manifest.entries.prefix(count).map(\.audioPath)
            }
        }
        return try paths.map { try AudioFile.read($0) }
    }

    /// A decoder writing every frame's scores of the senones its search asked for to `folder`.
    private static func decoder(scoring: String, folder: String, everySenone: Bool) throws -> SphinxDecoder {
        SphinxLogSink.shared.use(Logger(label: "test"))
        let decoder = try SphinxDecoder(arguments: [
            "-hmm": Fixtures.model, "-dict": PocketSphinxRecognizer.Configuration.default.dictionaryPath,
            "-allphone_ci": "yes", "-scoring": scoring, "-senlogdir": folder,
            "-compallsen": everySenone ? "yes" : "no",
            // Every senone as a grammar of single words computes them: with its 16 densities.
            "-topn": everySenone ? String(PocketSphinxRecognizer.oneWordDensities) : "4",
        ])
        try decoder.addSearch(try decoder.compileGrammar(grammar, name: "commands"), name: "commands")
        try decoder.addPhoneLoopSearch(name: "phones")
        return decoder
    }

    /// Decodes each recording whole with each search, then live in chunks of 0.1 s; returns the
    /// words heard, and leaves the scores of each utterance in the decoder's folder.
    private static func decodeAll(_ decoder: SphinxDecoder, _ recordings: [AudioBuffer]) throws -> [String] {
        var heard: [String] = []
        for audio in recordings {
            for search in ["commands", "phones"] {
                let (segments, _) = try decoder.decodeUtterance(audio.samples, search: search)
                heard.append(segments.map(\.word).filter { !$0.hasPrefix("<") }.joined(separator: " "))
            }
            try decoder.selectSearch("commands")
            decoder.startStream()
            try decoder.startUtterance()
            for start in stride(from: 0, to: audio.samples.count, by: 1600) {
                let chunk = Array(audio.samples[start..<min(start + 1600, audio.samples.count)])
                try chunk.withUnsafeBufferPointer { (buffer) throws(RecognizerError) in try decoder.process(buffer, wholeUtterance: false) }
            }
            try decoder.endUtterance()
            heard.append(decoder.hypothesis()?.text ?? "")
        }
        return heard
    }

    @Test(arguments: [false, true])
    func theScoresAreThoseOfPocketSphinx(everySenone: Bool) throws {
        let recordings = try Self.recordings()
        let folder = try TemporaryFolder.make().path
        var heard: [String: [String]] = [:]
        var scores: [String: [String: Data]] = [:]
        // Heed's evaluator as this CPU runs it, and without AVX2 as older CPUs do.
        for scoring in ["heed", "heed-baseline", "pocketsphinx"] {
            let scoreFolder = folder + "/" + scoring
            try FileManager.default.createDirectory(atPath: scoreFolder, withIntermediateDirectories: true)
            let decoder = try Self.decoder(scoring: scoring, folder: scoreFolder, everySenone: everySenone)
            #expect(decoder.scoresWithHeed == (scoring != "pocketsphinx"))
            heard[scoring] = try Self.decodeAll(decoder, recordings)
            let files = try FileManager.default.contentsOfDirectory(atPath: scoreFolder).filter { $0.hasSuffix(".sen") }
            scores[scoring] = try Dictionary(uniqueKeysWithValues: files.map { ($0, try Data(contentsOf: URL(fileURLWithPath: scoreFolder + "/" + $0))) })
        }
        let pocketsphinx = try #require(scores["pocketsphinx"])
        for scoring in ["heed", "heed-baseline"] {
            let heed = try #require(scores[scoring])
            #expect(heed.count == recordings.count * 3)
            #expect(Set(heed.keys) == Set(pocketsphinx.keys))
            for (file, data) in heed.sorted(by: { $0.key < $1.key }) {
                #expect(data.count > 1_000, "\(file) holds \(data.count) bytes")
                #expect(data == pocketsphinx[file], "the scores of utterance \(file) differ (\(scoring))")
            }
            #expect(heard[scoring] == heard["pocketsphinx"])
        }
        #expect(heard["heed"]?.first == "pause")
    }

    @Test func anUnknownScoringIsRefused() {
        SphinxLogSink.shared.use(Logger(label: "test"))
        #expect(throws: RecognizerError.self) {
            _ = try SphinxDecoder(arguments: ["-hmm": Fixtures.model, "-dict": "/dev/null", "-scoring": "fast"])
        }
    }
}
