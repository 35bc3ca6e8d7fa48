import ArgumentParser
import Foundation
import Glibc
import HeedAudio
import HeedClient
import HeedCore
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
import HeedRuntime
import HeedSpeech
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import HeedState

struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listen on the microphone for spoken commands and carry them out (hands-free).",
        discussion: """
            Audio comes from an ALSA capture device (--device, default "default"), or from a \
            recording with --input FILE.wav. Each utterance is found by the endpointer (speech, \
            then --end-silence seconds of quiet), recognized with the grammar compiled from the \
            intents and the registered vocabulary, rejected when it does not sound like a \
            command, and carried out through the plugin of the app that handles it. When the \
            plugin needs a value or a choice, Heed asks by voice and listens for the answer \
            with a grammar of only that turn's answers ("yes", "the second one", "cancel").

            Activation (--activation):
              always   every utterance may be a command (the default)
              wake     say the wake phrase first (--wake-phrase, default "hey heed"): the rest
                       of the utterance, or the next one within --command-window seconds
              push     send SIGUSR1 (kill -USR1 PID) to open the command window

            Responses and questions are always printed; they are also spoken (espeak-ng → \
            --playback-device) when the config's "spokenResponses" is true and the app's \
            speech permission is granted (asked once; see heed auth speech). While Heed \
            speaks, what the microphone hears is ignored.

            Registering vocabulary with heed vocab while this runs takes effect within a \
            second, without a restart. SIGINT and SIGTERM stop cleanly.

            Without a sound card, ALSA's file plugin can stand in for the microphone; see \
            the README, "Hands-free".

            Examples:
              heed listen
              heed listen --activation wake --wake-phrase "hey heed" --json
              heed listen --input examples/audio/pause.wav --dry-run --reject-below 0.5
              heed listen --device plughw:1,0 --end-silence 0.4
            """
    )

    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var intents: IntentOptions
    @OptionGroup var plugins: PluginOptions
    @OptionGroup var vocabulary: VocabularyOptions
    @OptionGroup var handsFree: ListenerOptions

    @Option(help: ArgumentHelp("The ALSA capture device.", valueName: "name"))
    var device = "default"

    @Option(help: ArgumentHelp("A recording (WAV, or raw with --raw) to listen to instead of the microphone.", valueName: "file.wav"))
    var input: String?

    @Flag(help: "With --input: deliver the recording at the pace of real time, as a microphone would.")
    var realTime = false

    @Flag(
        name: .customLong("check-wake-phrase"),
        help: "Judge the wake phrase against the command grammar, print why it may misfire, and exit (status 1 when it may).")
    var checkWakePhrase = false

    @Option(
        name: .customLong("max-seconds"),
        help: ArgumentHelp("Stop after this many seconds of audio (tests, benchmarks).", valueName: "seconds"))
    var maximumSeconds: Double?

    @Flag(name: .customLong("dry-run"), help: "Report the intents heard; do not dispatch them.")
    var dryRun = false

    @Flag(help: "Print one JSON event per line (speech start and end, partial and final results, intents, dialog turns, responses, timings).")
    var json = false

    func validate() throws {
        if let maximumSeconds, maximumSeconds <= 0 { throw ValidationError("--max-seconds must be positive") }
        if realTime && input == nil { throw ValidationError("--real-time applies to --input only") }
    }

    func run() async throws {
        // Blocks of 64 KiB and more (PocketSphinx's search tables, utterance buffers) are mapped
        // and given back when freed, so a long-running listener's memory follows what one
        // utterance needs instead of the heap's high-water mark: 5 MB less at the peak.
        Allocator.mapLargeAllocations(from: 64 * 1024)
        let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
        let settings = try plugins.configuration()
        let store = try vocabulary.store(pluginFolders: plugins.searchFolders, dictionaryPath: recognizer.dictionary, configuration: settings)
        if checkWakePhrase {
            let judgement = try handsFree.judgeWakePhrase(
                handsFree.phrase(settings), catalog: catalog, vocabulary: try store.snapshot(), recognizer: recognizer)
            print(json ? try jsonLine(WakePhraseReport(judgement)) : WakePhraseReport(judgement).description)
            if !judgement.warnings.isEmpty { throw ExitCode.failure }
            return
        }
        let logger = Logger(label: "heed")

        let source: any AudioSource
        // Held until heed listen ends: heed serve's hand-offs are refused meanwhile, and a
        // second heed listen on the device stops here.
        let microphone = input == nil ? try Self.claimMicrophone(device, owner: "heed listen") : nil
        defer { microphone?.release() }
        if let input {
            source = try FileAudioSource(path: input, realTime: realTime)
        } else {
            source = try ALSACapture(device: device)
        }
        let authorization = try plugins.authorizationStore(configuration: settings)
        let installed = try plugins.installedPlugins()
        let dispatcher =
            dryRun
            ? nil
            : Dispatcher(
                catalog: catalog, manifests: installed.manifests, duplicates: installed.duplicates, authorization: authorization,
                vocabularyStore: store, logger: logger)
        let printer = EventPrinter(json: json)
        // What parsing and loading ran so far is not needed again (the listener releases its own set-up).
        Allocator.releaseFilePages()
        let listener = try handsFree.makeListener(
            source: source, catalog: catalog, vocabulary: store, configuration: settings, recognizer: recognizer, dispatcher: dispatcher,
            authorization: authorization, maximumSeconds: maximumSeconds, logger: logger, emit: { printer.print($0) })

        // Trapped before the listener starts: a push that comes early is a push, not the
        // signal's default action (ending the process).
        let pushes = await UnixSignalsSequence(trapping: .sigusr1)
        let service = ListenerService(listener: listener)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: PushToTalkService(listener: listener, signals: pushes)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        if let failure = service.failure { throw failure }
    }
}

