public import Foundation
public import HeedCore
public import Logging

/// One recording to adapt on: 16 kHz audio and the words said in it.
public struct AdaptationRecording: Sendable {
    /// The audio, at ``AudioBuffer/recognitionSampleRate``.
    public var audio: AudioBuffer
    /// The words said, lower case.
    public var words: [String]
    /// Where it comes from, for errors: `manifest.tsv:12`.
    public var source: String

    /// Creates a recording.
    public init(audio: AudioBuffer, words: [String], source: String) {
        self.audio = audio
        self.words = words
        self.source = source
    }
}

/// How the acoustic model is adapted to a speaker.
public enum AdaptationMethod: String, Sendable, Codable, CaseIterable {
    /// Maximum a posteriori: the model's Gaussians move towards the speaker's sounds, each as
    /// far as the recordings show it. Needs more audio than MLLR, and gains more from it.
    case map
    /// Maximum-likelihood linear regression: one linear transform of every mean.
    case mllr
}

/// What an adaptation was made from, kept beside it as `adaptation.json`.
public struct AdaptationRecord: Sendable, Codable, Hashable {
    public var method: AdaptationMethod
    /// When it was made, ISO 8601.
    public var created: String
    /// Recordings given, and recordings sphinxtrain could align with their words.
    public var recordings: Int
    public var alignedRecordings: Int
    /// Seconds of audio given.
    public var seconds: Double
    /// The distinct words said.
    public var words: Int
    /// The acoustic model folder adapted.
    public var baseModel: String
    /// Where the recordings came from (a manifest's path), when known.
    public var source: String?
    /// Copies of the recordings with noise mixed in, adapted on beside them, and the noise
    /// (`pink noise` or the room's recording); `nil` in records made before there were copies.
    public var noisyCopies: Int?
    public var copyNoise: String?
}

/// Why an adaptation could not be made. The adaptation in use before stays in use.
public struct AdaptationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The adaptation in use: `$XDG_DATA_HOME/heed/adaptation/current`, a symbolic link to one
/// adapted model folder. A new adaptation is written beside it and the link is replaced with
/// `rename(2)`, so a recognizer starting meanwhile sees the old adaptation or the new one,
/// never half of one; a failed adaptation leaves the old one in place.
public struct AdaptationStore: Sendable {
    /// The `adaptation` folder.
    public let folder: URL

    /// Creates the store of `folder`.
    public init(folder: URL) { self.folder = folder }

    private var link: URL { folder.appendingPathComponent("current") }
    private var models: URL { folder.appendingPathComponent("models") }

    /// The adapted model folder in use and its record, if any.
    /// - Throws: ``AdaptationError`` when the folder exists but its record cannot be read.
    public func current() throws(AdaptationError) -> (model: URL, record: AdaptationRecord)? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link.path) else { return nil }
        let model = target.hasPrefix("/") ? URL(fileURLWithPath: target) : folder.appendingPathComponent(target)
        let recordFile = model.appendingPathComponent("adaptation.json")
        guard let data = FileManager.default.contents(atPath: recordFile.path) else {
            throw AdaptationError("\(recordFile.path): missing; `heed adapt --reset` removes the broken adaptation")
        }
        do {
            return (model, try JSONDecoder().decode(AdaptationRecord.self, from: data))
        } catch {
            throw AdaptationError("\(recordFile.path): not an adaptation record (\(error)); `heed adapt --reset` removes it")
        }
    }

    /// The model folder and decoder options a recognizer of `baseModel` uses: the adaptation
    /// when one was made from that model, else nothing (adaptation of another model is ignored).
    public func recognizerSettings(forBaseModel baseModel: String) -> (modelDirectory: String, decoderOptions: [String: String])? {
        guard let (model, record) = try? current(), record.baseModel == baseModel else { return nil }
        switch record.method {
        case .map: return (model.path, [:])
        case .mllr: return (baseModel, ["-mllr": model.appendingPathComponent("mllr_matrix").path])
        }
    }

    /// A new empty folder for an adapted model, beside the one in use.
    func newModelFolder() throws(AdaptationError) -> URL {
        let stamp = Date().iso8601Text.replacingOccurrences(of: ":", with: "")
        let model = models.appendingPathComponent("\(stamp)-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw AdaptationError("cannot create \(model.path): \(error.localizedDescription)")
        }
        return model
    }

    /// Makes `model` (a folder made by ``newModelFolder()``, with its record written) the one in
    /// use, then removes the others.
    func install(_ model: URL) throws(AdaptationError) {
        let temporaryLink = folder.appendingPathComponent("current.\(UUID().uuidString)")
        let relative = "models/" + model.lastPathComponent
        guard symlink(relative, temporaryLink.path) == 0, rename(temporaryLink.path, link.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryLink.path)
            throw AdaptationError("cannot make \(model.path) the adaptation in use: \(reason)")
        }
        removeModels(except: model.lastPathComponent)
    }

    /// Removes the adaptation in use (and any folder left by an interrupted adaptation).
    /// - Returns: Whether there was one.
    @discardableResult
    public func reset() -> Bool {
        let had = (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil
        unlink(link.path)
        removeModels(except: nil)
        return had
    }

    /// Removes model folders other than `kept`.
    func removeModels(except kept: String?) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: models.path)) ?? []
        for name in names where name != kept { try? FileManager.default.removeItem(at: models.appendingPathComponent(name)) }
    }
}

