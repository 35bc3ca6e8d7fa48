import ArgumentParser
import Foundation
import HeedAudio
import HeedCore
import HeedPlugins
import HeedRuntime
import HeedSpeech
import HeedState

/// `heed vocab`: register the names only an app knows (playlists, workouts, list items).
struct Vocab: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vocab",
        abstract: "Register, list and remove custom vocabulary; show how a word is pronounced.",
        discussion: """
            An app registers the names only it knows — playlist titles, workout names, list \
            items — per vocabulary type, as an ordered list with the most important term first \
            (SiriKit's INVocabulary). Only installed apps may register, and only the types their \
            plugin.json declares in vocabularyTypes. The recognizer's grammar, its pronunciations \
            and the parser of heed recognize/eval --intents and heed run pick the terms up the \
            next time they start; a running listener re-reads them when the file changes.

            set replaces a type's whole list, add appends the terms not there yet, remove takes \
            terms out, clear removes all of an app's vocabulary, import replaces a type's list \
            with the lines of a file (or a JSON array of strings). Terms are normalised: Unicode \
            NFKC, lower case, punctuation dropped except apostrophes inside words, digits spelled \
            out ("Route 66" is heard as "route sixty six"); two terms with the same words are one. \
            Limits: \(VocabularyLimits.maximumTermsPerType) terms per type, \(VocabularyLimits.maximumCharacters) \
            characters and \(VocabularyLimits.maximumWords) words per term. A word that is not in \
            the pronunciation dictionary gets espeak-ng's pronunciation; override it with \
            `heed vocab override`.

            Vocabulary is kept in $XDG_DATA_HOME/heed/vocabulary.json (--data-dir to change).

            Exit status: 0 success, 1 failure (a refused term, a corrupt file), 2 usage error.

            Examples:
              heed vocab set --app org.heed.media --type playlistTitle "Road Trip Classics" "Morning Jazz"
              heed vocab add --app org.heed.workout --type workoutName "Quixotiq Intervals"
              heed vocab list --json
              heed vocab pronounce Zyrtec --wav zyrtec.wav
              heed vocab override --app org.heed.notes --type listItem Zyrtec --phones "Z IH R T EH K"
              heed vocab import --app org.heed.media --type playlistTitle playlists.txt
              heed vocab clear --app org.heed.media
            See docs/VOCABULARY.md.
            """,
        subcommands: [SetTerms.self, Add.self, Remove.self, List.self, Clear.self, Import.self, Pronounce.self, Override.self]
    )
}

// MARK: - Options

extension Vocab {
    /// The options every `heed vocab` subcommand takes.
    struct Options: ParsableArguments {
        @Flag(help: "Print JSON instead of text.")
        var json = false

        @OptionGroup var vocabulary: VocabularyOptions

        @OptionGroup var plugins: PluginFolderOptions

        @Option(help: ArgumentHelp("The pronunciation dictionary (CMU format).", valueName: "file"))
        var dictionary = PocketSphinxRecognizer.Configuration.default.dictionaryPath

        /// The store over the data folder and the installed plugins.
        func store() throws -> VocabularyStore {
            return VocabularyStore(
                dataDirectory: try VocabularyOptions.dataDirectory(vocabulary.dataDirectory), manifests: try plugins.installedPlugins().manifests,
                dictionaryPath: dictionary)
        }
    }

    /// `--app` and `--type`.
    struct Target: ParsableArguments {
        @Option(help: ArgumentHelp("The app id, e.g. org.heed.media.", valueName: "app"))
        var app: String

        @Option(help: ArgumentHelp("The vocabulary type, e.g. playlistTitle.", valueName: "type"))
        var type: String
    }