extension Listen {
    /// Claims the capture device among Heed's programs; `nil`, with a warning, when there is no
    /// runtime folder to claim it in (no XDG_RUNTIME_DIR and no /run/user/UID).
    static func claimMicrophone(_ device: String, owner: String) throws -> MicrophoneClaim? {
        do {
            return try MicrophoneClaim.take(device: device, owner: owner, folder: HeedProtocol.runtimeFolder())
        } catch {
            guard case .unusable = error else { throw error }
            printError("heed: warning: \(error): other Heed programs will not know that \(owner) records from '\(device)'")
            return nil
        }
    }

}

/// Prints the listener's events: one JSON object a line, or short lines for people.
struct EventPrinter: Sendable {
    let json: Bool

    /// Prints one event and flushes it at once: a reader on a pipe sees events as they happen.
    func print(_ output: ListenerOutput) {
        defer { fflush(nil) }
        if json {
            if let line = Self.jsonText(output) { Swift.print(line) }
        } else if let line = Self.text(output) {
            Swift.print(line)
        }
    }

    /// The event's JSON line.
    static func jsonText(_ output: ListenerOutput) -> String? {
        switch output {
        case .listener(let event): try? jsonLine(event)
        case .conversation(let event): try? jsonLine(event)
        }
    }

    /// The event as a short line for people; `nil` for events people need not see.
    static func text(_ output: ListenerOutput) -> String? {
        switch output {
        case .listener(let event):
            switch event {
            case .listening(let mode, let source): "listening on \(source) (\(mode)); Ctrl-C stops"
            case .wake: "[wake phrase]"
            case .activated: "[push-to-talk]"
            case .final(_, let result):
                "heard \"\(result.text)\" (confidence \(RecognitionResult.shown(confidence: result.confidence)))\(result.rejected ? ": not a command" : "")"
            case .intent(_, let intent): IntentDescription(intent).text
            case .speech(_, let speech): speech.text
            case .askedBack(_, _, let answer) where answer != "yes" && answer != "other":
                answer == "none" ? "[no answer: not acted on]" : "[not acted on]"
            case .vocabulary(_, let change): "vocabulary reloaded: \(change.text ?? change.reason ?? "")"
            case .microphoneLent(_, let appID): "[the microphone is lent to a hand-off for \(appID)]"
            case .microphoneBack: "[the microphone is back]"
            default: nil
            }
        case .conversation(let event):
            if case .answer(let text?) = event { "> \(text)" } else { nil }
        }
    }
}

/// A wake phrase's judgement as `heed listen --check-wake-phrase` prints it.
struct WakePhraseReport: Encodable, CustomStringConvertible {
    var phrase: String
    var phones: String
    var guessedWords: [String]
    var warnings: [String]

    init(_ judgement: WakePhraseJudgement) {
        phrase = judgement.words.joined(separator: " ")
        phones = judgement.phones.map { $0.joined(separator: " ") }.joined(separator: " | ")
        guessedWords = judgement.guessedWords
        warnings = judgement.warnings
    }

    var description: String {
        let count = phones.split(separator: " ").filter { $0 != "|" }.count
        var lines = ["\"\(phrase)\": \(count) phones (\(phones))"]
        lines += warnings.isEmpty ? ["a good wake phrase: long enough, and no command sounds like it"] : warnings.map { "warning: \($0)" }
        return lines.joined(separator: "\n")
    }
}
