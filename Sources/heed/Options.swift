import ArgumentParser
import Synchronization
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedPlugins
import HeedRuntime
import HeedService
import HeedSpeech
import Logging
import HeedState
import HeedEvaluation

/// The recognizer's grammar, model and settings, shared by the commands that decode audio.
/// `--denoise`: the noise suppressor in front of the recognizer.
struct DenoiseOptions: ParsableArguments {
    @Option(
        name: .customLong("denoise"),
        help: ArgumentHelp(
            "Noise suppression before recognition: off, on, or auto (when the recording's estimated SNR is below 23 dB).",
            discussion: """
                Default: auto. heed recognize, heed eval and heed run --audio judge each recording; heed listen judges each utterance, \
                taken from one suppressor that follows the whole stream, and spots the wake phrase in what it leaves. \
                On the kitchen-noise curves auto was never worse than off by more than a point and up to 6.5 points \
                better for recordings, 4 points for the listener at 6 dB (docs/MEASUREMENTS.md). Where it \
                suppresses noise, a grammar of sentences hears the audio twice, as captured and suppressed \
                (twice the decoding time), and the result is held to --reject-below-in-noise.
                """,
            valueName: "off|on|auto"))
    var modeName: String?

    @Option(name: .customLong("denoise-attenuation"), help: ArgumentHelp("The most the suppressor lowers noise by, in dB.", valueName: "dB"))
    var attenuation = NoiseSuppressor.Settings.measuredAttenuation

    @Flag(name: .customLong("denoise-agc"), help: "Automatic gain control in the suppressor too.")
    var automaticGain = false

    /// The mode asked for; `auto` by default.
    var mode: DenoiseMode { modeName.flatMap(DenoiseMode.init(rawValue:)) ?? .auto }
    var settings: NoiseSuppressor.Settings { .init(maximumAttenuation: attenuation, automaticGain: automaticGain) }

    func validate() throws {
        if let modeName, DenoiseMode(rawValue: modeName) == nil { throw ValidationError("--denoise takes off, on or auto, not \(modeName)") }
        guard (1...60).contains(attenuation) else { throw ValidationError("--denoise-attenuation must be between 1 and 60 dB") }
    }
}

struct RecognizerOptions: ParsableArguments {
    @OptionGroup var denoise: DenoiseOptions
    @OptionGroup var adaptation: AdaptationOptions

    @Option(help: ArgumentHelp("The acoustic model folder.", valueName: "dir"))
    var model = PocketSphinxRecognizer.Configuration.default.modelDirectory

    @Option(help: ArgumentHelp("The pronunciation dictionary (CMU format) that grammar words are looked up in.", valueName: "file"))
    var dictionary = PocketSphinxRecognizer.Configuration.default.dictionaryPath

    @Option(
        name: .customLong("reject-below"),
        help: ArgumentHelp(
            "Reject results whose confidence is below this (0–1).",
            discussion: """
                Default: for heed eval and always-on heed listen, the confidence model's operating point \
                \(ConfidenceModel.features.operatingPoint) (\(ConfidenceModel.pathOnly.operatingPoint) with \
                --no-phone-loop), which keeps other talk out; for heed recognize (one recording someone chose to \
                give), the lenient point \(ConfidenceModel.features.lenientPoint). heed listen uses the lenient \
                point after the wake phrase, after a press and for answers (--window-reject-below).
                """,
            valueName: "confidence")
    )
    var rejectionThreshold: Double?

    @Option(
        name: .customLong("reject-below-in-noise"),
        help: ArgumentHelp(
            "The threshold for a result heard twice in noise, where --reject-below is stricter (0–1).",
            discussion: """
                Where the noise suppressor runs (--denoise), the audio is heard twice, as captured and as the \
                suppressor left it; when the two hear other words, the result keeps the lower confidence, \
                which takes most other talk down. Such a result is held to the lower of --reject-below and \
                this. Default: the confidence model's point in noise, \
                \(ConfidenceModel.features.inNoisePoint.map { "\($0)" } ?? "none"); grammars of single words have \
                none unless this gives one, and hear the suppressed audio once.
                """,
            valueName: "confidence")
    )
    var inNoiseThreshold: Double?

