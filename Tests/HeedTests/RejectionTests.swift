import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import Logging
import Testing
import HeedEvaluation
import HeedTesting

/// How `heed eval` tells commands from speech to reject, and counts false accepts per hour.
@Suite("Rejection measurement")
struct RejectionTests {
    private func manifest(_ rows: [String], header: String = "wav\ttranscript\tintent_slots_json\tspeaker\texpect") throws -> String {
        let path = try TemporaryFolder.make().appendingPathComponent("m.tsv").path
        try ([header] + rows).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A result shown at the operating point's value must not be one it rejected: 0.8699 was
    /// printed "0.87" beside "falseReject".
    @Test func aConfidenceIsShownCutNotRounded() {
        let cases: [(Double, String)] = [
            (0.8699, "0.86"), (0.87, "0.87"), (0.2, "0.20"), (0.05, "0.05"), (0.999, "0.99"), (1, "1.00"), (0, "0.00"),
            (-0.1, "0.00"), (1.5, "1.00"), (.nan, "0.00"),
        ]
        for (confidence, shown) in cases {
            #expect(RecognitionResult.shown(confidence: confidence) == shown, "\(confidence)")
        }
        for hundredths in 0...100 {
            let threshold = Double(hundredths) / 100
            #expect(RecognitionResult.shown(confidence: threshold) == RecognitionResult.shown(confidence: threshold + 1e-12))
            if hundredths > 0 { #expect(Double(RecognitionResult.shown(confidence: threshold - 1e-6))! < threshold) }
        }
    }

    @Test func theExpectColumnMarksNegatives() throws {
        let path = try manifest([
            "a.wav\tstop\t\t\taccept",
            "b.wav\t\t\t\treject",
            "c.wav\tstop\t\t\t",
            "d.wav\t\t{\"intent\": \"orderDrink\", \"slots\": {}}\t\t",
            "e.wav\t\t{\"note\": \"unlabelled\"}\t\t",
            "f.wav\tstop\t\t\tReject",
        ])
        let entries = try CorpusManifest(path: path).entries
        #expect(entries.map(\.expectation) == [.accept, .reject, nil, nil, nil, .reject])
        #expect(Evaluation.role(of: entries[0], inGrammar: false) == .positive)
        #expect(Evaluation.role(of: entries[1], inGrammar: nil) == .negative)
        #expect(Evaluation.role(of: entries[2], inGrammar: true) == .positive)
        #expect(Evaluation.role(of: entries[2], inGrammar: false) == .negative)
        #expect(Evaluation.role(of: entries[3], inGrammar: nil) == .positive)
        #expect(Evaluation.role(of: entries[4], inGrammar: nil) == nil)
        #expect(Evaluation.role(of: entries[5], inGrammar: true) == .negative)
    }

    @Test func anUnknownExpectationNamesItsLine() throws {
        let path = try manifest(["a.wav\tstop\t\t\taccept", "b.wav\t\t\t\tmaybe"])
        #expect {
            try CorpusManifest(path: path)
        } throws: { error in
            let description = (error as? ManifestError)?.description ?? ""
            return description.hasSuffix(":3: the `expect` field is \"maybe\"; expected `accept`, `reject` or nothing")
        }
    }

    @Test func countsAcceptanceAndFalseAcceptsPerHour() {
        typealias Outcome = RejectionReport.Outcome
        let outcomes = [
            Outcome(role: .positive, right: true, heard: true, rejected: false, confidence: 0.9, seconds: 2),
            Outcome(role: .positive, right: true, heard: true, rejected: false, confidence: 0.6, seconds: 2),
            Outcome(role: .positive, right: false, heard: true, rejected: false, confidence: 0.7, seconds: 2),
            Outcome(role: .positive, right: true, heard: true, rejected: true, confidence: 0.2, seconds: 2),
            // 1800 s of negatives: half an hour.
            Outcome(role: .negative, right: false, heard: true, rejected: false, confidence: 0.5, seconds: 600),
            Outcome(role: .negative, right: false, heard: true, rejected: true, confidence: 0.1, seconds: 600),
            Outcome(role: .negative, right: false, heard: false, rejected: true, confidence: 0, seconds: 600),
        ]
        let report = RejectionReport(outcomes: outcomes, threshold: 0.3, curveThresholds: [0.05, 0.65, 0.95])
        #expect(report.positives == 4)
        #expect(report.positivesRight == 3)
        #expect(report.negatives == 3)
        #expect(report.negativeSeconds == 1800)
        let point = report.operatingPoint
        #expect(point.threshold == 0.3)
        #expect(point.acceptedRight == 2)
        #expect(point.accepted == 3)
        #expect(point.acceptance == 0.5)
        #expect(point.acceptanceIgnoringRight == 0.75)
        #expect(point.falseAccepts == 1)
        #expect(point.falseAcceptsPerHour == 2)
        // The curve re-applies thresholds to the confidences; a result without words is never accepted.
        #expect(report.curve.map(\.acceptedRight) == [3, 1, 0])
        #expect(report.curve.map(\.accepted) == [4, 2, 0])
        #expect(report.curve.map(\.falseAccepts) == [2, 0, 0])
        #expect(report.curve.map(\.falseAcceptsPerHour) == [4, 0, 0])
    }

    @Test func withoutNegativeAudioThereIsNoRatePerHour() {
        let report = RejectionReport(
            outcomes: [.init(role: .positive, right: true, heard: true, rejected: false, confidence: 0.9, seconds: 1)],
            threshold: nil
        )
        #expect(report.operatingPoint.falseAcceptsPerHour == nil)
        #expect(report.operatingPoint.acceptance == 1)
        #expect(report.curve.isEmpty)
    }

    @Test func aModelWeighsNamedFeatures() {
        let model = ConfidenceModel(weights: ["a": 2, "b": -1], intercept: 0.5, operatingPoint: 0.5)
        #expect(abs(model.probability(["a": 1, "b": 3]) - 1 / (1 + exp(0.5))) < 1e-12)
        #expect(model.probability([:]) == 1 / (1 + exp(-0.5)))
        #expect(ConfidenceModel(slope: 0.2, intercept: 0, operatingPoint: 0.5).probability(10) == 1 / (1 + exp(-2.0)))
    }

    @Test func wordsThatExplainTooLittleOfTheSpeechAreNotTheCommand() {
        let model = ConfidenceModel(weights: ["a": 2], intercept: 0, operatingPoint: 0.5, outsidePhoneLimit: 6)
        #expect(model.probability(["a": 3, "outsidePhoneRatio": 6]) == 1 / (1 + exp(-6.0)))
        #expect(model.probability(["a": 3, "outsidePhoneRatio": 6.5]) == 0)
        // Without a limit the ratio is only a feature like any other.
        #expect(ConfidenceModel(weights: ["a": 2], intercept: 0, operatingPoint: 0.5).probability(["a": 3, "outsidePhoneRatio": 60]) > 0.99)
        #expect(ConfidenceModel.features.outsidePhoneLimit == 6)
    }
}

/// A one-word grammar hearing other talk: the word it picks out of a sentence is not the command.
@Suite(
    "Words picked out of other speech (live)",
    .enabled(if: Fixtures.hasPocketSphinx && Fixtures.corpora != nil, "needs pocketsphinx-en-us and the shared corpora (HEED_CORPORA or ../shared/corpora)")
)
struct WordsOutOfOtherSpeechTests {
    private static func digits() throws -> PocketSphinxRecognizer {
        try Fixtures.recognizer(grammar: Fixtures.packageRoot.appendingPathComponent("grammars/digit.gram").path) { configuration in
            configuration.rejectionThreshold = ConfidenceModel.features.lenientPoint
        }
    }