    /// Prints a change as text or JSON.
    static func report(_ change: VocabularyChange, verb: String, target: String, json: Bool) throws {
        if json {
            print(try jsonLine(change))
            return
        }
        print("\(target): \(verb) \(change.changed.count) term\(change.changed.count == 1 ? "" : "s"); \(change.count) now")
        if !change.unchanged.isEmpty {
            print("  already registered or repeated: \(change.unchanged.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }
}

// MARK: - set, add, remove, clear, import

extension Vocab {
    struct SetTerms: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Replace a vocabulary type's whole list of terms, most important first.",
            discussion: """
                Example: heed vocab set --app org.heed.media --type playlistTitle "Road Trip Classics" "Morning Jazz"
                With no terms, the type's list is emptied.
                """
        )
        @OptionGroup var options: Options
        @OptionGroup var target: Target
        @Argument(help: ArgumentHelp("The terms, most important first.", valueName: "term"))
        var terms: [String] = []

        func run() throws {
            let change = try options.store().set(terms, type: target.type, app: target.app)
            try Vocab.report(change, verb: "set", target: "\(target.app) \(target.type)", json: options.json)
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Append terms a vocabulary type does not have yet, keeping their order.",
            discussion: "Example: heed vocab add --app org.heed.notes --type listItem Zyrtec \"oat milk\""
        )
        @OptionGroup var options: Options
        @OptionGroup var target: Target
        @Argument(help: ArgumentHelp("The terms.", valueName: "term"))
        var terms: [String]

        func run() throws {
            let change = try options.store().add(terms, type: target.type, app: target.app)
            try Vocab.report(change, verb: "added", target: "\(target.app) \(target.type)", json: options.json)
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove terms (and their pronunciation overrides) from a vocabulary type.",
            discussion: """
                A term matches when its words do ("morning JAZZ" removes "Morning Jazz"). A term \
                that is not registered is an error, and then nothing is removed.
                Example: heed vocab remove --app org.heed.media --type playlistTitle "Morning Jazz"
                """
        )
        @OptionGroup var options: Options
        @OptionGroup var target: Target
        @Argument(help: ArgumentHelp("The terms.", valueName: "term"))
        var terms: [String]

        func run() throws {
            let change = try options.store().remove(terms, type: target.type, app: target.app)
            try Vocab.report(change, verb: "removed", target: "\(target.app) \(target.type)", json: options.json)
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove all of an app's vocabulary, of every type.",
            discussion: "Example: heed vocab clear --app org.heed.media"
        )
        @OptionGroup var options: Options
        @Option(help: ArgumentHelp("The app id.", valueName: "app"))
        var app: String

        func run() throws {
            let change = try options.store().clear(app: app)
            if options.json {
                print(try jsonLine(change))
            } else {
                print("\(app): removed \(change.changed.count) term\(change.changed.count == 1 ? "" : "s")")
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a vocabulary type's list with the terms of a file.",
            discussion: """
                FILE has one term a line (blank lines and lines starting with # are skipped), or is \
                a JSON array of strings. Like set, it replaces the whole list, most important first; \
                nothing changes when a term is refused. A progress line shows on a terminal. \
                FILE "-" reads standard input.
                Example: heed vocab import --app org.heed.media --type playlistTitle playlists.txt
                """
        )
        @OptionGroup var options: Options
        @OptionGroup var target: Target
        @Argument(help: ArgumentHelp("The file of terms.", valueName: "file"))
        var file: String

        func run() throws {
            let data: Data
            do {
                data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw VocabCommandError("\(file): cannot read the file: \(error.localizedDescription)")
            }
            let terms = try Self.terms(in: data, file: file)
            let progress = standardErrorIsTerminal
            if progress { FileHandle.standardError.write(Data("\r\u{1B}[K\(file): checking \(terms.count) terms…".utf8)) }
            let change = try options.store().set(terms, type: target.type, app: target.app)
            if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            try Vocab.report(change, verb: "imported", target: "\(target.app) \(target.type)", json: options.json)
        }

        /// The terms of a file: a JSON array of strings, or one a line.
        static func terms(in data: Data, file: String) throws -> [String] {
            guard let text = String(data: data, encoding: .utf8) else { throw VocabCommandError("\(file): the file is not UTF-8 text") }
            let trimmed = text.trimmed
            if trimmed.hasPrefix("[") {
                let source = SourceText(path: file, text: text)
                let reader = JSONSchemaReader(source: source)
                return try reader.array(try LocatedJSONParser.parse(source), "a JSON array of terms").map { try reader.string($0, "a term") }
            }
            return text.split(whereSeparator: \.isNewline).map { $0.trimmed }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
    }
}

// MARK: - list

extension Vocab {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List registered vocabulary.",
            discussion: """
                Examples:
                  heed vocab list
                  heed vocab list --app org.heed.media --type playlistTitle --json
                """
        )
        @OptionGroup var options: Options
        @Option(help: ArgumentHelp("Only this app.", valueName: "app"))
        var app: String?
        @Option(help: ArgumentHelp("Only this vocabulary type.", valueName: "type"))
        var type: String?

        func run() throws {
            let entries = try options.store().entries(app: app, type: type)
            if options.json {
                print(try jsonLine(entries))
                return
            }
            if entries.isEmpty { print("no vocabulary registered") }
            for entry in entries {
                print("\(entry.appID) \(entry.type) (\(entry.terms.count))")
                for term in entry.terms {
                    let key = VocabularyNormalizer.key(term)
                    let override = entry.overrides[key].map { "  [\($0.kind == .phones ? "phones" : "sounds like") \($0.text)]" } ?? ""
                    print("  \(term)\(override)")
                }
            }
        }
    }
}

// MARK: - pronounce, override

extension Vocab {
    struct Pronounce: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the phones a term is recognized with, and where they come from; speak them.",
            discussion: """
                Each word's phones come from a registered override, else the pronunciation \
                dictionary, else espeak-ng's guess. --wav writes them spoken by espeak-ng to a WAV \
                file; --play plays them on the default ALSA device with aplay.
                Examples:
                  heed vocab pronounce Zyrtec
                  heed vocab pronounce "Quixotiq Radio" --wav out.wav --json
                """
        )
        @OptionGroup var options: Options
        @Flag(help: "Play the phones with aplay on the default sound device.")
        var play = false
        @Option(help: ArgumentHelp("Write the phones, spoken, to a WAV file.", valueName: "out.wav"))
        var wav: String?
        @Argument(help: ArgumentHelp("The term.", valueName: "term"))
        var term: String