    @Option(
        help: ArgumentHelp(
            "How many n-best alternatives to report at most (0: none, which saves time).",
            discussion: "Default: 5 with --grammar; 0 with --intents, whose large grammars make PocketSphinx's n-best search slow.",
            valueName: "n"
        )
    )
    var alternatives: Int?

    @Option(
        name: .customLong("decoder-option"),
        help: ArgumentHelp(
            "A PocketSphinx flag for experiments, e.g. --decoder-option beam=1e-40 (repeatable).",
            discussion: """
                scoring=pocketsphinx is Heed's own: PocketSphinx scores the acoustic model instead of \
                Heed's evaluator (the same scores, about twice the CPU; docs/RECOGNITION.md); \
                scoring=heed-baseline runs Heed's evaluator without AVX2, as older CPUs do. \
                A grammar of single words weighs 16 densities a senone (topn=16) where others \
                weigh 4: topn=4 takes almost half its CPU off, and fewer of its words are accepted \
                (docs/RECOGNITION.md, "One word"). It also takes a silence to be likelier \
                (silprob=0.5, others 0.005): silprob=0.005 accepts fewer of its words, most in noise.
                """,
            valueName: "flag=value"
        )
    )
    var decoderOptions: [String] = []

    @Flag(
        name: .customLong("no-phone-loop"),
        help: "Measure confidence without the phone-loop pass: half the decoding time, weaker rejection."
    )
    var withoutPhoneLoop = false

    @Flag(
        name: .customLong("no-other-speech-loop"),
        help: ArgumentHelp(
            "Decode the intents' sentences without the loop of phones beside them that takes other talk.",
            discussion: """
                By default an utterance that a loop of phones explains better than any sentence is rejected \
                as other speech (docs/RECOGNITION.md). Without the loop more other talk is heard as commands.
                """
        )
    )
    var withoutOtherSpeechLoop = false

    @Flag(name: .shortAndLong, help: "Show PocketSphinx's own log on standard error.")
    var verbose = false

    func validate() throws {
        if let alternatives, alternatives < 0 { throw ValidationError("--alternatives must be 0 or more") }
        if let rejectionThreshold, !(0...1).contains(rejectionThreshold) {
            throw ValidationError("--reject-below must be between 0 and 1, not \(rejectionThreshold)")
        }
        if let inNoiseThreshold, !(0...1).contains(inNoiseThreshold) {
            throw ValidationError("--reject-below-in-noise must be between 0 and 1, not \(inNoiseThreshold)")
        }
        for option in decoderOptions where !option.contains("=" as Character) || option.hasPrefix("=") {
            throw ValidationError("--decoder-option takes flag=value (e.g. beam=1e-40), not \(option)")
        }
    }

    /// The confidence model in use.
    var confidenceModel: ConfidenceModel {
        withoutPhoneLoop ? ConfidenceModel.pathOnly : PocketSphinxRecognizer.Configuration.default.confidence
    }

    /// The rejection threshold in force: `--reject-below`, else the model's operating point (for
    /// always-on listening and eval) or its lenient point (for one recording someone chose to give).
    func threshold(lenient: Bool = false) -> Double {
        rejectionThreshold ?? (lenient ? confidenceModel.lenientPoint : confidenceModel.operatingPoint)
    }

    /// Loads the recognizer with the grammar of `setup` when given, else of `grammar`
    /// (`--grammar`). Its errors end the command with status 1.
    /// - Parameters:
    ///   - phoneLoopHelpers: where the phone loop is decoded beside the grammar pass (`nil`:
    ///     after it, on the recognizer's own decoder).
    ///   - secondHearingFloor: the lowest threshold its results will be judged at
    ///     (``PocketSphinxRecognizer/Configuration/secondHearingFloor``).
    func makeRecognizer(
        grammar: GrammarOption? = nil, setup: RecognitionSetup? = nil, lenient: Bool = false, phoneLoopHelpers: PhoneLoopHelpers? = .shared,
        secondHearingFloor: Double = 0
    ) throws -> PocketSphinxRecognizer {
        try recognizerFactory(
            grammar: grammar, setup: setup, lenient: lenient, phoneLoopHelpers: phoneLoopHelpers, secondHearingFloor: secondHearingFloor)()
    }

