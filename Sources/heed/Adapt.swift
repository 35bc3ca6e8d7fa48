import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import Logging
import HeedState
import HeedEvaluation

struct Adapt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Adapt the acoustic model to your voice, microphone and room.",
        discussion: """
            MANIFEST is a TSV file with a header row and the columns wav and transcript (the \
            format of heed eval and the shared corpora; paths relative to the manifest): \
            recordings of you saying commands, and the words of each, made with the microphone \
            and in the room you use Heed in, with its usual noise (the kitchen's, the TV's): \
            adapted there, Heed learns the noise with your voice. About 50 short commands \
            (a few minutes of audio) are a good start; at least \(SpeakerAdaptation.minimumRecordings) \
            recordings and \(Int(SpeakerAdaptation.minimumSeconds)) seconds are needed. Every word \
            must be in the pronunciation dictionary.

            Heed computes the recordings' features with its own front end and runs Debian's \
            sphinxtrain (bw, then map_adapt or mllr_solve) as child processes; the adapted model \
            is kept in $XDG_DATA_HOME/heed/adaptation and used from then on by heed recognize, \
            eval, run --audio and listen (--no-adaptation to hear without it). A failed \
            adaptation leaves the one in use before in place.

            With --record, Heed chooses sentences of the shipped intents' tests that cover the \
            sounds of the commands (--prompts, default 20), shows each (and says it with \
            --speak), records you reading it from the microphone (--device, or --input FILE in \
            place of one), and asks again, up to three times, when what it heard was not the \
            sentence. The recordings and their manifest are kept in \
            $XDG_DATA_HOME/heed/adaptation/recordings, then adapted on.

            With --heard, Heed adapts on the commands heed listen kept (--keep-heard, or \
            "keepHeard": true in the config): the audio of each command it acted on and the words \
            it heard, right or not. Adapting on them now and then teaches Heed your voice and room \
            without reading prompts; at least \(HeardRecordings.minimumToAdapt) are needed, and \
            recordings with a word the dictionary lacks (a registered name) are left out. \
            --forget-heard removes them.

            Heed adapts on each recording as given and on two copies of it with noise mixed in \
            (at 12 and 6 dB SNR): pink noise it makes, or with --room-noise a recording of your \
            room's usual noise (a fan, the TV, a kitchen). The model then knows your voice in \
            noise as well as in quiet; --without-noisy-copies adapts on the recordings alone. \
            (With --method mllr, copies are made only with --room-noise.)

            Methods: map (default) moves the mean of each Gaussian the recordings show towards \
            your voice (with the noisy copies, and not with --heard, twice: the recordings are \
            aligned again with the first estimate); mllr fits one linear transform of all of them \
            (less audio, less gain). Measured \
            gains are in docs/MEASUREMENTS.md ("Adaptation").

            Examples:
              heed adapt my-commands.tsv
              heed adapt my-commands.tsv --room-noise kitchen-noise.wav
              heed adapt my-commands.tsv --method mllr --json
              heed adapt --record --speak
              heed adapt --heard
              heed adapt --status
              heed adapt --reset
            """
    )

    @Argument(help: ArgumentHelp("Recordings and their words (TSV with wav and transcript columns).", valueName: "manifest.tsv"))
    var manifest: String?

    @Option(help: ArgumentHelp("map or mllr.", valueName: "method"))
    var method: Method = .map

    /// ``AdaptationMethod`` as an argument.
    enum Method: String, ExpressibleByArgument, CaseIterable {
        case map, mllr
        var method: AdaptationMethod { self == .map ? .map : .mllr }
    }

    @Option(help: ArgumentHelp("The acoustic model folder to adapt.", valueName: "dir"))
    var model = PocketSphinxRecognizer.Configuration.default.modelDirectory

    @Option(help: ArgumentHelp("The pronunciation dictionary (CMU format) the words are looked up in.", valueName: "file"))
    var dictionary = PocketSphinxRecognizer.Configuration.default.dictionaryPath

    @OptionGroup var intents: IntentOptions

    @Flag(help: "Record yourself reading prompts from the microphone, then adapt on the recordings.")
    var record = false

    @Option(help: ArgumentHelp("With --record: how many sentences to read.", valueName: "n"))
    var prompts = 20

    @Option(help: ArgumentHelp("With --record: the ALSA capture device.", valueName: "name"))
    var device = "default"

    @Option(help: ArgumentHelp("With --record: read the audio from this recording instead of a microphone.", valueName: "file.wav"))
    var input: String?

    @Flag(name: .customLong("show-prompts"), help: "With --record: print the sentences that would be asked, one a line, and stop.")
    var showPrompts = false

    @Flag(help: "With --record: say each sentence too (espeak-ng, on --playback-device).")
    var speak = false

    @Option(name: .customLong("playback-device"), help: ArgumentHelp("The ALSA device --speak plays on.", valueName: "name"))
    var playbackDevice = "default"

    /// Noise mixed into the recordings first, as heed eval does: for measuring adaptation in noise.
    @OptionGroup var noise: NoiseOptions

    @Option(
        name: .customLong("room-noise"),
        help: ArgumentHelp(
            "A recording of the room's usual noise (WAV, a minute is plenty) to make the noisy copies with, instead of pink noise.",
            valueName: "file.wav"))
    var roomNoise: String?

    @Flag(name: .customLong("without-noisy-copies"), help: "Adapt on the recordings alone, without copies with noise mixed in.")
    var withoutNoisyCopies = false

    @Flag(help: "Adapt on the commands heed listen --keep-heard kept, with the words it heard.")
    var heard = false

    @Flag(name: .customLong("forget-heard"), help: "Remove the commands heed listen --keep-heard kept.")
    var forgetHeard = false

    @Flag(help: "Say which adaptation is in use, and what it was made from.")
    var status = false

    @Flag(help: "Remove the adaptation: hear with the model as shipped.")
    var reset = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        let modes = [manifest != nil, record, heard, status, reset, forgetHeard].filter { $0 }.count
        if modes != 1 { throw ValidationError("give a manifest, --record, --heard, --status, --reset or --forget-heard (one of them)") }
        if !record && (input != nil || speak || showPrompts) { throw ValidationError("--input, --speak and --show-prompts go with --record") }
        if !(1...200).contains(prompts) { throw ValidationError("--prompts must be between 1 and 200, not \(prompts)") }
        if roomNoise != nil && withoutNoisyCopies { throw ValidationError("--room-noise makes the noisy copies; --without-noisy-copies makes none") }
        if (roomNoise != nil || withoutNoisyCopies) && (status || reset || forgetHeard) {
            throw ValidationError("--room-noise and --without-noisy-copies go with an adaptation")
        }
    }

    func run() throws {
        bootstrapLogging(verbose: false)
        let store = AdaptationStore.standard
        if reset {
            let had = store.reset()
            try report(["removed": had], text: had ? "Adaptation removed: Heed hears with the model as shipped." : "There was no adaptation.")
            return
        }
        if forgetHeard {
            let count = HeardRecordings.standard.forget()
            try report(["removed": count], text: count == 0 ? "No commands were kept." : "Removed the \(count) commands heed listen kept.")
            return
        }
        if status {
            let kept = HeardRecordings.standard.rows().count
            let keptLine = kept == 0 ? "" : "\n\(kept) commands kept by heed listen --keep-heard (heed adapt --heard adapts on them)."
            guard let (model, record) = try store.current() else {
                try report(["adapted": false], text: "No adaptation: Heed hears with the model as shipped." + keptLine)
                return
            }
            try report(record, text: Self.describe(record) + "\n  \(model.path)" + keptLine)
            return
        }
        if showPrompts {
            print(try chosenPrompts().joined(separator: "\n"))
            return
        }
        let manifestPath =
            record ? try recordPrompts(into: store.folder.appendingPathComponent("recordings"))
            : heard ? try Self.heardManifest() : manifest!
        var recordings = try Self.recordings(in: manifestPath, noise: try noise.condition())
        if heard {
            recordings = try sayable(recordings)
            guard recordings.count >= HeardRecordings.minimumToAdapt else {
                throw AdaptCommandError(
                    description: "only \(recordings.count) commands kept to adapt on; heed adapt --heard needs \(HeardRecordings.minimumToAdapt) "
                        + "(fewer, with some of them heard wrong, can make Heed hear worse): keep listening with --keep-heard")
            }
        }
        // MLLR's one transform is pulled towards the copies' noise and hears quiet speech worse:
        // it gets copies only with the room's own noise.
        let copyNoise: (mixer: NoiseMixer, name: String)? =
            try roomNoise.map { path in (try Self.roomNoiseMixer(path), URL(fileURLWithPath: path).standardizedFileURL.path) }
            ?? (withoutNoisyCopies || method.method == .mllr ? nil : (try NoiseMixer(noise: NoiseMixer.pinkNoise(seconds: 60, seed: 2026)), "pink noise"))
        let adaptation = SpeakerAdaptation(
            baseModel: model, dictionaryPath: dictionary, method: method.method, logger: Logger(label: "heed"))
        let adapted = try adaptation.run(
            recordings, noisyCopies: copyNoise.map { Self.noisyCopies(of: recordings, mixer: $0.mixer) } ?? [], noise: copyNoise?.name,
            realign: copyNoise != nil && !heard, source: URL(fileURLWithPath: manifestPath).standardizedFileURL.path, store: store
        ) { step in
            if !json { printError("adapting: \(step)…") }
        }
        try report(adapted, text: "Adapted. " + Self.describe(adapted))
    }

    /// The manifest of the commands heed listen kept, or an error that says how to keep some.
    static func heardManifest() throws -> String {
        let kept = HeardRecordings.standard
        guard !kept.rows().isEmpty else {
            throw AdaptCommandError(
                description: "no commands kept to adapt on (\(kept.folder.path)): run heed listen --keep-heard, "
                    + "or set \"keepHeard\": true in the config, and speak to it for a while")
        }
        return kept.manifest.path
    }

    /// The kept commands whose every word the dictionary has: a registered name heard in a
    /// command has no dictionary pronunciation to adapt it with. Says how many were left out.
    private func sayable(_ recordings: [AdaptationRecording]) throws -> [AdaptationRecording] {
        let words = Set(recordings.flatMap(\.words))
        let missing = words.subtracting(try Pronunciations.phones(of: words, dictionaryPath: dictionary).keys)
        let kept = recordings.filter { Set($0.words).isDisjoint(with: missing) }
        if kept.count < recordings.count, !json {
            printError("heed: left out \(recordings.count - kept.count) of \(recordings.count) commands with words the dictionary lacks: "
                + missing.sorted().joined(separator: ", "))
        }
        return kept
    }

    /// The sentences of the shipped intents' tests that cover the commands' sounds best.
    private func chosenPrompts() throws -> [String] {
        let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
        let testFolder = IntentOptions.bundled("intents") + "/tests"
        let files = try FileManager.default.contentsOfDirectory(atPath: testFolder).filter { $0.hasSuffix(".json") }.sorted()
        let sentences = try files.flatMap { name in
            try IntentTestFile.load(URL(fileURLWithPath: testFolder + "/" + name), catalog: catalog).cases
                .filter { $0.intent != nil }.map { TextNormalizer.words($0.sentence).joined(separator: " ") }
        }
        let words = Set(sentences.flatMap { $0.split(separator: " ").map(String.init) })
        return AdaptationPrompts.choose(
            from: sentences, count: prompts, pronunciations: try Pronunciations.phones(of: words, dictionaryPath: dictionary))
    }

    /// Asks for each prompt until it is read (three tries), and writes the recordings and their
    /// manifest into a fresh `folder`; returns the manifest's path.
    private func recordPrompts(into folder: URL) throws -> String {
        let chosen = try chosenPrompts()
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.modelDirectory = model
        configuration.dictionaryPath = dictionary
        let source: any AudioSource = try input.map { try FileAudioSource(path: $0, format: .wav) } ?? ALSACapture(device: device)
        let recorder = try PromptRecorder(source: source, prompts: chosen, configuration: configuration, logger: Logger(label: "heed"))
        let speaker: ALSAPlayback? = speak ? try ALSAPlayback(device: playbackDevice) : nil

        // A new session records beside the last one's recordings and replaces them only when done.
        let session = folder.deletingLastPathComponent().appendingPathComponent("recording-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: session, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: session) }
        var manifest = "wav\ttranscript\n"
        printError("Read each sentence aloud after it appears, at your usual pace, where you use Heed; Heed waits for you.")
        prompts: for (index, prompt) in chosen.enumerated() {
            for attempt in 1...3 {
                printError(attempt == 1 ? "(\(index + 1)/\(chosen.count)) \(prompt)" : "Once more, please: \(prompt)")
                if let speaker {
                    let speech = try EspeakSynthesizer().synthesize(prompt)
                    try speaker.play(speech.samples, sampleRate: speech.sampleRate)
                }
                guard let (recording, reading) = try recorder.read(prompt, source: "prompt \(index + 1)") else {
                    throw AdaptCommandError(description: "the audio ended after \(index) of \(chosen.count) sentences; nothing was adapted")
                }
                switch reading {
                case .accepted:
                    let name = String(format: "%02d.wav", index + 1)
                    try recording.audio.wavData
                        .write(to: session.appendingPathComponent(name))
                    manifest += "\(name)\t\(prompt)\n"
                    continue prompts
                case .misread(let heard, _):
                    printError(heard.isEmpty ? "Heed did not hear the sentence." : "Heed heard \"\(heard)\".")
                }
            }
            printError("Skipped: \(prompt)")
        }
        try manifest.write(to: session.appendingPathComponent("manifest.tsv"), atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.moveItem(at: session, to: folder)
        return folder.appendingPathComponent("manifest.tsv").path
    }

    private func report(_ value: some Encodable, text: String) throws {
        print(json ? try jsonLine(value) : text)
    }

    /// A mixer of the room's noise recording, at least a second of it.
    static func roomNoiseMixer(_ path: String) throws -> NoiseMixer {
        let noise = try AudioFile.read(path)
        guard noise.duration >= 1 else {
            throw AdaptCommandError(
                description: "\(path): \(String(format: "%.2f", noise.duration)) s of room noise is too little; record a few seconds or more of the room")
        }
        return try NoiseMixer(noise: noise)
    }

    /// The signal-to-noise ratios of the noisy copies, in dB: a busy kitchen's, and a loud one's.
    static let copySNRs = [12.0, 6.0]

    /// Each recording once per ``copySNRs`` with a stretch of the noise mixed in (seeded by the
    /// recording's place in the list and the ratio: the same recordings get the same copies):
    /// adapted on beside the recordings, the model learns the voice in noise as well as in quiet
    /// (docs/MEASUREMENTS.md, "Adaptation").
    static func noisyCopies(of recordings: [AdaptationRecording], mixer: NoiseMixer) -> [AdaptationRecording] {
        copySNRs.flatMap { snr in
            let condition = Evaluation.NoiseCondition(mixer: mixer, snr: snr, name: "copies")
            return recordings.enumerated().map { index, recording in
                AdaptationRecording(
                    audio: condition.apply(to: recording.audio, recording: "\(index) at \(snr) dB"), words: recording.words,
                    source: "\(recording.source) (noisy copy, \(Int(snr)) dB)")
            }
        }
    }

    static func describe(_ record: AdaptationRecord) -> String {
        let aligned = record.alignedRecordings == record.recordings ? "" : " (\(record.alignedRecordings) matched their words)"
        let copies = record.noisyCopies.flatMap { $0 > 0 ? " and \($0) copies with \(record.copyNoise ?? "noise")" : nil } ?? ""
        return "\(record.method.rawValue.uppercased()) adaptation of \(record.baseModel) on \(record.recordings) recordings\(aligned)\(copies), "
            + String(format: "%.1f", record.seconds) + " s, \(record.words) words, made \(record.created)"
            + (record.source.map { " from \($0)" } ?? "") + "."
    }

    /// The manifest's recordings with their words; a row without a transcript is an error at its line.
    static func recordings(in path: String, noise: Evaluation.NoiseCondition? = nil) throws -> [AdaptationRecording] {
        let manifest = try CorpusManifest(path: path)
        return try manifest.entries.map { entry in
            guard let transcript = entry.transcript else {
                throw ManifestError(path: path, line: entry.line, reason: "no transcript: adaptation needs the words of every recording")
            }
            let audio = try AudioFile.read(entry.audioPath)
            return AdaptationRecording(
                audio: noise.map { $0.apply(to: audio, recording: entry.relativePath) } ?? audio,
                words: transcript.split(separator: " ").map(String.init), source: "\(path):\(entry.line)")
        }
    }
}

/// Input `heed adapt` cannot use: the microphone or recording ended before every prompt was
/// read, a room noise too short to make copies with.
struct AdaptCommandError: Error, CustomStringConvertible {
    var description: String
}

/// `--no-adaptation`, for the commands that hear.
struct AdaptationOptions: ParsableArguments {
    @Flag(
        name: .customLong("no-adaptation"),
        help: "Hear with the acoustic model as shipped, not the adaptation made by heed adapt.")
    var withoutAdaptation = false
}

extension AdaptationStore {
    /// `$XDG_DATA_HOME/heed/adaptation`.
    static var standard: AdaptationStore {
        AdaptationStore(folder: HeedDirectories.standard().data.appendingPathComponent("adaptation", isDirectory: true))
    }
}

extension HeardRecordings {
    /// `$XDG_DATA_HOME/heed/adaptation/heard`.
    static var standard: HeardRecordings {
        HeardRecordings(folder: AdaptationStore.standard.folder.appendingPathComponent("heard", isDirectory: true))
    }
}

extension PocketSphinxRecognizer.Configuration {
    /// Hears with the adaptation `heed adapt` made of this configuration's model, unless `options` says not to.
    mutating func applyAdaptation(_ options: AdaptationOptions, store: AdaptationStore = .standard) {
        guard !options.withoutAdaptation, let adapted = store.recognizerSettings(forBaseModel: modelDirectory) else { return }
        modelDirectory = adapted.modelDirectory
        decoderOptions.merge(adapted.decoderOptions) { _, adaptation in adaptation }
    }
}