    /// Coffee orders through the one-digit grammar at the lenient point: of the first 50 (by file
    /// name), 3 were taken as a digit before the limit on phones outside the words ("nine" twice,
    /// "six", at 0.38–0.63), none with it (`scripts/rejection-eval.py`, the `talk-digits` set;
    /// docs/MEASUREMENTS.md, "Words that explain too little").
    @Test func coffeeOrdersAreNotDigits() throws {
        let barista = (Fixtures.corpora ?? "") + "/picovoice_barista"
        let orders = try CorpusManifest(path: barista + "/manifest.tsv").entries.map(\.audioPath).sorted().prefix(50)
        let recognizer = try Self.digits()
        var taken: [String] = []
        for order in orders {
            let result = try recognizer.recognize(try AudioFile.read(order))
            if !result.rejected { taken.append("\((order as NSString).lastPathComponent): \(result.text) (\(result.confidence))") }
        }
        #expect(orders.count == 50)
        #expect(taken.count <= 1, "taken as digits: \(taken)")
    }

    /// People's digits heard right keep their confidence: no real command of any set reaches the limit.
    @Test func digitsHeardRightAreNotCut() throws {
        let fsdd = (Fixtures.corpora ?? "") + "/fsdd_digits"
        let entries = try CorpusManifest(path: fsdd + "/manifest.tsv").entries.filter { $0.audioPath.contains("_jackson_") }.prefix(30)
        let recognizer = try Self.digits()
        var heardRight = 0
        for entry in entries {
            let result = try recognizer.recognize(try AudioFile.read(entry.audioPath))
            guard result.text == entry.transcript else { continue }
            heardRight += 1
            #expect(result.confidence > 0, "\(entry.audioPath): \(result.text) cut to 0")
        }
        #expect(heardRight >= 15)
    }
}

/// Real recordings through the shipped intents' grammar at the default threshold.
@Suite(
    "Rejection of real speech (live)",
    .enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata")
)
struct LiveRejectionTests {
    @Test func readSentencesAreRejectedAndScoreBelowTheBundledCommands() throws {
        let recognizer = try Fixtures.shippedIntentsRecognizer()
        let sentences = try FileManager.default.contentsOfDirectory(atPath: Fixtures.testData + "/librivox").filter { $0.hasSuffix(".wav") }
        #expect(sentences.count == 5)
        var accepted: [String] = []
        var highest = 0.0
        for sentence in sentences {
            let result = try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/librivox/" + sentence))
            if !result.rejected { accepted.append("\(sentence): \(result.text) (\(result.confidence))") }
            highest = max(highest, result.confidence)
        }
        // Measured: none of the 5 accepted (README, "Confidence and rejection").
        #expect(accepted.count <= 1, "accepted: \(accepted)")

        // The bundled commands are heard right and score above every read sentence. At the
        // default threshold, set for hands-free listening, both are rejected (measured 0.73
        // and 0.33): this speaker's commands score low (README, "Confidence and rejection").
        for (file, text) in [("pause.wav", "pause"), ("set_a_timer_for_5_minutes.wav", "set a timer for five minutes")] {
            let result = try recognizer.recognize(try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/" + file).path))
            #expect(result.text.hasPrefix(text), "\(file): heard \(result.text)")
            #expect(result.confidence > highest, "\(file): confidence \(result.confidence), a read sentence \(highest)")
        }
    }

    @Test(.enabled(if: Fixtures.corpora != nil, "needs the shared corpora (HEED_CORPORA or ../shared/corpora)"))
    func singleWordsOutsideTheGrammarAreMostlyRejected() throws {
        let recognizer = try Fixtures.shippedIntentsRecognizer()
        let manifest = try CorpusManifest(path: (Fixtures.corpora ?? "") + "/speech_commands_v001_sample/manifest.tsv")
        let auxiliary = manifest.entries.filter { $0.labels?.contains("auxiliary_word") == true }
        var accepted = 0
        for entry in auxiliary where !(try recognizer.recognize(try AudioFile.read(entry.audioPath))).rejected { accepted += 1 }
        #expect(auxiliary.count == 50)
        // Measured: none of the 50 accepted at the default threshold.
        #expect(accepted <= 3)
    }

    @Test func evalCountsNegativesAndPrintsTheCurve() throws {
        let folder = try TemporaryFolder.make()
        let manifest = folder.appendingPathComponent("librivox.tsv").path
        let rows = ["0880", "0930"].map { "\(Fixtures.testData)/librivox/sense_and_sensibility_01_austen_64kb-\($0).wav" }
        try (["wav"] + rows).joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try Fixtures.run(Fixtures.heedBinary, ["eval", "--json", "--negative", "--curve", "-g", Fixtures.grammar("commands.gram"), manifest])
        #expect(result.status == 0, "\(result.error)")
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        let rejection = report?["rejection"] as? [String: Any]
        #expect(rejection?["negatives"] as? Int == 2)
        #expect(rejection?["positives"] as? Int == 0)
        #expect(abs((rejection?["negativeSeconds"] as? Double ?? 0) - 6.28) < 0.01)
        #expect((rejection?["curve"] as? [[String: Any]])?.count == 19)
        let point = rejection?["operatingPoint"] as? [String: Any]
        #expect(point?["acceptance"] == nil)
        #expect(point?["falseAcceptsPerHour"] != nil)

        let text = try Fixtures.run(Fixtures.heedBinary, ["eval", "--negative", "--curve", "-g", Fixtures.grammar("commands.gram"), manifest])
        #expect(text.output.contains("rejection at threshold"))
        #expect(text.output.contains("0 positives (0 heard right), 2 negatives"))
        #expect(text.output.contains("threshold  acceptance  accepted  false accepts  per hour"))
    }
}

@Suite("Operating points in the rejection report")
struct OperatingPointReportTests {
    @Test func theLenientPointIsCountedBesideTheOperatingPoint() throws {
        let outcomes = [
            RejectionReport.Outcome(role: .positive, right: true, heard: true, rejected: true, confidence: 0.5, seconds: 1),
            RejectionReport.Outcome(role: .positive, right: true, heard: true, rejected: false, confidence: 0.9, seconds: 1),
            RejectionReport.Outcome(role: .positive, right: false, heard: true, rejected: true, confidence: 0.1, seconds: 1),
            RejectionReport.Outcome(role: .negative, right: true, heard: true, rejected: true, confidence: 0.3, seconds: 1800),
            RejectionReport.Outcome(role: .negative, right: true, heard: true, rejected: true, confidence: 0.1, seconds: 1800),
        ]
        let report = RejectionReport(outcomes: outcomes, threshold: 0.87, lenientThreshold: 0.2)
        #expect(report.operatingPoint.acceptedRight == 1)
        #expect(report.operatingPoint.acceptanceOfHeardRight == 0.5)
        let lenient = try #require(report.lenientPoint)
        #expect(lenient.acceptedRight == 2)
        #expect(lenient.acceptanceOfHeardRight == 1)
        #expect(lenient.falseAccepts == 1)
        #expect(lenient.falseAcceptsPerHour == 1)
    }
}
