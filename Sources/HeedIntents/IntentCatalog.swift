import HeedCore
public import Foundation
import Synchronization

/// All intent definitions and rule files, checked and compiled: the one entry point of this module.
///
/// ```swift
/// let catalog = try IntentCatalog.load(intents: [URL(fileURLWithPath: "intents")],
///                                      grammars: [URL(fileURLWithPath: "grammars")])
/// catalog.parse("set a timer for ten minutes").first
/// // IntentMatch(intent: "setTimer", parameters: ["duration": .duration(seconds: 600)])
/// let grammar = catalog.grammar(vocabulary: ["playlistTitle": ["Morning Jazz"]])
/// ```
public struct IntentCatalog: Sendable {
    /// Every intent, files in the order given (a directory's files in name order), intents in file order.
    public let intents: [IntentDefinition]
    /// The user's rules followed by the built-in ones, references resolved to symbols.
    let rules: [LoadedRule]
    /// The parser of ``parse(_:)``, made by the first call. The hearing commands parse with
    /// ``parser(vocabulary:)`` instead; a listener keeps a catalog of every intent and makes one
    /// for what is going on, and a parser made for each would hold 0.4–0.5 MB for nothing
    /// (docs/MEASUREMENTS.md).
    private let defaultParser = ParserOnFirstUse()
    /// The automaton ``automaton(vocabulary:openTypes:)`` made last, and of what.
    let lastAutomaton = AutomatonOfLastUse()

    /// Loads and checks intent files and JSGF rule files.
    ///
    /// A directory stands for the `*.json` (intents) or `*.gram` (grammars) files directly in it,
    /// in name order; subdirectories such as `intents/examples` are not read. Rules are scoped by
    /// their file's `grammar NAME;`: a template refers to a rule as `<rule>` when one loaded grammar
    /// defines it, or as `<NAME.rule>`; a rule file's `<rule>` is its own rule first.
    /// - Parameters:
    ///   - intents: Intent files or directories of them.
    ///   - grammars: JSGF rule files or directories of them.
    /// - Returns: The catalog.
    /// - Throws: ``SourceError`` describing the first problem as `path:line:column: error: message`.
    public static func load(intents: [URL], grammars: [URL]) throws -> IntentCatalog {
        try IntentCatalog(
            intentSources: try read(intents, fileExtension: "json"),
            ruleSources: try read(grammars, fileExtension: "gram")
        )
    }

    /// Builds a catalog from file texts already in memory.
    /// - Parameters:
    ///   - intentSources: Intent file texts with the path to report in errors.
    ///   - ruleSources: Rule file texts with their paths.
    /// - Throws: ``SourceError`` describing the first problem.
    public init(intentSources: [(path: String, text: String)], ruleSources: [(path: String, text: String)] = []) throws {
        let files = try ruleSources.map { try RuleFileParser.parse(SourceText(path: $0.path, text: $0.text)) }
        let scope = try RuleScope(files: files)

        var intents: [IntentDefinition] = []
        for (path, text) in intentSources {
            let source = SourceText(path: path, text: text)
            for intent in try IntentFileReader.read(source, rules: scope) {
                if let first = intents.first(where: { $0.name == intent.name }) {
                    throw SourceError(.schema, "duplicate intent name '\(intent.name)' (first defined at \(first.location))", at: intent.location, in: source)
                }
                intents.append(intent)
            }
        }
        try scope.checkNoTags(
            usedBy: intents.flatMap { intent in
                intent.compiledTemplates.map(\.expansion) + intent.parameters.compactMap(\.phraseExpansion)
            }
        )
        self.init(intents: Self.sharingVocabularyCases(intents), rules: scope.rules)
    }

    /// The intents with each vocabulary type's fallback cases on every parameter of that type: a
    /// type's cases are declared once, on any one parameter ("mediaPlayer" on pauseMedia's
    /// `player`), and hold wherever the type is used.
    static func sharingVocabularyCases(_ intents: [IntentDefinition]) -> [IntentDefinition] {
        var cases: [String: [EnumerationCase]] = [:]
        for parameter in intents.flatMap(\.parameters) {
            if case .vocabulary(let type, let fallback) = parameter.type, !fallback.isEmpty, cases[type] == nil {
                cases[type] = fallback
            }
        }
        return intents.map { intent in
            var intent = intent
            for index in intent.parameters.indices {
                if case .vocabulary(let type, let fallback) = intent.parameters[index].type, fallback.isEmpty, let shared = cases[type] {
                    intent.parameters[index].type = .vocabulary(type: type, fallback: shared)
                }
            }
            return intent
        }
    }

    private init(intents: [IntentDefinition], rules: [LoadedRule]) {
        self.intents = intents
        self.rules = rules
    }