/// Adapts PocketSphinx's acoustic model to a speaker, a microphone and a room, with Debian's
/// sphinxtrain tools run as child processes: the recordings' features are computed by Heed's own
/// decoder front end (the same as recognition), `bw` collects statistics aligned with the words,
/// and `map_adapt` (MAP) or `mllr_solve` (MLLR) makes the adapted model.
public struct SpeakerAdaptation {
    /// Too little audio adapts to noise: fewer than this many recordings is refused.
    public static let minimumRecordings = 5
    /// … and fewer than this many seconds of audio.
    public static let minimumSeconds = 10.0

    /// The folder of sphinxtrain's programs (`HEED_SPHINXTRAIN_DIR`, default Debian's).
    public var toolFolder: String
    /// The acoustic model adapted.
    public var baseModel: String
    /// The pronunciation dictionary the words are looked up in.
    public var dictionaryPath: String
    public var method: AdaptationMethod
    public var logger: Logger

    /// Creates an adaptation run; `environment` may set `HEED_SPHINXTRAIN_DIR`.
    public init(
        baseModel: String, dictionaryPath: String, method: AdaptationMethod, logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.baseModel = baseModel
        self.dictionaryPath = dictionaryPath
        self.method = method
        self.logger = logger
        toolFolder = environment["HEED_SPHINXTRAIN_DIR"] ?? "/usr/lib/sphinxtrain"
    }