    /// Returns a function that loads a recognizer of `setup`'s grammar, or else of `--grammar`,
    /// for commands that decode with several recognizers at once (`heed eval --jobs`).
    func recognizerFactory(
        grammar: GrammarOption? = nil, setup: RecognitionSetup? = nil, lenient: Bool = false, phoneLoopHelpers: PhoneLoopHelpers? = .shared,
        secondHearingFloor: Double = 0
    ) throws -> @Sendable () throws -> PocketSphinxRecognizer {
        bootstrapLogging(verbose: verbose)
        if setup != nil, grammar?.grammar != nil {
            throw ValidationError("give either --grammar or --intents: with --intents the grammar is compiled from the intents")
        }
        var configuration = decoderConfiguration(forIntents: setup != nil, lenient: lenient)
        configuration.phoneLoopHelpers = phoneLoopHelpers
        configuration.secondHearingFloor = secondHearingFloor
        let settings = configuration
        let logger = Logger(label: "heed")
        if let setup { return { try setup.makeRecognizer(configuration: settings, logger: logger) } }
        let file = try Grammar.file(try (grammar ?? GrammarOption()).resolvedPath())
        return { try PocketSphinxRecognizer(grammar: file, configuration: settings, logger: logger) }
    }

    /// The grammar and parser of `catalog` with the registered `vocabulary`, checked against
    /// `--dictionary`.
    func setup(_ catalog: IntentCatalog, vocabulary: VocabularySnapshot) throws -> RecognitionSetup {
        try RecognitionSetup(catalog: catalog, vocabulary: vocabulary, dictionaryPath: dictionary)
    }

    /// Loads a dictation recognizer: the language model, with the registered vocabulary's and
    /// `contextualStrings`' words added (their pronunciations from the vocabulary when it has them).
    func makeDictationRecognizer(vocabulary: VocabularySnapshot, contextualStrings: [String]) throws -> PocketSphinxRecognizer {
        bootstrapLogging(verbose: verbose)
        return try PocketSphinxRecognizer(
            grammar: .dictation(vocabulary: vocabulary, contextualStrings: contextualStrings),
            configuration: dictationConfiguration(vocabulary: vocabulary), logger: Logger(label: "heed"))
    }

    /// The decoder configuration of dictation: these options, and the registered vocabulary's pronunciations.
    ///
    /// Confidence is measured without the phone loop (the path-only model of `--no-phone-loop`):
    /// dictation rejects nothing but silence, so the loop's sharper rejection buys nothing, and
    /// it was most of the time a hand-off's text took once the speaker stopped (about 250 of 360
    /// ms, docs/MEASUREMENTS.md#dictation).
    func dictationConfiguration(vocabulary: VocabularySnapshot) -> PocketSphinxRecognizer.Configuration {
        var configuration = decoderConfiguration(forIntents: false, lenient: true)
        configuration.additionalPronunciations = vocabulary.additionalPronunciations
        configuration.phoneLoopReference = false
        configuration.confidence = .pathOnly
        return configuration
    }

    /// The decoder configuration these options ask for: for an intents grammar (no n-best by
    /// default; ``RecognitionSetup/configuration(_:)`` adds the vocabulary's pronunciations) or
    /// for a grammar file.
    func decoderConfiguration(forIntents: Bool, lenient: Bool = false) -> PocketSphinxRecognizer.Configuration {
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.modelDirectory = model
        configuration.dictionaryPath = dictionary
        configuration.applyAdaptation(adaptation)
        configuration.maximumAlternatives = alternatives ?? (forIntents ? 0 : configuration.maximumAlternatives)
        if withoutPhoneLoop {
            configuration.phoneLoopReference = false
            configuration.confidence = .pathOnly
        }
        if withoutOtherSpeechLoop { configuration.otherSpeechLoop = nil }
        configuration.rejectionThreshold = threshold(lenient: lenient)
        configuration.inNoiseThreshold = inNoiseThreshold
        for option in decoderOptions {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            let flag = parts[0].hasPrefix("-") ? parts[0] : "-" + parts[0]
            configuration.decoderOptions[flag] = parts[1]
        }
        return configuration
    }
}

