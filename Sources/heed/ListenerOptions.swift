import ArgumentParser
import HeedAudio
import HeedCore
import HeedIntents
import HeedPlugins
import HeedRuntime
import HeedSpeech
import HeedState
import Logging

/// How the hands-free listener behaves: `heed listen`, and `heed serve --listen`.
struct ListenerOptions: ParsableArguments {
    @Option(name: .customLong("playback-device"), help: ArgumentHelp("The ALSA device spoken responses are played on.", valueName: "name"))
    var playbackDevice = "default"

    @Option(help: ArgumentHelp("How a command starts: always, wake, push.", valueName: "mode"))
    var activation = "always"

    @Option(
        name: .customLong("wake-phrase"),
        help: ArgumentHelp(
            "The wake phrase for --activation wake (default: the config's wakePhrase, else \"hey heed\").",
            discussion: "Heed judges the phrase before it listens and warns when it is short, a command, or made of command words.",
            valueName: "words"))
    var wakePhrase: String?

    @Option(
        name: .customLong("window-reject-below"),
        help: ArgumentHelp(
            "After the wake phrase, after a press and for answers: reject results whose confidence is below this (0–1).",
            discussion: "Default: the confidence model's lenient point (0.2): the window already bounds false accepts. "
                + "--reject-below sets the always-on threshold.",
            valueName: "confidence"))
    var windowRejectionThreshold: Double?

    @Option(
        name: .customLong("wake-threshold"),
        help: ArgumentHelp(
            "The confidence (0–1) the wake phrase must reach: lower hears it more readily, and false wakes too.",
            valueName: "confidence")
    )
    var wakeThreshold = WakePhraseSpotter.defaultThreshold

    @Option(name: .customLong("end-silence"), help: ArgumentHelp("Seconds of quiet that end an utterance.", valueName: "seconds"))
    var endSilence = Endpointer.Configuration.standard.endSilence

    @Option(
        name: .customLong("max-utterance"),
        help: ArgumentHelp("Longer utterances are cut there and ignored as not a command.", valueName: "seconds"))
    var maximumUtterance = Endpointer.Configuration.standard.maximumUtterance

    @Option(
        name: .customLong("command-window"),
        help: ArgumentHelp("Seconds after the wake phrase or a push in which the command may start.", valueName: "seconds"))
    var commandWindow = 5.0

    @Option(
        name: .customLong("answer-timeout"),
        help: ArgumentHelp("Seconds a question waits for an answer to start.", valueName: "seconds"))
    var answerTimeout = 8.0

    @Option(
        name: .customLong("hesitation"),
        help: ArgumentHelp(
            "Seconds of quiet that end an utterance whose words so far only begin a command (\"set a timer for …\").",
            discussion: "People stop mid-command to think: such a pause does not end the command unless it lasts this long. "
                + "When what ran on through the pause is no command, the speech after the pause is heard on its own: a command "
                + "said just after someone else's talk (its final says \"afterPause\": true). --end-silence or less turns the wait off.",
            valueName: "seconds"))
    var hesitation = Listener.Configuration().unfinishedEndSilence

    @Option(
        name: .customLong("repeat-window"),
        help: ArgumentHelp(
            "Always-on: a command said again within this many seconds of an unsure one is held to --window-reject-below (0: never).",
            discussion: "An unsure command is one below the always-on threshold but not below the window's. Said again at once, "
                + "the same intent with the same values, it is acted on: people repeat what was ignored, other talk seldom "
                + "says one command twice running (docs/LISTEN.md).",
            valueName: "seconds"))
    var repeatWindow = Listener.Configuration().repeatWindow

    @Option(
        name: .customLong("ask-above"),
        help: ArgumentHelp(
            "Always-on: ask back (\"Did you say …?\") about an unsure command at least this confident (0–1; above 1: never).",
            discussion: "An unsure command is one below the always-on threshold but not below the window's. Answered yes "
                + "(or yeah, yep, sure, okay), it is acted on; an answer that is no yes or no is heard as a command "
                + "(docs/LISTEN.md).",
            valueName: "confidence"))
    var askAbove = Listener.Configuration().askBackThreshold

    @Option(
        name: .customLong("ask-above-in-noise"),
        help: ArgumentHelp(
            "--ask-above for a command heard twice in noise (0–1; above 1: never).",
            discussion: "Where the noise suppressor runs, a command is heard twice and held to --reject-below-in-noise "
                + "(0.7): its unsure band starts lower.",
            valueName: "confidence"))
    var askAboveInNoise = Listener.Configuration().askBackInNoiseThreshold

    @Flag(
        name: .customLong("keep-heard"),
        help: ArgumentHelp(
            "Keep the commands acted on (the audio and the words heard), for heed adapt --heard.",
            discussion: "Off by default (the config's keepHeard turns it on). The last \(HeardRecordings.defaultLimit) are kept, "
                + "for you alone, in $XDG_DATA_HOME/heed/adaptation/heard; heed adapt --forget-heard removes them."))
    var keepHeard = false

