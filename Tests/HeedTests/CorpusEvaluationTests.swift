import Foundation
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import Logging
import Synchronization
import Testing
import HeedEvaluation

/// `heed eval`'s code path on the shared corpora of real recordings.
/// Floors sit a few points under the accuracy measured on this machine (README, "Measured").
@Suite(
    "Shared corpora (live)",
    .enabled(if: Fixtures.hasPocketSphinx && Fixtures.corpora != nil, "needs pocketsphinx-en-us and the shared corpora (HEED_CORPORA or ../shared/corpora)")
)
struct CorpusEvaluationTests {
    private func evaluate(_ corpus: String, grammar: String) throws -> EvaluationReport {
        let manifest = try CorpusManifest(path: (Fixtures.corpora ?? "") + "/\(corpus)/manifest.tsv")
        var recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar(grammar))
        return try Evaluation(manifest: manifest).run(recognizer: &recognizer, loadSeconds: recognizer.loadSeconds)
    }

    @Test func speechCommands() throws {
        let report = try evaluate("speech_commands_v001_sample", grammar: "speech-commands.gram")
        #expect(report.utterances == 150)
        #expect(report.inGrammarUtterances == 150)
        // Measured 0.860.
        #expect((report.sentenceAccuracy ?? 0) >= 0.82)
        #expect((report.meanConfidence.correct ?? 0) > (report.meanConfidence.wrong ?? 1))
        #expect(report.errors.allSatisfy { $0.kind != .unreadable })
    }

    @Test func speechCommandsOutsideTheGrammarAreMostlyRejected() throws {
        // The 10 auxiliary words (bed, bird, cat, …) are not in this grammar.
        let report = try evaluate("speech_commands_v001_sample", grammar: "speech-commands-core.gram")
        #expect(report.outOfGrammarUtterances == 50)
        // Measured at the hands-free default (six-feature model, threshold 0.87): false accepts
        // 0.10, false rejects 0.47–0.50 (the margin-only model at 0.3: 0.38 and 0.17); with the
        // one-word model on one normaliser 0.10 and 0.51. Single words score low;
        // docs/RECOGNITION.md, "One word".
        #expect((report.falseAcceptRate ?? 1) <= 0.2)
        #expect((report.falseRejectRate ?? 1) <= 0.6)
        #expect((report.meanConfidence.outOfGrammar ?? 1) < (report.meanConfidence.correct ?? 0))
    }

    /// Two recognizers on two threads give the report one recognizer gives, in manifest order.
    @Test func twoWorkersGiveTheSameReport() throws {
        let manifest = try CorpusManifest(path: (Fixtures.corpora ?? "") + "/speech_commands_v001_sample/manifest.tsv")
        var recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("speech-commands.gram"))
        let one = try Evaluation(manifest: manifest).run(recognizer: &recognizer, loadSeconds: recognizer.loadSeconds)
        let grammar = Fixtures.grammar("speech-commands.gram")
        let threads = Mutex<Set<String>>([])
        let two = try Evaluation(manifest: manifest).run(workers: 2) {
            threads.withLock { _ = $0.insert("\(pthread_self())") }
            return try Fixtures.recognizer(grammar: grammar)
        }
        #expect(threads.withLock { $0.count } == 2)
        #expect(two.results.map(\.file) == one.results.map(\.file))
        #expect(two.results.map(\.text) == one.results.map(\.text))
        #expect(two.results.map(\.confidence) == one.results.map(\.confidence))
        #expect(two.sentenceAccuracy == one.sentenceAccuracy)
        #expect(two.errors.map(\.file) == one.errors.map(\.file))
    }

    /// The same recordings decoded as streams (20 ms at a time, the live pass's result): the
    /// running cepstral mean of a stream costs short words accuracy (measured 0.72 against the
    /// whole utterance's 0.86), which is why the service decodes a Wyoming stream's final
    /// transcript as one whole utterance after its end.
    @Test func speechCommandsDecodedAsStreams() throws {
        let manifest = try CorpusManifest(path: (Fixtures.corpora ?? "") + "/speech_commands_v001_sample/manifest.tsv")
        var recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("speech-commands.gram"))
        let whole = try Evaluation(manifest: manifest).run(recognizer: &recognizer, loadSeconds: 0)
        let streamed = try Evaluation(manifest: manifest, live: true).run(recognizer: &recognizer, loadSeconds: 0)
        #expect(streamed.utterances == 150)
        #expect((streamed.sentenceAccuracy ?? 0) >= 0.65)
        #expect((streamed.sentenceAccuracy ?? 1) < (whole.sentenceAccuracy ?? 0))
        #expect(streamed.results.map(\.file) == whole.results.map(\.file))
    }

    @Test func spokenDigits() throws {
        let report = try evaluate("fsdd_digits", grammar: "digit.gram")
        #expect(report.utterances == 300)
        // Measured 0.677: the recordings are 8 kHz band-limited, the model is wideband.
        #expect((report.sentenceAccuracy ?? 0) >= 0.63)
        #expect((report.meanConfidence.correct ?? 0) > (report.meanConfidence.wrong ?? 1))
    }
}

/// Real audio through the intents: the Picovoice barista development split with the coffee
/// example, scored with the benchmark's rule.
@Suite(
    "Barista intents (live)",
    .enabled(if: Fixtures.hasPocketSphinx && Fixtures.corpora != nil, "needs pocketsphinx-en-us and the shared corpora (HEED_CORPORA or ../shared/corpora)")
)
struct BaristaIntentTests {
    @Test func orderDrinkIntentAccuracy() throws {
        let root = Fixtures.packageRoot
        let catalog = try IntentCatalog.load(
            intents: [root.appendingPathComponent("intents/examples/coffee.json")],
            grammars: [root.appendingPathComponent("grammars")]
        )
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.maximumAlternatives = 0
        var recognizer = try PocketSphinxRecognizer(grammar: try RecognitionSetup(catalog: catalog).grammar, configuration: configuration, logger: Logger(label: "test"))
        let manifest = try CorpusManifest(path: (Fixtures.corpora ?? "") + "/picovoice_barista/manifest.tsv")
        let report = try Evaluation(manifest: manifest, intents: catalog.parser(vocabulary: [:]))
            .run(recognizer: &recognizer, loadSeconds: recognizer.loadSeconds)
        #expect(report.intentUtterances == 309)
        // Measured: 0.981 ignoring rejection, 0.961 with it (README, "Measured").
        #expect((report.intentAccuracyIgnoringRejection ?? 0) >= 0.96)
        #expect((report.intentAccuracy ?? 0) >= 0.93)
    }
}
