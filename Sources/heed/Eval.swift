import ArgumentParser
import Foundation
import HeedCore
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

            Example:
              heed eval corpora/speech_commands_v001_sample/manifest.tsv \\
                --grammar grammars/speech-commands.gram --json
            """
    )

    @OptionGroup var recognizer: RecognizerOptions

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @Argument(help: ArgumentHelp("The corpus manifest.", valueName: "manifest.tsv"))
    var manifest: String

    func run() throws {
        let manifest = try Manifest(path: manifest)
        var recognizer = try recognizer.makeRecognizer()
        let showProgress = standardErrorIsTerminal
        let report = try Evaluation(manifest: manifest).run(recognizer: &recognizer, loadSeconds: recognizer.loadSeconds) { index, count, file in
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
        if !report.errors.isEmpty { lines.append("  errors:") }
        for error in report.errors {
            let detail = error.message ?? "expected \"\(error.expected ?? "")\", heard \"\(error.heard ?? "")\" (confidence \(number(error.confidence)))"
            lines.append("    \(error.kind.rawValue): \(error.file) (line \(error.line)): \(detail)")
        }
        return lines.joined(separator: "\n")
    }
}
