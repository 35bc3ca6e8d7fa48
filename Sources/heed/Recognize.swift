import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedSpeech

struct Recognize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recognize recordings with a grammar.",
        discussion: """
            Each FILE is a WAV file (RIFF, 16-bit integer PCM, any sample rate, mono or \
            multi-channel), or with --raw headerless S16LE samples at --rate Hz. Channels \
            are averaged to mono and other rates are resampled to 16 kHz. Other encodings \
            (float, 8/24/32-bit, A-law, µ-law, compressed) are refused with a clear error: \
            convert them with sox first.

            Confidence is the probability that the text is right, from how closely the \
            grammar's best path scores to a free phone loop over the same audio (see the \
            README). A result below --reject-below is marked rejected: not a command.

            Examples:
              heed recognize --grammar grammars/commands.gram recording.wav
              heed recognize --json --grammar cards.gram a.wav b.wav
              heed recognize --raw --rate 8000 --grammar digits.gram phone.raw
            """
    )

    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var audio: AudioOptions

    @Flag(help: "Print one JSON object per file, one per line.")
    var json = false

    @Argument(help: ArgumentHelp("Recordings to recognize.", valueName: "file"))
    var files: [String]

    func run() throws {
        let recognizer = try recognizer.makeRecognizer()
        var failed = false
        for file in files {
            do {
                let audio = try AudioFile.read(file, format: audio.format)
                let result = try recognizer.recognize(audio)
                print(json ? try jsonLine(FileResult(file: file, result: result)) : Self.describe(file: file, result: result))
            } catch let error as AudioError {
                failed = true
                if json { print(try jsonLine(["file": file, "error": error.description])) }
                printError("heed: error: \(error.description)")
            }
        }
        if failed { throw ExitCode.failure }
    }

    private static func describe(file: String, result: RecognitionResult) -> String {
        let heard = result.text.isEmpty ? "(nothing)" : "\"\(result.text)\""
        var lines = ["\(file): \(heard)  confidence \(format(result.confidence))\(result.rejected ? "  REJECTED" : "")"]
        if !result.words.isEmpty {
            lines.append("  words: " + result.words.map { "\($0.word) \(format($0.start))–\(format($0.end))s" }.joined(separator: ", "))
        }
        for alternative in result.alternatives {
            lines.append("  or: \"\(alternative.text)\"  score \(format(alternative.score))")
        }
        lines.append("  \(format(result.durationSeconds)) s of audio decoded in \(format(result.decodeSeconds)) s")
        return lines.joined(separator: "\n")
    }
}

/// `recognize --json`'s object: the file and its result.
private struct FileResult: Encodable {
    var file: String
    var result: RecognitionResult

    func encode(to encoder: any Encoder) throws {
        try result.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(file, forKey: .file)
    }

    private enum Key: String, CodingKey { case file }
}

func format(_ value: Double) -> String {
    String(format: "%.2f", value)
}
