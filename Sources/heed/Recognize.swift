import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import HeedState

struct Recognize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recognize recordings with a grammar, or dictate them (--dictation).",
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
              heed recognize --intents intents examples/audio/set_a_timer_for_5_minutes.wav

            With --intents, the grammar is compiled from the intent definitions and each \
            result names the intent and its typed parameters (also when the result is \
            rejected: `heed run --audio` is what refuses to act on a rejected recording).

            With --dictation there is no grammar: the recording is free speech, decoded with \
            PocketSphinx's English language model, the words of the registered vocabulary (heed \
            vocab) and of each --contextual-string added. The text is formatted: spoken \
            punctuation ("comma", "full stop", "question mark", "new line") becomes marks and \
            amounts become digits (docs/DICTATION.md). `heed transcribe` is this command.
              heed transcribe --dictation note.wav
              heed recognize --dictation --contextual-string "Dashwood" --json chapter.wav
            """,
        aliases: ["transcribe"]
    )

    @Flag(help: "Dictation: free speech with the language model instead of a grammar; the text is formatted.")
    var dictation = false

    @Option(
        name: .customLong("contextual-string"),
        help: ArgumentHelp("With --dictation: a phrase to expect, such as a name; its words are added (repeatable).", valueName: "text"))
    var contextualStrings: [String] = []

    @OptionGroup var grammar: GrammarOption
    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var audio: AudioOptions
    @OptionGroup var intents: IntentOptions
    @OptionGroup var context: ContextOptions
    @OptionGroup var vocabulary: VocabularyOptions

    @Flag(help: "Print one JSON object per file, one per line.")
    var json = false

    @Argument(help: ArgumentHelp("Recordings to recognize.", valueName: "file"))
    var files: [String]

    func validate() throws {
        if dictation, grammar.grammar != nil || !intents.isEmpty {
            throw ValidationError("--dictation takes no grammar: leave out --grammar and --intents")
        }
        if !dictation, !contextualStrings.isEmpty { throw ValidationError("--contextual-string goes with --dictation") }
    }

    func run() throws {
        let catalog = intents.isEmpty || dictation ? nil : context.apply(to: try intents.loadCatalog())
        let registered = catalog == nil && !dictation ? .empty : try vocabulary.snapshot(dictionaryPath: recognizer.dictionary)
        let setup = try catalog.map { try self.recognizer.setup($0, vocabulary: registered) }
        let parser = setup?.parser
        let denoise = recognizer.denoise
        let recognizer =
            dictation
            ? try recognizer.makeDictationRecognizer(vocabulary: registered, contextualStrings: contextualStrings)
            : try recognizer.makeRecognizer(grammar: grammar, setup: setup, lenient: true)
        var failed = false
        for file in files {
            do {
                let recording = try AudioFile.read(file, format: audio.format)
                let result = try denoise.mode.hear(recording, with: recognizer, settings: denoise.settings).result
                let intent = parser?.parse(result.text).first
                let snr = SignalToNoise.estimate(recording.samples, sampleRate: recording.sampleRate)
                var output = FileResult(file: file, result: result, intent: intent, withIntents: catalog != nil, snrDecibels: snr)
                if dictation { output.formattedText = DictationText.format(result.text) }
                print(json ? try jsonLine(output) : Self.describe(output))
            } catch let error as AudioError {
                failed = true
                if json { print(try jsonLine(["file": file, "error": error.description])) }
                printError("heed: error: \(error.description)")
            }
        }
        if failed { throw ExitCode.failure }
    }

    private static func describe(_ output: FileResult) -> String {
        let result = output.result
        let heard = result.text.isEmpty ? "(nothing)" : "\"\(output.formattedText ?? result.text)\""
        var lines = ["\(output.file): \(heard)  confidence \(RecognitionResult.shown(confidence: result.confidence))\(result.rejected ? "  REJECTED" : "")"]
        if output.withIntents {
            lines.append("  intent: " + (output.intent.map(IntentDescription.init).map(\.text) ?? "none"))
        }
        if !result.words.isEmpty {
            lines.append("  words: " + result.words.map { "\($0.word) \(format($0.start))–\(format($0.end))s" }.joined(separator: ", "))
        }
        for alternative in result.alternatives {
            lines.append("  or: \"\(alternative.text)\"  score \(Int(alternative.score))")
        }
        lines.append("  \(format(result.durationSeconds)) s of audio decoded in \(format(result.decodeSeconds)) s")
        return lines.joined(separator: "\n")
    }
}

/// `recognize --json`'s object: the file, its result and, with `--intents`, the intent.
private struct FileResult: Encodable {
    var file: String
    var result: RecognitionResult
    var intent: IntentMatch?
    var withIntents: Bool
    /// The recording's estimated signal-to-noise ratio in dB, when it can be told.
    var snrDecibels: Double?
    /// With `--dictation`: the text formatted (punctuation, digits); `text` has the words as said.
    var formattedText: String?

    func encode(to encoder: any Encoder) throws {
        try result.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(file, forKey: .file)
        if withIntents { try container.encode(intent, forKey: .intent) }
        try container.encodeIfPresent(snrDecibels.map { ($0 * 10).rounded() / 10 }, forKey: .snrDecibels)
        try container.encodeIfPresent(formattedText, forKey: .formattedText)
    }

    private enum Key: String, CodingKey { case file, intent, snrDecibels, formattedText }
}

func format(_ value: Double) -> String {
    String(format: "%.2f", value)
}
