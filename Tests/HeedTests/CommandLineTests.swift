import Foundation
import Testing
import HeedTesting

/// The built `heed` binary: output, JSON keys and exit statuses.
@Suite("heed command line")
struct CommandLineTests {
    @Test func helpTeachesTheCommands() throws {
        let result = try Fixtures.run(Fixtures.heedBinary, ["--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("recognize"))
        #expect(result.output.contains("eval"))
        #expect(result.output.contains("2 usage error"))
        let recognize = try Fixtures.run(Fixtures.heedBinary, ["recognize", "--help"])
        #expect(recognize.output.contains("--raw"))
        #expect(recognize.output.contains("resampled to 16 kHz"))
    }

    @Test func usageErrorsExitWithStatus2() throws {
        #expect(try Fixtures.run(Fixtures.heedBinary, ["recognize"]).status == 2)
        #expect(try Fixtures.run(Fixtures.heedBinary, ["recognize", "--bogus", "a.wav"]).status == 2)
        // Each with the error that names what is wrong.
        let named: [(arguments: [String], error: String)] = [
            (["recognize", "--rate", "8000", "a.wav"], "--rate applies to --raw audio"),
            (["listen", "--ask-above=-1", "--input", "a.wav"], "--ask-above must be 0 or more, not -1.0"),
            (["listen", "--ask-above-in-noise=-1", "--input", "a.wav"], "--ask-above-in-noise must be 0 or more, not -1.0"),
            (["eval", "--reject-below-in-noise", "1.5", "manifest.tsv"], "--reject-below-in-noise must be between 0 and 1, not 1.5"),
            (["run", "pause", "--denoise", "on"], "--denoise applies to --audio FILE.wav"),
        ]
        for usage in named {
            let result = try Fixtures.run(Fixtures.heedBinary, usage.arguments)
            #expect(result.status == 2, "\(usage.arguments)")
            #expect(result.error.contains(usage.error), "\(usage.arguments): \(result.error)")
        }
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"))
    func badFilesExitWithStatus1AndTheOthersStillRun() throws {
        let folder = try TemporaryFolder.make()
        let empty = folder.appendingPathComponent("empty.wav").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let result = try Fixtures.run(
            Fixtures.heedBinary,
            ["recognize", "--json", "-g", Fixtures.testData + "/cards/cards.gram", empty, Fixtures.testData + "/cards/001.wav"]
        )
        #expect(result.status == 1)
        #expect(result.error.contains("heed: error: \(empty): the file is empty (0 bytes)"))
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 2)
        let object = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any]
        for key in ["file", "text", "confidence", "rejected", "alternatives", "words", "durationSeconds", "decodeSeconds"] {
            #expect(object?[key] != nil, "missing key \(key)")
        }
        #expect(object?["text"] as? String == "ten of clubs")
        let word = (object?["words"] as? [[String: Any]])?.first
        #expect(Set(word?.keys.map { $0 } ?? []) == ["word", "start", "end", "confidence"])
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"))
    func evalReportsAsJSON() throws {
        let folder = try TemporaryFolder.make()
        let manifest = folder.appendingPathComponent("cards.tsv").path
        let rows = RecognizerTests.cards.map { "\(Fixtures.testData)/cards/\($0.file).wav\t\($0.text)\t\t" }
        try (["wav\ttranscript\tintent_slots_json\tspeaker"] + rows).joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try Fixtures.run(Fixtures.heedBinary, ["eval", "--json", "-g", Fixtures.testData + "/cards/cards.gram", manifest])
        #expect(result.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        for key in ["utterances", "sentenceAccuracy", "wer", "rtf", "p50LatencyMs", "p95LatencyMs", "peakRSSMegabytes", "errors"] {
            #expect(report?[key] != nil, "missing key \(key)")
        }
        #expect(report?["utterances"] as? Int == 5)
        #expect(report?["sentenceAccuracy"] as? Double == 1)
        #expect(report?["wer"] as? Double == 0)
    }

    /// The cards recordings through the listener's endpointer: each is one utterance and is
    /// heard as from the whole file; a recording of quiet alone gives the endpointer nothing.
    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"))
    func evalThroughTheEndpointer() throws {
        let folder = try TemporaryFolder.make()
        let quiet = folder.appendingPathComponent("quiet.wav")
        try WAVBuilder(samples: EndpointerTests.roomNoise(seconds: 2)).data.write(to: quiet)
        let manifest = folder.appendingPathComponent("cards.tsv").path
        let rows = RecognizerTests.cards.map { "\(Fixtures.testData)/cards/\($0.file).wav\t\($0.text)\t\t" } + ["\(quiet.path)\t\t\t"]
        try (["wav\ttranscript\tintent_slots_json\tspeaker"] + rows).joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try Fixtures.run(Fixtures.heedBinary, ["eval", "--json", "--endpoint", "-g", Fixtures.testData + "/cards/cards.gram", manifest])
        #expect(result.status == 0, "\(result.error)")
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        #expect(report?["sentenceAccuracy"] as? Double == 1)
        let results = report?["results"] as? [[String: Any]] ?? []
        #expect(results.last?["text"] as? String == "")
    }

    /// The README's start command, at default settings: the bundled real recording (confidence
    /// about 0.3) is one someone chose to give, so the lenient point accepts it.
    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"))
    func theDemoRunsAtDefaultSettings() throws {
        let folder = try TemporaryFolder.make()
        let config = folder.appendingPathComponent("config.json")
        try #"{"spokenResponses": false, "policyFile": "/nonexistent/policy.json"}"#.write(to: config, atomically: true, encoding: .utf8)
        let result = try Fixtures.run(
            Fixtures.heedBinary,
            ["run", "--audio", "examples/audio/set_a_timer_for_5_minutes.wav", "--answer", "yes", "--state-dir", folder.path, "--config", config.path],
            in: Fixtures.packageRoot)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("heard \"set a timer for five minutes\""))
        #expect(result.output.contains("Timer set for 5 minutes."))
        let recognized = try Fixtures.run(
            Fixtures.heedBinary, ["recognize", "examples/audio/set_a_timer_for_5_minutes.wav", "--intents", "intents", "--json"], in: Fixtures.packageRoot)
        #expect(recognized.output.contains(#""rejected":false"#), "\(recognized.output)")
        #expect(recognized.output.contains(#""snrDecibels":"#), "\(recognized.output)")
    }