/// `--grammar`: a JSGF grammar file, for the commands that recognize without intents.
struct GrammarOption: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The JSGF grammar to recognize with (all public rules are accepted).",
            discussion: "Default: grammars/commands.gram in the current folder.",
            valueName: "file.gram"
        )
    )
    var grammar: String?

    /// The grammar file: `--grammar`, else grammars/commands.gram in the current folder.
    func resolvedPath() throws -> String {
        if let grammar { return grammar }
        let fallback = "grammars/commands.gram"
        guard FileManager.default.fileExists(atPath: fallback) else {
            throw ValidationError("no --grammar given and no \(fallback) in the current folder")
        }
        return fallback
    }
}

/// How input audio files are read.
struct AudioOptions: ParsableArguments {
    @Flag(help: "Read headerless signed 16-bit little-endian samples (S16LE) instead of WAV.")
    var raw = false

    @Option(help: ArgumentHelp("The sample rate of --raw audio, in Hz (it is resampled to 16000).", valueName: "hz"))
    var rate: Int?

    @Option(help: ArgumentHelp("The channel count of --raw audio (channels are averaged).", valueName: "n"))
    var channels = 1

    func validate() throws {
        if let rate, rate < 4000 || rate > 384_000 {
            throw ValidationError("--rate must be between 4000 and 384000 Hz, not \(rate)")
        }
        if rate != nil, !raw { throw ValidationError("--rate applies to --raw audio; a WAV file states its own rate") }
        guard channels > 0 else { throw ValidationError("--channels must be at least 1") }
    }

