import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
import HeedSpeech
import HeedRuntime
import Logging
import HeedState

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Carry out a command, typed or recorded: intent → plugin.",
        discussion: """
            The text is parsed with the templates that build the recognizer's grammar \
            (numbers may be typed as numerals or words), then the plugin of the app that \
            handles the intent is asked to resolve each parameter, confirm and handle it. \
            When the plugin needs a value, a choice or a yes/no, Heed asks: the answers \
            come from --answer (in order), else from the terminal. "cancel" ends the \
            conversation at any turn. Only apps you have authorized are dispatched to; the \
            first dispatch to an app asks you, once.

            With --audio FILE.wav instead of TEXT, the recording is recognized with the \
            grammar compiled from the intents first; a rejected recording is not dispatched. \
            A noisy recording is heard as heed recognize hears it: through the noise \
            suppressor too (--denoise).

            Exit status: 0 when the plugin handled the intent (or it is in progress), 1 \
            when nothing matched, the recording was rejected, the app is not authorized, \
            the plugin failed, or the conversation was cancelled.

            Examples:
              heed run --dry-run "set a timer for ten minutes"
              heed run "set a pasta timer for ten minutes" --answer yes
              heed run --json "play playlist road trip" --answer yes --answer "the second one"
              heed run --dry-run --intents intents/examples/coffee.json "can I get a large latte"
              heed run --audio examples/audio/set_a_timer_for_5_minutes.wav --answer yes
              heed run "set a tea timer for three seconds" --wait 5
            """
    )

    @OptionGroup var intents: IntentOptions
    @OptionGroup var plugins: PluginOptions
    @OptionGroup var vocabulary: VocabularyOptions
    @OptionGroup var adaptation: AdaptationOptions
    @OptionGroup var denoise: DenoiseOptions

    @Flag(name: .customLong("dry-run"), help: "Print the parsed intent; do not dispatch it.")
    var dryRun = false

    @Flag(name: .shortAndLong, help: "Show plugins' standard error and Heed's diagnostics.")
    var verbose = false

    @Flag(help: "Print one JSON event per line: the intent, authorization, each resolve, confirm, handle, with timings.")
    var json = false

    @Option(
        name: .customLong("answer"),
        help: ArgumentHelp("An answer to the next question Heed asks (repeatable, in order).", valueName: "text")
    )
    var answers: [String] = []

    @Option(help: ArgumentHelp("A recording (WAV) of the command, recognized instead of TEXT.", valueName: "file.wav"))
    var audio: String?

    @Option(
        name: .customLong("reject-below"),
        help: ArgumentHelp(
            "With --audio: treat a recognition whose confidence is below this (0–1) as not a command.",
            discussion: "Default: the lenient point, \(ConfidenceModel.features.lenientPoint): the recording is one someone chose to give.",
            valueName: "confidence")
    )
    var rejectionThreshold = ConfidenceModel.features.lenientPoint

    @Option(
        help: ArgumentHelp(
            "After the conversation, keep the plugins running this many seconds and show what they announce (a timer that ends).",
            valueName: "seconds"
        )
    )
    var wait: Double?

    @Argument(help: ArgumentHelp("What the user said.", valueName: "text"))
    var text: String?

    func validate() throws {
        if (text == nil) == (audio == nil) { throw ValidationError("give the command as TEXT or as --audio FILE.wav, not both or neither") }
        if audio == nil, denoise.modeName != nil { throw ValidationError("--denoise applies to --audio FILE.wav") }
        guard (0...1).contains(rejectionThreshold) else { throw ValidationError("--reject-below must be between 0 and 1") }
        if let wait, !(0...86_400).contains(wait) { throw ValidationError("--wait must be between 0 and 86400 seconds") }
    }

    func run() async throws {
        let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
        bootstrapLogging(verbose: verbose)
        let configuration = try plugins.configuration()
        let store = try vocabulary.store(pluginFolders: plugins.searchFolders, configuration: configuration)
        let registered = try store.snapshot()
        let dispatcher = try dryRun ? nil : makeDispatcher(catalog: catalog, vocabularyStore: store, configuration: configuration)
        // A recording is heard as the listener would hear it now: contextual phrases ("louder")
        // only while something they are for is going on.
        let context = audio == nil ? catalog : catalog.inContext(await dispatcher?.refreshContext() ?? [])
        guard let text = try heard(catalog: context, vocabulary: registered) else {
            await dispatcher?.shutdown()
            throw ExitCode.failure
        }
        guard let match = context.parser(vocabulary: registered.terms).parse(text).first else {
            await dispatcher?.shutdown()
            if json { print("{\"event\":\"intent\",\"intent\":null}") }
            printError("heed: no intent matches \"\(text)\"")
            throw ExitCode.failure
        }
        guard let dispatcher else {
            print(json ? try jsonLine(match) : IntentDescription(match).text)
            return
        }
        let user = TerminalUser(answers: answers, quiet: json)
        let printJSON = json
        let result = await dispatcher.dispatch(match, vocabulary: registered, user: user) { event in
            if printJSON, let line = try? jsonLine(event) { print(line) }
        }
        if let wait, result.ending == .success || result.ending == .inProgress {
            await dispatcher.notifications(for: .milliseconds(Int(wait * 1000))) { notification in
                if printJSON {
                    if let line = try? jsonLine(ConversationEvent.notification(notification.text, intent: notification.intent)) { print(line) }
                } else {
                    print(notification.text)
                }
            }
        }
        await dispatcher.shutdown()
        if result.ending != .success && result.ending != .inProgress { throw ExitCode.failure }
    }
}

