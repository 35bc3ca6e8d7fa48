import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure accuracy, rejection, speed and memory over a labelled corpus.",
        discussion: """
            MANIFEST is a TSV file with a header row and the columns wav, transcript, \
            intent_slots_json and speaker (only wav is required); paths are relative to \
            the manifest (the format of the shared corpora).

            Rows whose transcript the grammar can produce are in-grammar: they count \
            towards sentence accuracy, word error rate and false rejects. Rows whose \
            transcript it cannot produce are out-of-grammar: they should be rejected, \
            and count towards false accepts. Latency is the wall time to decode one \
            recording; the real-time factor is decode CPU seconds over audio seconds.

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
            """
    )

    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var intents: IntentOptions
    @OptionGroup var vocabulary: VocabularyOptions

    @Option(help: ArgumentHelp("A noise recording (WAV) to mix into every recording.", valueName: "file.wav"))
    var noise: String?

    @Option(help: ArgumentHelp("The signal-to-noise ratio for --noise, in dB.", valueName: "db"))
    var snr: Double?

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @Argument(help: ArgumentHelp("The corpus manifest.", valueName: "manifest.tsv"))
    var manifest: String

    func validate() throws {
        if (noise == nil) != (snr == nil) { throw ValidationError("--noise and --snr go together") }
    }

    func run() throws {
        let manifest = try Manifest(path: manifest)
        let catalog = intents.isEmpty ? nil : try intents.loadCatalog()
        let registered = catalog == nil ? .empty : try vocabulary.snapshot(dictionaryPath: recognizer.dictionary)
        var recognizer = try recognizer.makeRecognizer(catalog: catalog, vocabulary: registered)
        let condition = try noise.map { path in
            Evaluation.NoiseCondition(mixer: try NoiseMixer(noise: try AudioFile.read(path)), snr: snr ?? 0, name: path)
        }
        let showProgress = standardErrorIsTerminal
        let evaluation = Evaluation(manifest: manifest, intents: catalog?.parser(vocabulary: registered.terms), noise: condition)
        let report = try evaluation.run(recognizer: &recognizer, loadSeconds: recognizer.loadSeconds) { index, count, file in
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
        if let accuracy = report.intentAccuracy {
            let slots = (report.slotErrors ?? [:]).sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("  intent accuracy \(percent(accuracy)) of \(report.intentUtterances ?? 0) labelled (\(percent(report.intentAccuracyIgnoringRejection)) ignoring rejection)   slot errors: \(slots.isEmpty ? "none" : slots)")
        }
        if !report.errors.isEmpty { lines.append("  errors:") }
        for error in report.errors {
            let detail = error.message ?? "expected \"\(error.expected ?? "")\", heard \"\(error.heard ?? "")\" (confidence \(number(error.confidence)))"
            lines.append("    \(error.kind.rawValue): \(error.file) (line \(error.line)): \(detail)")
        }
        return lines.joined(separator: "\n")
    }
}