    var format: AudioFileFormat {
        raw ? .raw(sampleRate: rate ?? AudioBuffer.recognitionSampleRate, channels: channels) : .wav
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Asks a yes/no question on the terminal (the question on standard error, the answer from
/// standard input).
/// - Returns: The answer, or `nil` when standard input is no terminal or the answer is empty.
func askOnTerminal(_ question: String) -> Bool? {
    guard isatty(STDIN_FILENO) != 0 else { return nil }
    while true {
        FileHandle.standardError.write(Data("\(question) [y/n] ".utf8))
        guard let line = readLine()?.trimmed.lowercased(), !line.isEmpty else { return nil }
        if ["y", "yes"].contains(line) { return true }
        if ["n", "no"].contains(line) { return false }
    }
}

/// Whether standard error is a terminal (progress lines go there only then).
var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

/// Encodes a value as one line of JSON with stable key order.
func jsonLine(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Where the intent definitions and the rule files their templates use are.
struct IntentOptions: ParsableArguments {
    @Option(
        name: .customLong("intents"),
        help: ArgumentHelp(
            "Intent definitions: a folder of *.json files or one file (repeatable).",
            discussion: "A folder stands for the .json files directly in it; intents/examples/coffee.json must be named.",
            valueName: "path"
        )
    )
    var intents: [String] = []

    @Option(
        name: .customLong("rules"),
        help: ArgumentHelp("JSGF rule files that templates refer to: a folder or a file (repeatable; default: grammars).", valueName: "path")
    )
    var rules: [String] = []

    var isEmpty: Bool { intents.isEmpty }

    /// A default path such as `intents` or `grammars`: the one that comes with this build of heed
    /// (so that heed works from any folder), else the same name in the current folder.
    static func bundled(_ path: String) -> String {
        PluginCatalog.bundledFolder(path)?.path ?? path
    }

    /// Loads the catalog; `defaultIntents` is used when no `--intents` was given.
    func loadCatalog(defaultIntents: [String] = []) throws -> IntentCatalog {
        let intentPaths = intents.isEmpty ? defaultIntents.map(Self.bundled) : intents
        let rulePaths = rules.isEmpty ? [Self.bundled("grammars")] : rules
        for path in intentPaths + rulePaths where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no such file or folder: \(path)")
        }
        return try IntentCatalog.load(
            intents: intentPaths.map { URL(fileURLWithPath: $0) },
            grammars: rulePaths.map { URL(fileURLWithPath: $0) }
        )
    }
}

/// Whether a one-off recognition includes the contextual intents.
struct ContextOptions: ParsableArguments {
    @Flag(
        name: .customLong("without-contextual"),
        help: ArgumentHelp(
            "Leave out the contextual intents (\"louder\", \"skip\"), as the listener does while nothing they are for is going on.",
            discussion: "By default every intent is in the grammar.")
    )
    var withoutContextual = false

    /// The catalog as this option asks.
    func apply(to catalog: IntentCatalog) -> IntentCatalog { withoutContextual ? catalog.inContext([]) : catalog }
}

/// Where plugins and Heed's state are.
struct PluginFolderOptions: ParsableArguments {
    @Option(
        name: .customLong("plugins"),
        help: ArgumentHelp(
            "A folder of plugins (each a folder with plugin.json) (repeatable).",
            discussion: "Default: the plugins that come with this build of heed (share/heed/plugins beside its bin folder, "
                + "or plugins/ of the source tree it was built in) and $XDG_DATA_HOME/heed/plugins. The current folder "
                + "is searched only when named: --plugins plugins.",
            valueName: "dir"
        )
    )
    var folders: [String] = []

    /// The plugin folders to search.
    var searchFolders: [URL] {
        if !folders.isEmpty { return folders.map { URL(fileURLWithPath: $0) } }
        return Self.defaultSearchFolders
    }

    /// The plugins bundled with this build, then `$XDG_DATA_HOME/heed/plugins`; never the current folder.
    static var defaultSearchFolders: [URL] {
        [PluginCatalog.bundledPluginsFolder, HeedDirectories.standard().data.appendingPathComponent("plugins")].compactMap { $0 }
    }

    /// The installed plugins; a broken, refused or duplicated manifest is reported and left out.
    func installedPlugins() throws -> PluginCatalog.Discovery {
        let discovery = PluginCatalog.discover(in: searchFolders)
        for error in discovery.errors { printError("heed: warning: \(error)") }
        return discovery
    }
}

/// Where Heed's state and config are: for the commands that decide who may, or read who may.
struct StateOptions: ParsableArguments {
    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where authorization decisions are kept (default: $XDG_STATE_HOME/heed).", valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("config"), help: ArgumentHelp("The configuration file (default: $XDG_CONFIG_HOME/heed/config.json).", valueName: "file"))
    var configFile: String?

    /// The configuration file's settings.
    func configuration() throws -> HeedConfiguration {
        try HeedConfiguration.load(file: configFile.map { URL(fileURLWithPath: $0) })
    }

    /// The configuration with `--state-dir` applied: its ``HeedConfiguration/authorizationStore`` is the one to use.
    func configurationWithState() throws -> HeedConfiguration {
        try HeedConfiguration.load(
            file: configFile.map { URL(fileURLWithPath: $0) },
            directories: HeedDirectories.standard(),
            stateDirectory: stateDirectory.map { URL(fileURLWithPath: $0) })
    }

    /// The authorization store, in `--state-dir` or the configuration's state folder
    /// (`configuration`: the settings already read, so that the file is read once a command).
    func authorizationStore(configuration: HeedConfiguration? = nil) throws -> AuthorizationStore {
        let configuration = try configuration ?? self.configuration()
        let state = stateDirectory.map { URL(fileURLWithPath: $0) } ?? configuration.stateDirectory
        return AuthorizationStore(stateDirectory: state, policyFile: configuration.policyFile)
    }
}

/// Where plugins and Heed's state are: for the commands that dispatch or decide who may.
struct PluginOptions: ParsableArguments {
    @OptionGroup var plugins: PluginFolderOptions
    @OptionGroup var state: StateOptions

    /// `--state-dir`.
    var stateDirectory: String? { state.stateDirectory }
    /// `--config`.
    var configFile: String? { state.configFile }

    /// The plugin folders to search.
    var searchFolders: [URL] { plugins.searchFolders }

    /// The installed plugins; a broken, refused or duplicated manifest is reported and left out.
    func installedPlugins() throws -> PluginCatalog.Discovery { try plugins.installedPlugins() }

    /// The configuration file's settings.
    func configuration() throws -> HeedConfiguration { try state.configuration() }

    func authorizationStore(configuration: HeedConfiguration? = nil) throws -> AuthorizationStore {
        try state.authorizationStore(configuration: configuration)
    }
}

/// Sends logs to standard error: warnings and above, or everything with `--verbose`. swift-log
/// takes one bootstrap a process: the first call decides, later ones do nothing.
func bootstrapLogging(verbose: Bool) {
    guard loggingBootstrapped.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = verbose ? .debug : .warning
        return handler
    }
}

private let loggingBootstrapped = Atomic<Bool>(false)

/// Where registered vocabulary (`heed vocab`) is read from.
struct VocabularyOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp("Where registered vocabulary is kept (default: $XDG_DATA_HOME/heed).", valueName: "dir")
    )
    var dataDirectory: String?