    func validate() throws {
        guard ["always", "wake", "push"].contains(activation) else {
            throw ValidationError("--activation must be always, wake or push, not \(activation)")
        }
        guard endSilence > 0.1 && endSilence <= 5 else { throw ValidationError("--end-silence must be between 0.1 and 5 seconds") }
        guard maximumUtterance >= 1 && maximumUtterance <= 60 else { throw ValidationError("--max-utterance must be between 1 and 60 seconds") }
        guard commandWindow > 0, answerTimeout > 0 else { throw ValidationError("--command-window and --answer-timeout must be positive") }
        guard hesitation > 0 && hesitation <= 5 else { throw ValidationError("--hesitation must be between 0 and 5 seconds, not \(hesitation)") }
        guard repeatWindow >= 0 && repeatWindow <= 60 else { throw ValidationError("--repeat-window must be between 0 and 60 seconds, not \(repeatWindow)") }
        guard askAbove >= 0 else { throw ValidationError("--ask-above must be 0 or more, not \(askAbove)") }
        guard askAboveInNoise >= 0 else { throw ValidationError("--ask-above-in-noise must be 0 or more, not \(askAboveInNoise)") }
        guard (0...1).contains(wakeThreshold) else { throw ValidationError("--wake-threshold must be between 0 and 1") }
        if let windowRejectionThreshold, !(0...1).contains(windowRejectionThreshold) {
            throw ValidationError("--window-reject-below must be between 0 and 1, not \(windowRejectionThreshold)")
        }
        if let wakePhrase, TextNormalizer.words(wakePhrase).isEmpty { throw ValidationError("--wake-phrase must have words") }
    }

    /// The wake phrase: `--wake-phrase`, else the config's, else "hey heed".
    func phrase(_ configuration: HeedConfiguration) -> String {
        (wakePhrase ?? configuration.wakePhrase ?? "hey heed").lowercased()
    }

    /// Judges the wake phrase against the command grammar (`heed listen --check-wake-phrase`,
    /// and a warning before wake listening).
    func judgeWakePhrase(
        _ phrase: String, catalog: IntentCatalog, vocabulary: VocabularySnapshot, recognizer: RecognizerOptions
    ) throws -> WakePhraseJudgement {
        try WakePhraseJudgement.judge(
            phrase, commands: catalog.inContext([]).automaton(vocabulary: vocabulary.terms),
            pronouncer: Pronouncer(dictionaryPath: recognizer.dictionary))
    }

    /// A listener on `source`, with the command grammar of the catalog without its contextual
    /// intents (they join while something they are for is going on); warns of a weak wake phrase.
    ///
    /// - Parameters:
    ///   - dispatcher: carries intents to plugins; `nil` only reports them.
    ///   - maximumSeconds: stop after this much audio (`nil`: until stopped).
    func makeListener(
        source: sending any AudioSource, catalog: IntentCatalog, vocabulary store: VocabularyStore, configuration: HeedConfiguration,
        recognizer: RecognizerOptions, dispatcher: Dispatcher?, authorization: AuthorizationStore, maximumSeconds: Double? = nil,
        logger: Logger, emit: @escaping @Sendable (ListenerOutput) -> Void
    ) throws -> Listener {
        let registered = try store.snapshot()
        var settings = Listener.Configuration()
        switch activation {
        case "wake":
            let phrase = phrase(configuration)
            let judgement = try judgeWakePhrase(phrase, catalog: catalog, vocabulary: registered, recognizer: recognizer)
            for warning in judgement.warnings { printError("heed: warning: the wake phrase \"\(phrase)\": \(warning)") }
            settings.activation = .wakePhrase(phrase, threshold: wakeThreshold)
        case "push": settings.activation = .pushToTalk
        default: settings.activation = .always
        }
        settings.endpointing.endSilence = endSilence
        // The likely end must come before the end for the utterance to be decoded during the pause.
        settings.endpointing.tentativeSilence = min(Endpointer.Configuration.standard.tentativeSilence, endSilence / 2)
        settings.endpointing.maximumUtterance = maximumUtterance
        settings.commandWindow = commandWindow
        settings.answerTimeout = answerTimeout
        settings.repeatWindow = repeatWindow
        settings.askBackThreshold = askAbove
        settings.askBackInNoiseThreshold = askAboveInNoise
        settings.unfinishedEndSilence = hesitation
        settings.maximumSeconds = maximumSeconds
        settings.spokenResponses = configuration.spokenResponses
        settings.denoise = recognizer.denoise.mode
        settings.denoiseSettings = recognizer.denoise.settings
        settings.alwaysOnThreshold = recognizer.threshold()
        settings.windowThreshold = windowRejectionThreshold ?? recognizer.confidenceModel.lenientPoint
        if keepHeard || configuration.keepHeard { settings.keptCommands = .standard }

        // Contextual intents ("louder", "skip") join the grammar while something they are for is going on.
        let setup = try recognizer.setup(catalog.inContext([]), vocabulary: registered)
        // The listener decodes an utterance while its closing pause is still being waited out:
        // a second decoder for the phone loop would save no wait, only cost its memory.
        // What no threshold of the listener's takes is heard once in noise, not twice.
        let inNoise = recognizer.inNoiseThreshold ?? recognizer.confidenceModel.inNoisePoint ?? 1
        let lowest = [settings.windowThreshold, settings.alwaysOnThreshold, inNoise, settings.askBackThreshold, settings.askBackInNoiseThreshold].min() ?? 0
        let decoder = try recognizer.makeRecognizer(setup: setup, phoneLoopHelpers: nil, secondHearingFloor: lowest)
        // Start-up peaked here: the model and grammar loaded beside the code that loaded them.
        Allocator.returnFreedMemory()
        Allocator.releaseFilePages()
        let speaker: (any AudioSink)? = configuration.spokenResponses && dispatcher != nil ? try ALSAPlayback(device: playbackDevice) : nil
        return Listener(
            source: source, recognizer: decoder, speaker: speaker, catalog: catalog, setup: setup,
            vocabularyStore: store, dispatcher: dispatcher, authorization: authorization, configuration: settings,
            logger: logger, emit: emit)
    }
}