    /// `--config` is the one configuration a command reads: a broken file in the default place
    /// does not stop `heed run` or `heed listen` given another (the vocabulary's data folder
    /// came from the default file before).
    @Test func theConfigGivenIsTheOneRead() throws {
        let folder = try TemporaryFolder.make()
        let home = folder.appendingPathComponent("config-home/heed")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try "{ not json".write(to: home.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        let config = folder.appendingPathComponent("config.json")
        try #"{"spokenResponses": false}"#.write(to: config, atomically: true, encoding: .utf8)
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config-home").path, "XDG_DATA_HOME": folder.path]
        let given = try Fixtures.run(
            Fixtures.heedBinary, ["run", "pause", "--dry-run", "--config", config.path, "--state-dir", folder.path], in: folder,
            environment: environment)
        #expect(given.status == 0, "\(given)")
        #expect(given.output.contains("pause"), "\(given)")
        // Without --config the broken default file is the one read, and said so.
        let broken = try Fixtures.run(Fixtures.heedBinary, ["run", "pause", "--dry-run", "--state-dir", folder.path], in: folder, environment: environment)
        #expect(broken.status != 0)
        #expect(broken.error.contains("config.json"), "\(broken)")
    }

    /// The intents, grammars and plugins that come with the build are found from any folder.
    @Test func heedWorksFromAnyFolder() throws {
        let folder = try TemporaryFolder.make()
        let parsed = try Fixtures.run(Fixtures.heedBinary, ["run", "set a timer for ten minutes", "--dry-run"], in: folder)
        #expect(parsed.status == 0, "\(parsed)")
        #expect(parsed.output.contains("setTimer  duration: ten minutes (600)"))
        let plugins = try Fixtures.run(Fixtures.heedBinary, ["plugins", "list"], in: folder)
        #expect(plugins.output.contains("org.heed.timer"), "\(plugins)")
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"))
    func evalNamesTheLineOfAMissingRecording() throws {
        let folder = try TemporaryFolder.make()
        let manifest = folder.appendingPathComponent("m.tsv").path
        try "wav\ttranscript\nmissing.wav\tstop\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try Fixtures.run(Fixtures.heedBinary, ["eval", "-g", Fixtures.grammar("commands.gram"), manifest])
        #expect(result.status == 1)
        #expect(result.output.contains("unreadable: missing.wav (line 2):"))
        #expect(result.output.contains("no such file"))
    }
}
