import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import HeedEvaluation
import HeedState

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure accuracy, rejection, speed and memory over a labelled corpus.",
        discussion: """
            MANIFEST is a TSV file with a header row and the columns wav, transcript, \
            intent_slots_json, speaker and expect (only wav is required); paths are relative \
            to the manifest (the format of the shared corpora). Other columns are ignored.

            Rows whose transcript the grammar can produce are in-grammar: they count \
            towards sentence accuracy, word error rate and false rejects. Rows whose \
            transcript it cannot produce are out-of-grammar: they should be rejected, \
            and count towards false accepts. Latency is the wall time to decode one \
            recording (with --live, from its last chunk to the result: what a stream \
            waits for once the speaker stops); the real-time factor is decode CPU seconds over audio seconds.

            Rejection: every row is a positive (a command, to accept) or a negative \
            (other speech, to reject). The expect column says so (accept or reject); \
            when it is empty, an in-grammar transcript is a positive, an out-of-grammar one \
            a negative, and a row with only an intent label a positive. --negative makes \
            every row a negative. The report gives acceptance (positives heard right and \
            accepted, over all positives; also accepted right or not) and false accepts \
            (negatives accepted, and per hour of negative audio) at the rejection \
            threshold; --curve adds them at thresholds 0.05 to 0.95, re-applied to the \
            confidences (a result is accepted when it has words and its confidence is at \
            least the threshold).

            With --intents, the grammar is compiled from the intent definitions and each \
            result is parsed into an intent and scored against the row's intent_slots_json \
            label ({"intent": NAME, "slots": {...}}): right when the intent is the label's and \
            every labelled slot has exactly the labelled value (extra slots are fine); a \
            rejected result has no intent.

            With --noise FILE --snr DB, the noise is mixed into every recording the way the \
            Picovoice speech-to-intent benchmark does (loudest 2048-sample frame energies, a \
            random offset seeded by the file name, peak-normalised).

            Examples:
              heed eval corpora/speech_commands_v001_sample/manifest.tsv \\
                --grammar grammars/speech-commands.gram --json
              heed eval corpora/picovoice_barista/manifest.tsv \\
                --intents intents/examples/coffee.json --noise corpora/picovoice_barista/noise/kitchen.wav --snr 6
              heed eval librivox.tsv --intents intents --negative --curve
            """
    )

    @OptionGroup var grammar: GrammarOption
    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var intents: IntentOptions
    @OptionGroup var context: ContextOptions
    @OptionGroup var vocabulary: VocabularyOptions

    @OptionGroup var noise: NoiseOptions

    @Flag(help: "Every row is speech to reject (a negative), whatever its labels.")
    var negative = false

    @Flag(help: "Also report acceptance and false accepts at rejection thresholds 0.05 to 0.95.")
    var curve = false

    @Flag(
        help: "Recognize what heed listen's endpointer cuts out of each recording (its longest utterance), not the whole file.")
    var endpoint = false

    @Flag(
        help: "Decode each recording as a stream, 20 ms at a time (as heed serve decodes a Wyoming or hand-off stream), not as one whole utterance.")
    var live = false

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @Argument(help: ArgumentHelp("The corpus manifest.", valueName: "manifest.tsv"))
    var manifest: String

    @Option(
        help: ArgumentHelp(
            "How many recordings to decode at once, one recognizer each (default: one per core).",
            discussion: "With fewer jobs than cores, each recognizer's phone loop runs on a free core beside its grammar pass: the latency falls, the CPU does not.",
            valueName: "n"))
    var jobs: Int?

    func validate() throws {
        if let jobs, !(1...64).contains(jobs) { throw ValidationError("--jobs must be between 1 and 64, not \(jobs)") }
    }

    func run() throws {
        let manifest = try CorpusManifest(path: manifest)
        let catalog = intents.isEmpty ? nil : context.apply(to: try intents.loadCatalog())
        let registered = catalog == nil ? .empty : try vocabulary.snapshot(dictionaryPath: recognizer.dictionary)
        let setup = try catalog.map { try recognizer.setup($0, vocabulary: registered) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let workers = jobs ?? cores
        // Phone loops beside the grammar passes only on the cores the jobs leave free.
        let makeRecognizer = try recognizer.recognizerFactory(
            grammar: grammar, setup: setup, phoneLoopHelpers: workers < cores ? PhoneLoopHelpers(limit: cores - workers) : nil)
        let condition = try noise.condition()
        let showProgress = standardErrorIsTerminal
        let evaluation = Evaluation(
            manifest: manifest,
            intents: setup?.parser,
            noise: condition,
            allNegative: negative,
            threshold: recognizer.threshold(),
            lenientThreshold: recognizer.rejectionThreshold == nil ? recognizer.threshold(lenient: true) : nil,
            curveThresholds: curve ? RejectionReport.standardThresholds : nil,
            endpointing: endpoint ? .standard : nil,
            live: live,
            denoising: (recognizer.denoise.mode, recognizer.denoise.settings)
        )
        let report = try evaluation.run(workers: workers, makeRecognizer: makeRecognizer) {
            index, count, file in
            if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K[\(index)/\(count)] \(file)".utf8)) }
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        print(json ? try jsonLine(report) : Self.describe(report))
        if report.errors.contains(where: { $0.kind == .unreadable }) { throw ExitCode.failure }
    }

    private static func describe(_ report: EvaluationReport) -> String {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "n/a" }
        func number(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "n/a" }
        var lines = [
            "\(report.manifest): \(report.utterances) utterances (\(report.inGrammarUtterances) in grammar, \(report.outOfGrammarUtterances) out of grammar), \(String(format: "%.1f", report.audioSeconds)) s of audio",
            "  sentence accuracy \(percent(report.sentenceAccuracy))   word error rate \(percent(report.wer))",
            "  false rejects \(percent(report.falseRejectRate)) of in-grammar   false accepts \(percent(report.falseAcceptRate)) of out-of-grammar",
            "  mean confidence: right \(number(report.meanConfidence.correct))   wrong \(number(report.meanConfidence.wrong))   out of grammar \(number(report.meanConfidence.outOfGrammar))",
            "  real-time factor \(String(format: "%.4f", report.rtf))   latency p50 \(String(format: "%.1f", report.p50LatencyMs)) ms  p95 \(String(format: "%.1f", report.p95LatencyMs)) ms   load \(String(format: "%.3f", report.loadSeconds)) s   peak RSS \(String(format: "%.1f", report.peakRSSMegabytes)) MB",
        ]
        if let noise = report.noise { lines.insert("  noise: \(noise)", at: 1) }
        if let rejection = report.rejection {
            lines.append(contentsOf: describe(rejection))
        }
        if let accuracy = report.intentAccuracy {
            let slots = (report.slotErrors ?? [:]).sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("  intent accuracy \(percent(accuracy)) of \(report.intentUtterances ?? 0) labelled (\(percent(report.intentAccuracyIgnoringRejection)) ignoring rejection)   slot errors: \(slots.isEmpty ? "none" : slots)")
        }
        if !report.errors.isEmpty { lines.append("  errors:") }
        for error in report.errors {
            let detail = error.message ?? "expected \"\(error.expected ?? "")\", heard \"\(error.heard ?? "")\" (confidence \(error.confidence.map { RecognitionResult.shown(confidence: $0) } ?? "n/a"))"
            lines.append("    \(error.kind.rawValue): \(error.file) (line \(error.line)): \(detail)")
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ rejection: RejectionReport) -> [String] {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "n/a" }
        func perHour(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "n/a" }
        let point = rejection.operatingPoint
        let threshold = point.threshold.map { String(format: "%.2f", $0) } ?? "the recognizer's"
        var lines = [
            "  rejection at threshold \(threshold): \(rejection.positives) positives (\(rejection.positivesRight) heard right), \(rejection.negatives) negatives (\(String(format: "%.3f", rejection.negativeSeconds / 3600)) h)",
            "    acceptance \(percent(point.acceptance)) (\(point.acceptedRight) heard right and accepted, \(percent(point.acceptanceOfHeardRight)) of those heard right; \(percent(point.acceptanceIgnoringRight)) accepted right or not)   false accepts \(point.falseAccepts), \(perHour(point.falseAcceptsPerHour)) per hour",
        ]
        if let lenient = rejection.lenientPoint {
            lines.append(
                "    at the lenient point \(String(format: "%.2f", lenient.threshold ?? 0)) (windows, chosen recordings): acceptance "
                    + "\(percent(lenient.acceptance)) (\(percent(lenient.acceptanceOfHeardRight)) of those heard right)   false accepts "
                    + "\(lenient.falseAccepts), \(perHour(lenient.falseAcceptsPerHour)) per hour")
        }
        if !rejection.curve.isEmpty {
            lines.append("    threshold  acceptance  accepted  false accepts  per hour")
            for point in rejection.curve {
                let threshold = String(format: "%.2f", point.threshold ?? 0)
                let acceptance = percent(point.acceptance), accepted = percent(point.acceptanceIgnoringRight)
                let falseAccepts = "\(point.falseAccepts)", hourly = perHour(point.falseAcceptsPerHour)
                lines.append(
                    "    " + [threshold.padding(9), acceptance.padding(10), accepted.padding(8), falseAccepts.padding(13), hourly].joined(separator: "  ")
                )
            }
        }
        return lines
    }
}

extension String {
    /// Left-aligned in `width` columns.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