extension Run {
    private func makeDispatcher(catalog: IntentCatalog, vocabularyStore: VocabularyStore, configuration: HeedConfiguration) throws -> Dispatcher {
        let installed = try plugins.installedPlugins()
        return Dispatcher(
            catalog: catalog,
            manifests: installed.manifests,
            duplicates: installed.duplicates,
            authorization: try plugins.authorizationStore(configuration: configuration),
            vocabularyStore: vocabularyStore,
            logger: Logger(label: "heed")
        )
    }

    /// The command's words: TEXT, or what the recognizer heard in `--audio` (with the registered
    /// vocabulary); `nil` when rejected.
    private func heard(catalog: IntentCatalog, vocabulary: VocabularySnapshot) throws -> String? {
        guard let audio else { return text }
        let setup = try RecognitionSetup(catalog: catalog, vocabulary: vocabulary)
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.rejectionThreshold = rejectionThreshold
        configuration.maximumAlternatives = 0
        configuration.applyAdaptation(adaptation)
        let recognizer = try setup.makeRecognizer(configuration: configuration, logger: Logger(label: "heed"))
        let heard = try denoise.mode.hear(try AudioFile.read(audio), with: recognizer, settings: denoise.settings)
        let result = heard.result
        if json {
            var event = RecognitionEvent(result: result, denoised: heard.denoised)
            event.file = audio
            print(try jsonLine(event))
        } else {
            let suppressed = heard.denoised ? ", noise suppressed" : ""
            print("heard \"\(result.text)\" (confidence \(RecognitionResult.shown(confidence: result.confidence))\(suppressed))\(result.rejected ? ": rejected, not a command" : "")")
        }
        return result.rejected ? nil : result.text
    }
}

/// `{"event": "recognition", …}`: what `run --audio` heard.
struct RecognitionEvent: Encodable {
    var event = "recognition"
    var file: String?
    var text: String
    var confidence: Double
    var rejected: Bool
    /// Whether the recording went through the noise suppressor (`--denoise`), heard twice.
    var denoised: Bool

    init(result: RecognitionResult, denoised: Bool) {
        text = result.text
        confidence = result.confidence
        rejected = result.rejected
        self.denoised = denoised
    }
}

/// Answers from `--answer` first, then from the terminal when there is one.
actor TerminalUser: ConversationUser {
    private var answers: [String]
    private let quiet: Bool

    init(answers: [String], quiet: Bool) {
        self.answers = answers
        self.quiet = quiet
    }

    func ask(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String? {
        if !answers.isEmpty {
            let answer = answers.removeFirst()
            if !quiet { print("\(question) \(answer)") }
            return answer
        }
        guard isatty(STDIN_FILENO) != 0 else {
            if !quiet { print("\(question) (no answer: pass --answer or run in a terminal)") }
            return nil
        }
        print("\(question) ", terminator: "")
        fflush(nil)
        return readLine()
    }

    func tell(_ text: String, app: PluginManifest?) async {
        if !quiet { print(text) }
    }
}

/// An intent as a person reads it: `setTimer  duration: ten minutes (600)`.
struct IntentDescription {
    var text: String

    init(_ match: IntentMatch) {
        let parameters = match.parameters.sorted { $0.key < $1.key }.map { name, value in
            let shown = value.displayText
            let raw = value.jsonText
            return raw == shown || raw == "\"\(shown)\"" ? "\(name): \(shown)" : "\(name): \(shown) (\(raw))"
        }
        text = ([match.intent] + parameters).joined(separator: "  ")
    }
}