    /// The data folder: `directory` when given, else the configuration's (`configuration`: the
    /// settings the command read, with its `--config`; else the default file's).
    static func dataDirectory(_ directory: String?, configuration: HeedConfiguration? = nil) throws -> URL {
        if let directory { return URL(fileURLWithPath: directory) }
        return try (configuration ?? HeedConfiguration.load()).dataDirectory
    }

    /// The registered vocabulary of the apps installed in `pluginFolders`, for the recognizer and parser.
    func snapshot(
        pluginFolders: [URL] = PluginFolderOptions.defaultSearchFolders,
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath,
        configuration: HeedConfiguration? = nil
    ) throws -> VocabularySnapshot {
        try store(pluginFolders: pluginFolders, dictionaryPath: dictionaryPath, configuration: configuration).snapshot()
    }

    /// The vocabulary store of the apps installed in `pluginFolders`.
    func store(
        pluginFolders: [URL] = PluginFolderOptions.defaultSearchFolders,
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath,
        configuration: HeedConfiguration? = nil
    ) throws -> VocabularyStore {
        let manifests = PluginCatalog.discover(in: pluginFolders).manifests
        return VocabularyStore(
            dataDirectory: try Self.dataDirectory(dataDirectory, configuration: configuration), manifests: manifests, dictionaryPath: dictionaryPath)
    }
}

/// Where client manifests (`client.json`) of `heed serve`'s clients are.
struct ClientFolderOptions: ParsableArguments {
    @Option(
        name: .customLong("clients"),
        help: ArgumentHelp(
            "A folder of client manifests (each a folder with client.json) (repeatable).",
            discussion: "Default: the clients that come with this build of heed (clients/ of the source tree or share/heed/clients) "
                + "and $XDG_DATA_HOME/heed/clients.",
            valueName: "dir"))
    var folders: [String] = []

    /// The folders to search.
    var searchFolders: [URL] {
        folders.isEmpty
            ? ClientCatalog.defaultFolders(dataDirectory: HeedDirectories.standard().data) : folders.map { URL(fileURLWithPath: $0) }
    }

    /// The client manifests; a broken one is reported and left out.
    func catalog() -> ClientCatalog {
        let catalog = ClientCatalog.discover(in: searchFolders)
        for error in catalog.errors { printError("heed: warning: \(error)") }
        return catalog
    }
}

/// `--noise FILE --snr DB`: background noise mixed into every recording, the same way for
/// `heed eval` and `heed adapt` (Picovoice's benchmark mixing, seeded by each recording's path).
struct NoiseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A noise recording (WAV) to mix into every recording.", valueName: "file.wav"))
    var noise: String?

    @Option(help: ArgumentHelp("The signal-to-noise ratio for --noise, in dB.", valueName: "db"))
    var snr: Double?

    func validate() throws {
        if (noise == nil) != (snr == nil) { throw ValidationError("--noise and --snr go together") }
    }

    /// The noise to mix in, if any.
    func condition() throws -> Evaluation.NoiseCondition? {
        try noise.map { path in
            Evaluation.NoiseCondition(mixer: try NoiseMixer(noise: try AudioFile.read(path)), snr: snr ?? 0, name: path)
        }
    }
}
