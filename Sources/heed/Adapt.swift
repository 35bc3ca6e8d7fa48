import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedRuntime
import HeedSpeech
import Logging

struct Adapt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Adapt the acoustic model to your voice, microphone and room.",
        discussion: """
            MANIFEST is a TSV file with a header row and the columns wav and transcript (the \
            format of heed eval and the shared corpora; paths relative to the manifest): \
            recordings of you saying commands, and the words of each. About 50 short commands \
            (a few minutes of audio) are a good start; at least \(SpeakerAdaptation.minimumRecordings) \
            recordings and \(Int(SpeakerAdaptation.minimumSeconds)) seconds are needed. Every word \
            must be in the pronunciation dictionary.

            Heed computes the recordings' features with its own front end and runs Debian's \
            sphinxtrain (bw, then map_adapt or mllr_solve) as child processes; the adapted model \
            is kept in $XDG_DATA_HOME/heed/adaptation and used from then on by heed recognize, \
            eval, run --audio and listen (--no-adaptation to hear without it). A failed \
            adaptation leaves the one in use before in place.

            Methods: map (default) moves each Gaussian the recordings show towards your voice; \
            mllr fits one linear transform of all of them (less audio, less gain). Measured \
            gains are in docs/MEASUREMENTS.md ("Adaptation").

            Examples:
              heed adapt my-commands.tsv
              heed adapt my-commands.tsv --method mllr --json
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

    @Flag(help: "Say which adaptation is in use, and what it was made from.")
    var status = false

    @Flag(help: "Remove the adaptation: hear with the model as shipped.")
    var reset = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        let modes = [manifest != nil, status, reset].filter { $0 }.count
        if modes != 1 { throw ValidationError("give a manifest, --status or --reset (one of them)") }
    }

    func run() throws {
        bootstrapLogging(verbose: false)
        let store = AdaptationStore.standard
        if reset {
            let had = store.reset()
            try report(["removed": had], text: had ? "Adaptation removed: Heed hears with the model as shipped." : "There was no adaptation.")
            return
        }
        if status {
            guard let (model, record) = try store.current() else {
                try report(["adapted": false], text: "No adaptation: Heed hears with the model as shipped.")
                return
            }
            try report(record, text: Self.describe(record) + "\n  \(model.path)")
            return
        }
        let recordings = try Self.recordings(in: manifest!)
        let adaptation = SpeakerAdaptation(
            baseModel: model, dictionaryPath: dictionary, method: method.method, logger: Logger(label: "heed"))
        let record = try adaptation.run(recordings, source: URL(fileURLWithPath: manifest!).standardizedFileURL.path, store: store) { step in
            if !json { printError("adapting: \(step)…") }
        }
        try report(record, text: "Adapted. " + Self.describe(record))
    }

    private func report(_ value: some Encodable, text: String) throws {
        print(json ? try jsonLine(value) : text)
    }

    static func describe(_ record: AdaptationRecord) -> String {
        let aligned = record.alignedRecordings == record.recordings ? "" : " (\(record.alignedRecordings) matched their words)"
        return "\(record.method.rawValue.uppercased()) adaptation of \(record.baseModel) on \(record.recordings) recordings\(aligned), "
            + String(format: "%.1f", record.seconds) + " s, \(record.words) words, made \(record.created)"
            + (record.source.map { " from \($0)" } ?? "") + "."
    }

    /// The manifest's recordings with their words; a row without a transcript is an error at its line.
    static func recordings(in path: String) throws -> [AdaptationRecording] {
        let manifest = try Manifest(path: path)
        return try manifest.entries.map { entry in
            guard let transcript = entry.transcript else {
                throw ManifestError(path: path, line: entry.line, reason: "no transcript: adaptation needs the words of every recording")
            }
            return AdaptationRecording(
                audio: try AudioFile.read(entry.audioPath), words: transcript.split(separator: " ").map(String.init),
                source: "\(path):\(entry.line)")
        }
    }
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

extension PocketSphinxRecognizer.Configuration {
    /// Hears with the adaptation `heed adapt` made of this configuration's model, unless `options` says not to.
    mutating func applyAdaptation(_ options: AdaptationOptions, store: AdaptationStore = .standard) {
        guard !options.withoutAdaptation, let adapted = store.recognizerSettings(forBaseModel: modelDirectory) else { return }
        modelDirectory = adapted.modelDirectory
        decoderOptions.merge(adapted.decoderOptions) { _, adaptation in adaptation }
    }
}