    /// A catalog that accepts only the answer to one parameter's prompt: the value alone.
    ///
    /// When resolution answers `needsValue`, ask the parameter's prompt, then recognize with this
    /// catalog's ``grammar(vocabulary:)`` and read the value from ``parse(_:)`` or ``parser(vocabulary:)``:
    /// its one intent has the original intent's name and the one template `{parameter}`.
    /// - Parameters:
    ///   - intent: The intent's name.
    ///   - parameter: The parameter's name.
    /// - Returns: The catalog, or `nil` when the intent or parameter does not exist.
    public func answerCatalog(intent: String, parameter: String) -> IntentCatalog? {
        guard var definition = self.intent(named: intent), let parameterDefinition = definition.parameter(named: parameter) else {
            return nil
        }
        definition.parameters = [parameterDefinition]
        definition.templates = ["{\(parameter)}"]
        definition.compiledTemplates = [
            Template(text: "{\(parameter)}", expansion: .slot(parameter, parameterDefinition.location), location: parameterDefinition.location)
        ]
        return IntentCatalog(intents: [definition], rules: rules)
    }

    private static func read(_ urls: [URL], fileExtension: String) throws -> [(path: String, text: String)] {
        var files: [URL] = []
        for url in urls {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                files += names.filter { $0.hasSuffix(".\(fileExtension)") }.sorted().map { url.appendingPathComponent($0) }
            } else {
                files.append(url)
            }
        }
        return try files.map { file in
            do {
                return (file.relativePath, try String(contentsOf: file, encoding: .utf8))
            } catch {
                let location = SourceLocation(path: file.relativePath, line: 1, column: 1)
                throw SourceError(.unreadableFile, "cannot read file: \(error.localizedDescription)", at: location, underlyingError: error)
            }
        }
    }

    /// The catalog as the listener uses it in a context: without the contextual intents
    /// (``IntentDefinition/isContextual``) that are not active now.
    /// - Parameter active: The contextual intents to keep: those an app with something going on handles.
    /// - Returns: The catalog without the other contextual intents; `self` when none is left out.
    public func inContext(_ active: Set<String>) -> IntentCatalog {
        let kept = intents.filter { !$0.isContextual || active.contains($0.name) }
        return kept.count == intents.count ? self : IntentCatalog(intents: kept, rules: rules)
    }

    /// The names of the contextual intents.
    public var contextualIntents: Set<String> { Set(intents.filter(\.isContextual).map(\.name)) }

    /// Looks up an intent by name.
    /// - Parameter name: The intent's name.
    /// - Returns: The intent, or `nil`.
    public func intent(named name: String) -> IntentDefinition? { intents.first { $0.name == name } }

    /// Compiles the JSGF grammar for the recognizer.
    /// - Parameter vocabulary: Registered terms by vocabulary type, most important first.
    /// - Returns: The grammar text and every word it uses with where the word comes from.
    public func grammar(vocabulary: [String: [String]] = [:]) -> CompiledGrammar {
        GrammarCompiler.compile(
            intents: intents,
            rules: RuleTable(rules: rules, intents: intents, vocabulary: vocabulary, symbolicVocabulary: false)
        )
    }

    /// Compiles a parser that also knows registered vocabulary.
    /// - Parameter vocabulary: Registered terms by vocabulary type.
    /// - Returns: A parser; compile it once per vocabulary change, not per sentence.
    public func parser(vocabulary: [String: [String]]) -> IntentParser {
        IntentParser(intents: intents, rules: rules, vocabulary: vocabulary)
    }

    /// Parses a sentence with no registered vocabulary (vocabulary slots accept only fallback cases).
    /// - Parameter text: What was said or typed.
    /// - Returns: The matches, best first; empty when nothing matches.
    public func parse(_ text: String) -> [IntentMatch] {
        let parser = defaultParser.parser.withLock { parser in
            if parser == nil { parser = self.parser(vocabulary: [:]) }
            return parser!
        }
        return parser.parse(text)
    }

    /// Finds phrases that templates of two different intents both accept.
    /// - Returns: The conflicts in catalog order; empty when every phrase has one intent.
    public func conflicts() -> [IntentConflict] { ConflictChecker.conflicts(intents: intents, rules: rules) }
}

/// Where a catalog keeps the parser its first ``IntentCatalog/parse(_:)`` makes; its copies share it.
private final class ParserOnFirstUse: Sendable {
    let parser = Mutex<IntentParser?>(nil)
}

/// Where a catalog keeps the last automaton ``IntentCatalog/automaton(vocabulary:openTypes:)``
/// made; its copies share it. With the large vocabulary types open (phone loops), a change of
/// their terms leaves the automaton as it was: the listener rebuilds its grammar for every such
/// change, and made it anew each time (a fifth of a rebuild with 10,000 titles, callgrind).
final class AutomatonOfLastUse: Sendable {
    struct Made: Sendable {
        /// The terms of the types that were not open.
        let closedVocabulary: [String: [String]]
        let openTypes: Set<String>
        let automaton: WordAutomaton
    }

    let made = Mutex<Made?>(nil)
}