    /// Adapts on `recordings` and makes the result the adaptation in use in `store`.
    ///
    /// - Parameters:
    ///   - noisyCopies: copies of the recordings with noise mixed in, adapted on with them (the
    ///     minimum amount of audio counts `recordings` alone), and `noise` names it for the record.
    ///   - realign: MAP only: estimate the means a second time, from the recordings aligned
    ///     again by the first estimate. For recordings with their true words and noisy copies:
    ///     there it hears better in noise; without copies it hears worse in noise, and with the
    ///     words Heed heard (some wrong) no better (docs/MEASUREMENTS.md, "Adaptation").
    ///   - source: where the recordings come from, for the record.
    ///   - progress: called with each step's description.
    /// - Returns: The record of the new adaptation.
    /// - Throws: ``AdaptationError``; the adaptation in use before stays in use.
    public func run(
        _ recordings: [AdaptationRecording], noisyCopies: [AdaptationRecording] = [], noise: String? = nil, realign: Bool = false,
        source: String?,
        store: AdaptationStore, progress: (String) -> Void = { _ in }
    ) throws(AdaptationError) -> AdaptationRecord {
        let seconds = recordings.reduce(0) { $0 + $1.audio.duration }
        guard recordings.count >= Self.minimumRecordings, seconds >= Self.minimumSeconds else {
            throw AdaptationError(
                "too little audio to adapt on: \(recordings.count) recordings, \(String(format: "%.1f", seconds)) s; "
                    + "at least \(Self.minimumRecordings) recordings and \(Int(Self.minimumSeconds)) s are needed (50 short commands are a good start)")
        }
        if let empty = recordings.first(where: { $0.words.isEmpty }) { throw AdaptationError("\(empty.source): no words to adapt on") }
        let adaptedOn = recordings + noisyCopies
        let tools = try requiredTools()
        let model = try store.newModelFolder()
        var installed = false
        defer { if !installed { try? FileManager.default.removeItem(at: model) } }
        let work = model.appendingPathComponent("work")
        defer { try? FileManager.default.removeItem(at: work) }
        do {
            try FileManager.default.createDirectory(at: work.appendingPathComponent("features"), withIntermediateDirectories: true)
        } catch {
            throw AdaptationError("cannot create \(work.path): \(error.localizedDescription)")
        }

        let words = Set(recordings.flatMap(\.words))
        try writeDictionary(words: words, recordings: recordings, to: work.appendingPathComponent("words.dict"))
        progress("features of \(recordings.count) recordings" + (noisyCopies.isEmpty ? "" : " and \(noisyCopies.count) noisy copies"))
        try writeFeatures(adaptedOn, in: work)
        let parameters: [String: String]
        do {
            parameters = try AcousticModelFiles.featureParameters(in: baseModel)
        } catch {
            throw AdaptationError(error.description)
        }
        try prepareBaseModel(in: work, tools: tools)

        progress("statistics (bw)")
        let bwLog = try collectStatistics(model: baseModel, into: "statistics", work: work, tools: tools, parameters: parameters)
        // bw skips a recording it cannot align with its words: `ERROR: "baum_welch.c", line 324: 00012 ignored`.
        let failedAlignments = Set(
            bwLog.split(separator: "\n").filter { $0.contains("baum_welch") && $0.hasSuffix(" ignored") }.compactMap { line in
                line.split(separator: " ").dropLast().last.map(String.init)
            })
        // File names are indices in `adaptedOn`: the recordings come before their copies.
        let aligned = recordings.count - failedAlignments.filter { (Int($0) ?? 0) < recordings.count }.count
        guard aligned >= Self.minimumRecordings else {
            throw AdaptationError(
                "only \(aligned) of \(recordings.count) recordings matched their words; check the transcripts and the audio")
        }

        switch method {
        case .map:
            try copyBaseModel(into: model)
            progress("adapted model (map_adapt)")
            try mapAdapt(statistics: "statistics", into: model, work: work, tools: tools, parameters: parameters)
            guard realign else { break }
            // The recordings aligned again by the adapted model, whose means fit the speaker's
            // frames better, and MAP from the shipped means once more with those statistics: one
            // more step of EM (a third changed nothing).
            progress("statistics again, with the adapted means (bw)")
            _ = try collectStatistics(model: model.path, into: "statistics-2", work: work, tools: tools, parameters: parameters)
            progress("adapted model again (map_adapt)")
            try mapAdapt(statistics: "statistics-2", into: model, work: work, tools: tools, parameters: parameters)
        case .mllr:
            progress("transform (mllr_solve)")
            _ = try runTool(
                tools.mllrSolve,
                [
                    "-meanfn", baseModel + "/means", "-varfn", baseModel + "/variances",
                    "-outmllrfn", model.appendingPathComponent("mllr_matrix").path,
                    "-accumdir", work.appendingPathComponent("statistics").path,
                ],
                log: work.appendingPathComponent("mllr_solve.log"))
        }
        let record = AdaptationRecord(
            method: method, created: Date().iso8601Text, recordings: recordings.count,
            alignedRecordings: aligned, seconds: seconds, words: words.count, baseModel: baseModel, source: source,
            noisyCopies: noisyCopies.count, copyNoise: noisyCopies.isEmpty ? nil : noise)
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(record).write(to: model.appendingPathComponent("adaptation.json"), options: .atomic)
        } catch {
            throw AdaptationError("cannot write the adaptation record in \(model.path): \(error.localizedDescription)")
        }
        try? FileManager.default.removeItem(at: work)
        try store.install(model)
        installed = true
        return record
    }

    // MARK: Steps

    private struct Tools {
        var bw: String
        var mapAdapt: String
        var mllrSolve: String
        var mdefConvert: String
    }

    private func requiredTools() throws(AdaptationError) -> Tools {
        let tools = Tools(
            bw: toolFolder + "/bw", mapAdapt: toolFolder + "/map_adapt", mllrSolve: toolFolder + "/mllr_solve",
            mdefConvert: "/usr/bin/pocketsphinx_mdef_convert")
        for path in [tools.bw, tools.mapAdapt, tools.mllrSolve] where !FileManager.default.isExecutableFile(atPath: path) {
            throw AdaptationError("sphinxtrain's \(path) is missing: install Debian's sphinxtrain package (or set HEED_SPHINXTRAIN_DIR)")
        }
        guard FileManager.default.isExecutableFile(atPath: tools.mdefConvert) else {
            throw AdaptationError("\(tools.mdefConvert) is missing: install Debian's pocketsphinx package")
        }
        return tools
    }

    /// The words' pronunciations in the dictionary's own form, alternates included.
    private func writeDictionary(words: Set<String>, recordings: [AdaptationRecording], to file: URL) throws(AdaptationError) {
        let dictionary: PronunciationDictionary
        do {
            dictionary = try PronunciationDictionary(path: dictionaryPath, words: words)
        } catch {
            throw AdaptationError(error.description)
        }
        let missing = Set(dictionary.missing(from: words))
        if let first = recordings.first(where: { !Set($0.words).isDisjoint(with: missing) }) {
            throw AdaptationError(
                "\(first.source): no pronunciation for \(missing.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) in \(dictionaryPath); "
                    + "use words of the dictionary, or give one that has them with --dictionary")
        }
        let text = dictionary.entries.map { "\($0.word) \($0.phones)\n" }.joined()
        try write(Data(text.utf8), to: file)
    }

    /// One feature file per recording, the list of them, and their transcripts.
    private func writeFeatures(_ recordings: [AdaptationRecording], in work: URL) throws(AdaptationError) {
        SphinxLogSink.shared.use(logger)
        let decoder: SphinxDecoder
        do {
            decoder = try SphinxDecoder(arguments: ["-hmm": baseModel, "-dict": "/dev/null", "-dither": "yes", "-seed": "2026"])
        } catch {
            throw AdaptationError("cannot load the acoustic model \(baseModel): \(error)")
        }
        var fileIDs = ""
        var transcripts = ""
        for (index, recording) in recordings.enumerated() {
            let name = String(format: "%05d", index)
            let (_, values) = decoder.cepstra(of: recording.audio.samples)
            try write(AcousticModelFiles.featureFile(values), to: work.appendingPathComponent("features/\(name).mfc"))
            fileIDs += name + "\n"
            transcripts += "<s> \(recording.words.joined(separator: " ")) </s> (\(name))\n"
        }
        try write(Data(fileIDs.utf8), to: work.appendingPathComponent("recordings.fileids"))
        try write(Data(transcripts.utf8), to: work.appendingPathComponent("recordings.transcription"))
    }

    /// The model definition as text and the mixture weights as floats: what sphinxtrain reads.
    private func prepareBaseModel(in work: URL, tools: Tools) throws(AdaptationError) {
        _ = try runTool(
            tools.mdefConvert, ["-text", baseModel + "/mdef", work.appendingPathComponent("mdef.txt").path],
            log: work.appendingPathComponent("mdef.log"))
        let weights = work.appendingPathComponent("mixture_weights")
        if FileManager.default.fileExists(atPath: baseModel + "/mixture_weights") {
            do {
                try FileManager.default.copyItem(atPath: baseModel + "/mixture_weights", toPath: weights.path)
            } catch {
                throw AdaptationError("cannot copy \(baseModel)/mixture_weights: \(error.localizedDescription)")
            }
        } else {
            let data: Data
            do {
                data = try AcousticModelFiles.mixtureWeights(fromSendump: baseModel + "/sendump")
            } catch {
                throw AdaptationError(error.description)
            }
            try write(data, to: weights)
        }
    }

    /// `bw`'s statistics of the recordings aligned with their words by `model` (a folder with
    /// means, variances and transition matrices; the mixture weights are `work`'s), in the
    /// folder `statistics` of `work` (made here). Returns bw's log.
    private func collectStatistics(
        model: String, into statistics: String, work: URL, tools: Tools, parameters: [String: String]
    ) throws(AdaptationError) -> String {
        do {
            try FileManager.default.createDirectory(at: work.appendingPathComponent(statistics), withIntermediateDirectories: true)
        } catch {
            throw AdaptationError("cannot create \(work.appendingPathComponent(statistics).path): \(error.localizedDescription)")
        }
        return try runTool(
            tools.bw,
            [
                "-hmmdir", model, "-moddeffn", work.appendingPathComponent("mdef.txt").path,
                "-mixwfn", work.appendingPathComponent("mixture_weights").path,
                "-ts2cbfn", Self.streams(parameters), "-feat", parameters["-feat"] ?? "1s_c_d_dd", "-cmn", parameters["-cmn"] ?? "batch",
                "-agc", parameters["-agc"] ?? "none", "-varnorm", parameters["-varnorm"] ?? "no",
                "-dictfn", work.appendingPathComponent("words.dict").path, "-fdictfn", baseModel + "/noisedict",
                "-ctlfn", work.appendingPathComponent("recordings.fileids").path,
                "-lsnfn", work.appendingPathComponent("recordings.transcription").path,
                "-cepdir", work.appendingPathComponent("features").path, "-cepext", "mfc",
                "-accumdir", work.appendingPathComponent(statistics).path,
            ] + (parameters["-svspec"].map { ["-svspec", $0] } ?? []),
            log: work.appendingPathComponent("bw-\(statistics).log"))
    }

    /// sphinxtrain's name for how the model's Gaussians are tied.
    private static func streams(_ parameters: [String: String]) -> String {
        switch parameters["-model"] {
        case "ptm": ".ptm."
        case "semi": ".semi."
        default: ".cont."
        }
    }

    /// Every file of the base model but its means into `model`: what a MAP-adapted model keeps.
    private func copyBaseModel(into model: URL) throws(AdaptationError) {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: baseModel)) ?? []
        for file in files.sorted() where file != "means" {
            do {
                try FileManager.default.copyItem(atPath: baseModel + "/" + file, toPath: model.appendingPathComponent(file).path)
            } catch {
                throw AdaptationError("cannot copy \(baseModel)/\(file): \(error.localizedDescription)")
            }
        }
    }

    /// MAP from the base model's means with `work`'s `statistics`: the adapted means in `model`.
    ///
    /// MAP moves the Gaussians' means only; the folder keeps every other file of the base model
    /// as it is. map_adapt also re-estimates variances, mixture weights and transition matrices
    /// (written to `work` and dropped): from 50 short recordings those cost accuracy
    /// (docs/MEASUREMENTS.md, "Adaptation").
    private func mapAdapt(
        statistics: String, into model: URL, work: URL, tools: Tools, parameters: [String: String]
    ) throws(AdaptationError) {
        _ = try runTool(
            tools.mapAdapt,
            [
                "-moddeffn", work.appendingPathComponent("mdef.txt").path, "-ts2cbfn", Self.streams(parameters),
                "-meanfn", baseModel + "/means", "-varfn", baseModel + "/variances",
                "-mixwfn", work.appendingPathComponent("mixture_weights").path, "-tmatfn", baseModel + "/transition_matrices",
                "-accumdir", work.appendingPathComponent(statistics).path,
                "-mapmeanfn", model.appendingPathComponent("means").path, "-mapvarfn", work.appendingPathComponent("map_variances").path,
                "-mapmixwfn", work.appendingPathComponent("map_mixture_weights").path,
                "-maptmatfn", work.appendingPathComponent("map_transition_matrices").path,
            ],
            log: work.appendingPathComponent("map_adapt-\(statistics).log"))
    }

    /// Runs a sphinxtrain program with its output in `log`; returns the log's text.
    private func runTool(_ path: String, _ arguments: [String], log: URL) throws(AdaptationError) -> String {
        let name = URL(fileURLWithPath: path).lastPathComponent
        logger.debug("running \(name)", metadata: ["arguments": "\(arguments.joined(separator: " "))"])
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw AdaptationError("\(log.path): cannot create the log of \(name)")
        }
        let descriptor = open(log.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw AdaptationError("\(log.path): cannot open the log of \(name)") }
        let status: Int32
        do {
            defer { close(descriptor) }
            status = try ChildProcess.run(URL(fileURLWithPath: path), arguments: arguments, output: descriptor).status
        } catch {
            throw AdaptationError("\(name) could not be started (\(path)): \(error.localizedDescription)")
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let tail = text.split(separator: "\n").suffix(4).joined(separator: "\n  ")
            throw AdaptationError("\(name) failed (status \(status)); the end of its output:\n  \(tail)")
        }
        return text
    }

    private func write(_ data: Data, to file: URL) throws(AdaptationError) {
        do {
            try data.write(to: file)
        } catch {
            throw AdaptationError("cannot write \(file.path): \(error.localizedDescription)")
        }
    }
}