        func validate() throws {
            if play, wav != nil { throw ValidationError("give --play or --wav, not both") }
            if VocabularyNormalizer.words(term).isEmpty { throw ValidationError("'\(term)' has no words") }
        }

        func run() throws {
            let pronunciations = try options.store().pronounce(term)
            let missing = VocabularyNormalizer.words(term).filter { word in !pronunciations.contains { $0.word == word } }
            if options.json {
                print(try jsonLine(PronounceOutput(term: term, words: pronunciations, missing: missing)))
            } else {
                for pronunciation in pronunciations {
                    print("\(pronunciation.word)  \(pronunciation.phoneString)  (\(pronunciation.source.rawValue))")
                }
                for word in missing { print("\(word)  (no pronunciation)") }
            }
            guard missing.isEmpty else { throw ExitCode.failure }
            guard play || wav != nil else { return }
            let audio = try EspeakSynthesizer().synthesize(phones: pronunciations.map(\.phones))
            let data = audio.wavData
            if let wav {
                do {
                    try data.write(to: URL(fileURLWithPath: wav))
                } catch {
                    throw VocabCommandError("\(wav): cannot write the WAV file: \(error.localizedDescription)")
                }
                if !options.json { print("wrote \(wav) (\(String(format: "%.2f", Double(audio.samples.count) / Double(audio.sampleRate))) s)") }
            } else {
                try Self.playOnDefaultDevice(data)
            }
        }

        private static func playOnDefaultDevice(_ data: Data) throws {
            let aplay = ["/usr/bin/aplay", "/bin/aplay"].first { FileManager.default.isExecutableFile(atPath: $0) }
            guard let aplay else {
                throw VocabCommandError("--play needs aplay (Debian package alsa-utils); use --wav FILE instead")
            }
            let (status, message) = try ChildProcess.run(URL(fileURLWithPath: aplay), arguments: ["-q", "-"], input: [UInt8](data))
            guard status == 0 else {
                throw VocabCommandError(
                    "aplay could not play on the default sound device: \(message.trimmed); use --wav FILE instead")
            }
        }
    }

    struct Override: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say how a registered term is pronounced, or remove that.",
            discussion: """
                --sounds-like gives a spelling that sounds right (pronounced with the dictionary, \
                else espeak-ng); --phones gives ARPAbet phones (the 39 CMU phones and SIL, stress \
                digits ignored). For a term of several words give one pronunciation per word, \
                separated by '|'; a sounds-like spelling with as many words as the term needs none. \
                An override replaces the dictionary's pronunciation of those words.
                Examples:
                  heed vocab override --app org.heed.notes --type listItem Zyrtec --phones "Z IH R T EH K"
                  heed vocab override --app org.heed.media --type playlistTitle "Quixotiq Radio" --sounds-like "quick sotic radio"
                  heed vocab override --app org.heed.notes --type listItem Zyrtec --remove
                """
        )
        @OptionGroup var options: Options
        @OptionGroup var target: Target
        @Option(name: .customLong("sounds-like"), help: ArgumentHelp("A spelling that sounds like the term.", valueName: "spelling"))
        var soundsLike: String?
        @Option(help: ArgumentHelp("ARPAbet phones, words separated by '|'.", valueName: "phones"))
        var phones: String?
        @Flag(help: "Remove the term's override.")
        var remove = false
        @Argument(help: ArgumentHelp("The registered term.", valueName: "term"))
        var term: String

        func validate() throws {
            let given = [soundsLike != nil, phones != nil, remove].filter { $0 }.count
            guard given == 1 else { throw ValidationError("give exactly one of --sounds-like SPELLING, --phones \"P H ONES\" or --remove") }
        }

        func run() throws {
            let store = try options.store()
            if remove {
                let removed = try store.removeOverride(term: term, type: target.type, app: target.app)
                if options.json {
                    print(try jsonLine(["removed": removed]))
                } else {
                    print(removed ? "\(target.app) \(target.type) '\(term)': override removed" : "\(target.app) \(target.type) '\(term)': had no override")
                }
                return
            }
            let override =
                if let soundsLike {
                    try store.setOverride(.soundsLike, soundsLike, term: term, type: target.type, app: target.app)
                } else {
                    try store.setOverride(.phones, phones ?? "", term: term, type: target.type, app: target.app)
                }
            if options.json {
                print(try jsonLine(override))
            } else {
                let words = VocabularyNormalizer.words(term)
                for (word, phones) in zip(words, override.phones) { print("\(word)  \(phones.joined(separator: " "))  (override)") }
            }
        }
    }
}

/// `pronounce --json`'s object.
private struct PronounceOutput: Encodable {
    var term: String
    var words: [Pronunciation]
    var missing: [String]
}

/// A failure of a `heed vocab` command that renders itself (exit status 1).
struct VocabCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
