import ArgumentParser
import Foundation
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import HeedState

struct GrammarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grammar",
        abstract: "Show the grammar compiled from the intents, check the intents, or test them with sentences.",
        subcommands: [Show.self, Check.self, Test.self]
    )

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSGF grammar that the recognizer uses for the intents.",
            discussion: """
                With --stats, the size of what the recognizer searches instead: the word \
                automaton's states, arcs and words, with registered vocabulary, for the grammar \
                the listener uses when nothing is going on (no contextual intents) and with \
                every contextual intent ("louder", "skip") active. A vocabulary type with \
                1,000 terms or more is an open slot: a loop of phones in the grammar, its \
                terms decoded in a second pass (docs/VOCABULARY.md).

                Examples:
                  heed grammar show
                  heed grammar show --intents intents/examples/coffee.json
                  heed grammar show --stats
                """
        )

        @OptionGroup var intents: IntentOptions
        @OptionGroup var plugins: PluginOptions
        @OptionGroup var vocabulary: VocabularyOptions

        @Flag(help: "Print the size of the recognizer's grammar (states, arcs, words) instead of the JSGF.")
        var stats = false

        @Flag(help: "With --stats: print one JSON object.")
        var json = false

        func run() throws {
            let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
            guard stats else {
                print(catalog.grammar().jsgf, terminator: "")
                return
            }
            let terms = try vocabulary.snapshot(pluginFolders: plugins.searchFolders).terms
            let sizes = [
                GrammarSize(context: "idle", catalog: catalog.inContext([]), vocabulary: terms),
                GrammarSize(context: "all", catalog: catalog, vocabulary: terms),
            ]
            if json {
                print(try jsonLine(["grammars": sizes]))
            } else {
                for size in sizes { print(size.description) }
            }
        }
    }

    /// The size of one grammar the recognizer searches.
    struct GrammarSize: Encodable, CustomStringConvertible {
        /// `idle`: without contextual intents; `all`: with every one.
        var context: String
        var intents: Int
        var states: Int
        var arcs: Int
        var words: Int
        /// Vocabulary types said as a phone loop (1,000 terms or more): their terms are not counted.
        var openSlots: [String]

        init(context: String, catalog: IntentCatalog, vocabulary: [String: [String]]) {
            openSlots = IntentCatalog.openSlots(vocabulary).map(\.type)
            let automaton = catalog.automaton(vocabulary: vocabulary, openTypes: Set(openSlots))
            self.context = context
            intents = catalog.intents.count
            states = automaton.stateCount
            arcs = automaton.arcs.count
            words = automaton.words.count
        }

        var description: String {
            let name = context == "idle" ? "nothing going on (no contextual intents)" : "every contextual intent active"
            let open = openSlots.isEmpty ? "" : "; open slots (a loop of phones): \(openSlots.joined(separator: ", "))"
            return "\(name): \(intents) intents, \(states) states, \(arcs) arcs, \(words) words\(open)"
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check intent files, templates and rules; report conflicts and words without pronunciation.",
            discussion: """
                A conflict is a phrase that two intents both accept: which one a user gets \
                would depend on ranking, not on what they meant. Exit status 1 when there \
                is an error or a conflict.

                Examples:
                  heed grammar check
                  heed grammar check --json --intents intents --intents intents/examples/coffee.json
                """
        )

        @OptionGroup var intents: IntentOptions

        @Option(help: ArgumentHelp("The pronunciation dictionary that grammar words are looked up in.", valueName: "file"))
        var dictionary = PocketSphinxRecognizer.Configuration.default.dictionaryPath

        @Flag(help: "Print one JSON object.")
        var json = false

        func run() throws {
            let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
            let conflicts = catalog.conflicts()
            var problems = conflicts.map(\.description)
            do {
                _ = try RecognitionSetup(catalog: catalog, dictionaryPath: dictionary)
            } catch let error as SourceError {
                problems.append(error.description)
            }
            let compiled = catalog.grammar()
            if json {
                print(try jsonLine(Report(intents: catalog.intents.count, words: compiled.words.count, conflicts: conflicts.map(\.description), problems: problems)))
            } else {
                print("\(catalog.intents.count) intents, \(compiled.words.count) words, \(conflicts.count) conflicts")
                for problem in problems { print(problem) }
            }
            if !problems.isEmpty { throw ExitCode.failure }
        }

        private struct Report: Encodable {
            var intents: Int
            var words: Int
            var conflicts: [String]
            var problems: [String]
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that sentences parse to the intents and values their test files say.",
            discussion: """
                A test file (intents/tests/*.json) lists sentences with the intent and parameter \
                values each must give — the practice Home Assistant uses for its intents: \
                {"tests": [{"sentences": ["ten minute timer"], "intent": "setTimer", \
                "parameters": {"duration": 600}}]}. Durations are in seconds, ordinals are \
                positions or "last"; "intent": null means no intent may match; an optional \
                "response" is compared with the intent's success response; a file's \
                "vocabulary" registers terms for its sentences. Every failure is reported with \
                the sentence's file:line:column, what was expected and what was parsed; the exit \
                status is 1 on any failure, and on an unknown intent, parameter or a value of \
                the wrong type in a test file.

                Examples:
                  heed grammar test
                  heed grammar test --tests plugins/myapp/tests --intents intents --intents plugins/myapp/intents
                  heed grammar test --json
                """
        )

        @OptionGroup var intents: IntentOptions

        @Option(
            name: .customLong("tests"),
            help: ArgumentHelp("Test files: a folder of *.json files or one file (repeatable; default: intents/tests).", valueName: "path"))
        var tests: [String] = []

        @Flag(help: "Print one JSON object: counts by intent and every failure.")
        var json = false

        func run() throws {
            let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
            let paths = tests.isEmpty ? [IntentOptions.bundled("intents") + "/tests"] : tests
            var files: [URL] = []
            for path in paths {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                    throw ValidationError("no such file or folder: \(path)")
                }
                if isFolder.boolValue {
                    let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".json") }.sorted()
                    files += names.map { URL(fileURLWithPath: path).appendingPathComponent($0) }
                } else {
                    files.append(URL(fileURLWithPath: path))
                }
            }
            let loaded = try files.map { try IntentTestFile.load($0, catalog: catalog) }
            let report = IntentTestReport.run(loaded, catalog: catalog)
            if json {
                print(try jsonLine(Report(report, files: files.count)))
            } else {
                for failure in report.failures { print(failure) }
                let intents = report.countByIntent.keys.filter { $0 != IntentTestReport.noIntent }.count
                print("\(report.count) sentences in \(files.count) files, \(intents) intents: \(report.failures.count) failed")
            }
            if !report.failures.isEmpty { throw ExitCode.failure }
        }

        private struct Report: Encodable {
            struct Failure: Encodable {
                var location: String
                var sentence: String
                var expected: String
                var got: String
            }
            var files: Int
            var sentences: Int
            var sentencesByIntent: [String: Int]
            var failures: [Failure]

            init(_ report: IntentTestReport, files: Int) {
                self.files = files
                sentences = report.count
                sentencesByIntent = report.countByIntent
                failures = report.failures.map { Failure(location: "\($0.location)", sentence: $0.sentence, expected: $0.expected, got: $0.got) }
            }
        }
    }
}
