public import Foundation
import Glibc
import HeedCore
import HeedIntents
public import HeedPlugins
public import HeedSpeech

// MARK: - Limits and normalisation

/// The limits on registered vocabulary, in the spirit of SiriKit's `INVocabulary`.
public enum VocabularyLimits {
    /// The most terms one app may register for one vocabulary type.
    public static let maximumTermsPerType = 50_000
    /// The most characters of one term (after NFKC normalisation and collapsing white space).
    public static let maximumCharacters = 64
    /// The most spoken words of one term (after digits are spelled out: "Route 66" is three).
    public static let maximumWords = 8
}

/// How a registered term becomes the words the grammar and parser use.
///
/// 1. Unicode NFKC ("ﬁ" → "fi", full-width letters → ASCII), white space collapsed to single spaces.
/// 2. ``TextNormalizer/words(_:)``: lower case; punctuation dropped except an apostrophe inside a
///    word ("rock 'n' roll" → "rock n roll", "don't" stays); a hyphen separates words; numerals
///    spelled out ("Route 66" → "route sixty six", "2.5" → "two point five", "50%" → "fifty percent");
///    letters of every script kept ("Beyoncé" → "beyoncé").
///
/// Two terms with the same words are the same term. The text after step 1 is what is stored and
/// what the plugin receives as the slot's value.
public enum VocabularyNormalizer {
    /// Step 1: NFKC and white space.
    /// - Parameter text: A term as the user or app wrote it.
    /// - Returns: The text stored.
    public static func displayText(_ text: String) -> String {
        // ASCII is its own NFKC form and has only ASCII white space. Foundation's NFKC and the
        // white-space test of each character were a quarter of the time the listener took to read
        // 10,000 titles from the store (`perf record`).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return text.precomposedStringWithCompatibilityMapping
                .split(whereSeparator: { $0.isWhitespace || $0.isNewline })
                .joined(separator: " ")
        }
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count)
        for word in text.utf8.split(whereSeparator: isSpace) {
            if !result.isEmpty { result.append(0x20) }
            result.append(contentsOf: word)
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Both steps: the term's spoken words.
    /// - Parameter text: A term.
    /// - Returns: Lower-case words.
    public static func words(_ text: String) -> [String] {
        TextNormalizer.words(displayText(text))
    }

    /// The key two equal terms share: their words joined by spaces.
    public static func key(_ text: String) -> String { words(text).joined(separator: " ") }
}

// MARK: - Errors

/// Why a vocabulary change was refused. Every message names the app, the type and the term.
public struct VocabularyError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable {
            case appNotInstalled, undeclaredType, invalidTerm, termTooLong, tooManyWords, tooManyTerms
            case noPronunciation, unknownTerm, invalidOverride
        }

        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// No installed plugin has the app id.
        public static let appNotInstalled = Code(.appNotInstalled)
        /// The app's manifest does not declare the vocabulary type (`vocabularyTypes`).
        public static let undeclaredType = Code(.undeclaredType)
        /// The term is empty, has no words, or has a word that cannot be spoken as written ("R2D2").
        public static let invalidTerm = Code(.invalidTerm)
        /// The term is longer than ``VocabularyLimits/maximumCharacters``.
        public static let termTooLong = Code(.termTooLong)
        /// The term has more than ``VocabularyLimits/maximumWords`` words.
        public static let tooManyWords = Code(.tooManyWords)
        /// The type would have more than ``VocabularyLimits/maximumTermsPerType`` terms.
        public static let tooManyTerms = Code(.tooManyTerms)
        /// Neither the dictionary nor espeak-ng can pronounce a word of the term.
        public static let noPronunciation = Code(.noPronunciation)
        /// The term is not registered (remove, override).
        public static let unknownTerm = Code(.unknownTerm)
        /// A pronunciation override is malformed or uses a phone the model lacks.
        public static let invalidOverride = Code(.invalidOverride)

        public var description: String { "\(storage)" }
    }

    /// What kind of problem this is.
    public var code: Code
    /// The app concerned.
    public var appID: String
    /// The vocabulary type concerned, if any.
    public var type: String?
    /// The term concerned, if any.
    public var term: String?
    /// The whole message, ready to show.
    public var message: String
    /// The error that caused this one, if any.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, appID: String, type: String? = nil, term: String? = nil, _ message: String,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.appID = appID
        self.type = type
        self.term = term
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String { message }
}

// MARK: - Values

/// A user's pronunciation for a registered term.
public struct PronunciationOverride: Sendable, Hashable, Codable {
    /// How the pronunciation was given.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A spelling that sounds right ("zeer tek"), pronounced like any other words.
        case soundsLike
        /// ARPAbet phones ("Z IH R T EH K").
        case phones
    }

    /// How the pronunciation was given.
    public var kind: Kind
    /// What the user wrote; `|` separates the words of a multi-word term.
    public var text: String
    /// The phones of each word of the term, in order.
    public var phones: [[String]]
}

/// One app's terms of one vocabulary type, as ``VocabularyStore/entries(app:type:)`` lists them.
public struct VocabularyEntry: Sendable, Hashable, Codable {
    /// The app id.
    public var appID: String
    /// The vocabulary type.
    public var type: String
    /// The terms, most important first.
    public var terms: [String]
    /// Pronunciation overrides by term.
    public var overrides: [String: PronunciationOverride]

    enum CodingKeys: String, CodingKey {
        case appID = "appId"
        case type, terms, overrides
    }
}

/// What a change did.
public struct VocabularyChange: Sendable, Hashable, Codable {
    /// The terms added (set, add) or removed (remove, clear), as stored.
    public var changed: [String]
    /// Terms left alone: already registered (add), or repeated in the input (set).
    public var unchanged: [String]
    /// How many terms the type (or, for clear, the app) has now.
    public var count: Int
}

/// Identifies one version of the vocabulary file without reading it: the file's inode, size and
/// modification time (`stat(2)`). Every write renames a new file into place, so every change gives
/// a new stamp; a listener compares stamps (a few microseconds) and re-reads only on a difference.
public struct VocabularyChangeStamp: Sendable, Hashable, Codable {
    /// The inode; 0 when the file does not exist.
    public var inode: UInt64
    /// The size in bytes.
    public var size: Int64
    /// The modification time in nanoseconds since 1970.
    public var modified: Int64
}

/// Everything the recognizer and parser need from the registered vocabulary.
public struct VocabularySnapshot: Sendable, Hashable {
    /// Terms by vocabulary type, for the grammar and the parser (`RecognitionSetup`): the
    /// installed apps in app-id order, each app's terms most important first.
    public var terms: [String: [String]]
    /// The pronunciation of every word of every term.
    public var pronunciations: [String: Pronunciation]
    /// For `PocketSphinxRecognizer.Configuration.additionalPronunciations` and the grammar's
    /// check of its words: the overrides (which win over the dictionary) and espeak-ng's
    /// guesses for words the dictionary lacks.
    public var additionalPronunciations: [String: [String]]
    /// The file version this was read from.
    public var stamp: VocabularyChangeStamp

    /// Creates a snapshot; a store makes them (``VocabularyStore/snapshot()``), tests too.
    public init(
        terms: [String: [String]], pronunciations: [String: Pronunciation] = [:], additionalPronunciations: [String: [String]] = [:],
        stamp: VocabularyChangeStamp = .missing
    ) {
        self.terms = terms
        self.pronunciations = pronunciations
        self.additionalPronunciations = additionalPronunciations
        self.stamp = stamp
    }

    /// An empty snapshot.
    public static let empty = VocabularySnapshot(terms: [:], pronunciations: [:], additionalPronunciations: [:], stamp: .missing)

    /// The number of terms of all types.
    public var termCount: Int { terms.values.reduce(0) { $0 + $1.count } }
}

extension VocabularyChangeStamp {
    /// The stamp of a file that does not exist.
    public static let missing = VocabularyChangeStamp(inode: 0, size: 0, modified: 0)
}

// MARK: - The state file

/// `vocabulary.json` in the data folder.
///
/// ```json
/// {
///   "apps": {
///     "org.heed.media": {
///       "playlistTitle": {
///         "overrides": { "quixotiq": { "kind": "soundsLike", "phones": [["K", "W", "IH", "K", "S", "AH", "T", "IH", "K"]], "text": "quick so tick" } },
///         "terms": ["Road Trip Classics", "Morning Jazz", "Quixotiq"]
///       }
///     }
///   },
///   "generation": 3,
///   "version": 1
/// }
/// ```
struct VocabularyState: StateFileContent, Equatable {
    struct TypeEntry: Equatable, Encodable {
        var terms: [String] = []
        /// By term key (``VocabularyNormalizer/key(_:)``).
        var overrides: [String: PronunciationOverride] = [:]
    }

    static let currentVersion = 1

    /// Counts writes.
    var generation = 0
    var apps: [String: [String: TypeEntry]] = [:]

    init() {}

    init(from root: JSONNode, reader: JSONSchemaReader) throws {
        let object = try reader.object(root, "the vocabulary state", allowedKeys: ["version", "generation", "apps"])
        if let node = object["version"] {
            let version = try reader.number(node, "'version'")
            guard version == Double(Self.currentVersion) else {
                throw reader.error("version \(version) is not one this Heed reads (it reads version \(Self.currentVersion))", at: node.location)
            }
        }
        if let node = object["generation"] { generation = try reader.integer(node, "'generation'", in: 0...(1 << 52)) }
        guard let appsNode = object["apps"] else { return }
        guard case .object(let appMembers) = appsNode.kind else {
            throw reader.error("expected 'apps' (an object of app ids), found \(appsNode.kindName)", at: appsNode.location)
        }
        for app in appMembers {
            guard PluginManifest.isReverseDNS(app.key) else {
                throw reader.error("'\(app.key)' is not an app id in reverse-DNS form", at: app.keyLocation)
            }
            guard case .object(let typeMembers) = app.value.kind else {
                throw reader.error("expected the vocabulary of \(app.key) (an object of types), found \(app.value.kindName)", at: app.value.location)
            }
            var types: [String: TypeEntry] = [:]
            for type in typeMembers {
                let entryObject = try reader.object(type.value, "the \(type.key) vocabulary of \(app.key)", allowedKeys: ["terms", "overrides"])
                var entry = TypeEntry()
                entry.terms = try entryObject.optionalArray("terms").map { try reader.string($0, "a term") }
                if let overridesNode = entryObject["overrides"] {
                    guard case .object(let members) = overridesNode.kind else {
                        throw reader.error("expected 'overrides' (an object of terms), found \(overridesNode.kindName)", at: overridesNode.location)
                    }
                    for member in members {
                        let override = try reader.object(member.value, "the override of '\(member.key)'", allowedKeys: ["kind", "text", "phones"])
                        let kindNode = try override.required("kind")
                        guard let kind = PronunciationOverride.Kind(rawValue: try reader.string(kindNode, "'kind'")) else {
                            throw reader.error("'kind' must be 'soundsLike' or 'phones'", at: kindNode.location)
                        }
                        var phones: [[String]] = []
                        for wordNode in try override.array("phones") {
                            let word = try reader.array(wordNode, "the phones of a word").map { try reader.string($0, "a phone") }
                            for phone in word where !GraphemeToPhoneme.phoneSet.contains(phone) {
                                throw reader.error("'\(phone)' is not a phone of the en-us model", at: wordNode.location)
                            }
                            phones.append(word)
                        }
                        entry.overrides[member.key] = PronunciationOverride(kind: kind, text: try override.string("text"), phones: phones)
                    }
                }
                types[type.key] = entry
            }
            apps[app.key] = types
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(Self.currentVersion, forKey: .version)
        try container.encode(generation, forKey: .generation)
        try container.encode(apps, forKey: .apps)
    }

    private enum Key: String, CodingKey { case version, generation, apps }
}

// MARK: - The store

/// Registered vocabulary with `INVocabulary` semantics: per app and per vocabulary type, an
/// ordered list of terms, most important first.
///
/// - ``set(_:type:app:)`` replaces the type's whole list; ``add(_:type:app:)`` appends the terms
///   not there yet, in order; ``remove(_:type:app:)`` takes terms out; ``clear(app:)`` removes all
///   of an app's vocabulary.
/// - Only installed apps (``manifests``), and only the types their manifest declares in
///   `vocabularyTypes`, may register. Terms are normalised (``VocabularyNormalizer``) and limited
///   (``VocabularyLimits``); every word must be pronounceable (dictionary, else espeak-ng).
/// - The terms live in `vocabulary.json` in the data folder, written like every state file of
///   Heed: a locked, atomic read-modify-write, so parallel writers never lose a change, and a
///   corrupt file is reported, never replaced.
/// - A running listener calls ``changeStamp()`` (one `stat(2)`) and rebuilds with
///   ``snapshot()`` when the stamp differs from its snapshot's ``VocabularySnapshot/stamp``.
public struct VocabularyStore: Sendable {
    /// The folder holding `vocabulary.json`.
    public let dataDirectory: URL
    /// The installed plugins.
    public let manifests: [PluginManifest]
    /// The dictionary words are looked up in.
    public let dictionaryPath: String

    /// The name of the state file inside the data folder.
    public static let fileName = "vocabulary.json"

    let file: StateFile<VocabularyState>

    /// Creates a store.
    /// - Parameters:
    ///   - dataDirectory: The folder for `vocabulary.json` (``HeedConfiguration/dataDirectory``).
    ///   - manifests: The installed plugins (`PluginCatalog.discover(in:)`).
    ///   - dictionaryPath: The CMU-format dictionary the recognizer uses.
    public init(
        dataDirectory: URL, manifests: [PluginManifest],
        dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath
    ) {
        self.dataDirectory = dataDirectory
        self.manifests = manifests
        self.dictionaryPath = dictionaryPath
        self.file = StateFile(url: dataDirectory.appendingPathComponent(Self.fileName))
    }

    /// The state file's path.
    public var stateFile: URL { file.url }

    // MARK: Changing

    /// Replaces the whole list of a type. An empty list removes the type.
    ///
    /// Terms repeated in `terms` (the same words) are kept once, at their first place. Overrides
    /// of terms no longer in the list are dropped.
    /// - Returns: The stored list as ``VocabularyChange/changed``, repeats as `unchanged`.
    /// - Throws: ``VocabularyError`` (nothing is written), ``SourceError`` for a corrupt file, ``StateFileError``.
    @discardableResult
    public func set(_ terms: [String], type: String, app: String) throws -> VocabularyChange {
        try checkDeclared(type: type, app: app)
        let (checked, repeats) = try validate(terms, type: type, app: app)
        try checkCount(checked.count, type: type, app: app)
        return try file.update { state in
            var entry = state.apps[app]?[type] ?? .init()
            entry.terms = checked.map(\.text)
            let keys = Set(checked.map(\.key))
            entry.overrides = entry.overrides.filter { keys.contains($0.key) }
            store(entry, type: type, app: app, in: &state)
            return VocabularyChange(changed: entry.terms, unchanged: repeats, count: entry.terms.count)
        }
    }

    /// Appends the terms that are not registered yet, keeping their order.
    /// - Returns: The terms added, and those already there.
    /// - Throws: ``VocabularyError`` (nothing is written), ``SourceError``, ``StateFileError``.
    @discardableResult
    public func add(_ terms: [String], type: String, app: String) throws -> VocabularyChange {
        try checkDeclared(type: type, app: app)
        let (checked, repeats) = try validate(terms, type: type, app: app)
        return try file.update { state in
            var entry = state.apps[app]?[type] ?? .init()
            var keys = Set(entry.terms.map(VocabularyNormalizer.key))
            var added: [String] = []
            var unchanged = repeats
            for term in checked {
                if keys.insert(term.key).inserted {
                    added.append(term.text)
                } else {
                    unchanged.append(term.text)
                }
            }
            try checkCount(entry.terms.count + added.count, type: type, app: app)
            entry.terms += added
            store(entry, type: type, app: app, in: &state)
            return VocabularyChange(changed: added, unchanged: unchanged, count: entry.terms.count)
        }
    }

    /// Removes terms (matched by their words: "morning JAZZ!" removes "Morning Jazz") and their overrides.
    /// - Returns: The terms removed, as stored.
    /// - Throws: ``VocabularyError`` `unknownTerm` when a term is not registered (nothing is removed),
    ///   ``SourceError``, ``StateFileError``.
    @discardableResult
    public func remove(_ terms: [String], type: String, app: String) throws -> VocabularyChange {
        try checkKnownApp(app)
        return try file.update { state in
            var entry = state.apps[app]?[type] ?? .init()
            var removed: [String] = []
            for term in terms {
                let key = VocabularyNormalizer.key(term)
                guard let index = entry.terms.firstIndex(where: { VocabularyNormalizer.key($0) == key }) else {
                    throw VocabularyError(
                        .unknownTerm, appID: app, type: type, term: term,
                        "\(app) \(type) '\(term)': the term is not registered; nothing was removed")
                }
                removed.append(entry.terms.remove(at: index))
                entry.overrides[key] = nil
            }
            store(entry, type: type, app: app, in: &state)
            return VocabularyChange(changed: removed, unchanged: [], count: entry.terms.count)
        }
    }

    /// Removes all of an app's vocabulary, of every type. The app need not be installed any more.
    /// - Returns: The terms removed.
    /// - Throws: ``VocabularyError`` `appNotInstalled` when the app is neither installed nor has
    ///   vocabulary, ``SourceError``, ``StateFileError``.
    @discardableResult
    public func clear(app: String) throws -> VocabularyChange {
        if manifest(app) == nil, try file.read().apps[app] == nil { try checkKnownApp(app) }
        return try file.update { state in
            let removed = (state.apps[app] ?? [:]).sorted { $0.key < $1.key }.flatMap { $0.value.terms }
            if state.apps.removeValue(forKey: app) != nil { state.generation += 1 }
            return VocabularyChange(changed: removed, unchanged: [], count: 0)
        }
    }

    /// Sets how a registered term is pronounced.
    ///
    /// `text` gives one group per word of the term, separated by `|` ("quick so tick | radio").
    /// Without `|`, a one-word term takes the whole text, and a sounds-like spelling with as many
    /// words as the term gives one word to each.
    /// - Parameters:
    ///   - kind: A sounds-like spelling (pronounced with the dictionary, else espeak-ng) or ARPAbet phones.
    ///   - text: The spelling or the phones.
    ///   - term: A registered term.
    ///   - type: Its vocabulary type.
    ///   - app: Its app.
    /// - Returns: The override stored.
    /// - Throws: ``VocabularyError`` (`unknownTerm`, `invalidOverride`, `noPronunciation`), ``SourceError``, ``StateFileError``.
    @discardableResult
    public func setOverride(_ kind: PronunciationOverride.Kind, _ text: String, term: String, type: String, app: String) throws -> PronunciationOverride {
        try checkDeclared(type: type, app: app)
        let termWords = VocabularyNormalizer.words(term)
        let key = termWords.joined(separator: " ")
        func refuse(_ message: String, _ code: VocabularyError.Code = .invalidOverride) -> VocabularyError {
            VocabularyError(code, appID: app, type: type, term: term, "\(app) \(type) '\(term)': \(message)")
        }
        var groups = text.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmed }
        if groups.count == 1, termWords.count > 1 {
            let spelled = kind == .soundsLike ? VocabularyNormalizer.words(text) : []
            guard spelled.count == termWords.count else {
                throw refuse(
                    "the term has \(termWords.count) words (\(termWords.joined(separator: ", "))): give one pronunciation per word, separated by '|'")
            }
            groups = spelled
        }
        guard groups.count == termWords.count, groups.allSatisfy({ !$0.isEmpty }) else {
            throw refuse("expected \(termWords.count) pronunciation(s) separated by '|' (one per word: \(termWords.joined(separator: ", "))), found \(groups.count)")
        }
        var phones: [[String]] = []
        switch kind {
        case .phones:
            for group in groups {
                do {
                    phones.append(try GraphemeToPhoneme.validatePhones(group))
                } catch let error as PronunciationError {
                    throw refuse(error.message)
                }
            }
        case .soundsLike:
            let pronouncer = Pronouncer(dictionaryPath: dictionaryPath)
            let spelledWords = groups.map { VocabularyNormalizer.words($0) }
            let known = try pronouncer.pronunciations(Set(spelledWords.flatMap { $0 }))
            for words in spelledWords {
                guard !words.isEmpty else { throw refuse("the spelling has no words") }
                var wordPhones: [String] = []
                for word in words {
                    guard let pronunciation = known[word] else {
                        throw refuse("no pronunciation for '\(word)' in the spelling", .noPronunciation)
                    }
                    wordPhones += pronunciation.phones
                }
                phones.append(wordPhones)
            }
        }
        let override = PronunciationOverride(kind: kind, text: text, phones: phones)
        try file.update { state in
            guard var entry = state.apps[app]?[type], entry.terms.contains(where: { VocabularyNormalizer.key($0) == key }) else {
                throw refuse("the term is not registered; register it first with heed vocab add", .unknownTerm)
            }
            entry.overrides[key] = override
            store(entry, type: type, app: app, in: &state)
        }
        return override
    }

    /// Removes a term's pronunciation override.
    /// - Returns: Whether there was one.
    /// - Throws: ``SourceError``, ``StateFileError``.
    @discardableResult
    public func removeOverride(term: String, type: String, app: String) throws -> Bool {
        let key = VocabularyNormalizer.key(term)
        guard try file.read().apps[app]?[type]?.overrides[key] != nil else { return false }
        return try file.update { state in
            guard var entry = state.apps[app]?[type], entry.overrides.removeValue(forKey: key) != nil else { return false }
            store(entry, type: type, app: app, in: &state)
            return true
        }
    }

    // MARK: Reading

    /// The registered vocabulary, sorted by app id and type.
    /// - Parameters:
    ///   - app: Only this app.
    ///   - type: Only this type.
    /// - Returns: One entry per app and type.
    /// - Throws: ``SourceError`` when the file is corrupt.
    public func entries(app: String? = nil, type: String? = nil) throws -> [VocabularyEntry] {
        let state = try file.read()
        var result: [VocabularyEntry] = []
        for (appID, types) in state.apps.sorted(by: { $0.key < $1.key }) where app == nil || app == appID {
            for (name, entry) in types.sorted(by: { $0.key < $1.key }) where type == nil || type == name {
                result.append(VocabularyEntry(appID: appID, type: name, terms: entry.terms, overrides: entry.overrides))
            }
        }
        return result
    }

    /// One type's terms, most important first.
    /// - Throws: ``SourceError`` when the file is corrupt.
    public func terms(type: String, app: String) throws -> [String] {
        try file.read().apps[app]?[type]?.terms ?? []
    }

    /// How each word of `text` is pronounced: a registered override, else the dictionary, else espeak-ng.
    /// - Parameter text: A term or any words.
    /// - Returns: One pronunciation per word; a word nothing can pronounce is left out.
    /// - Throws: ``SourceError`` for a corrupt file, ``RecognizerError`` when the dictionary cannot be read.
    public func pronounce(_ text: String) throws -> [Pronunciation] {
        let words = VocabularyNormalizer.words(text)
        let overrides = try overridesByWord(try file.read(), installedOnly: false)
        let known = try Pronouncer(dictionaryPath: dictionaryPath).pronunciations(Set(words))
        return words.compactMap { word in
            if let override = overrides[word]?.first { return Pronunciation(word: word, phones: override, source: .override) }
            return known[word]
        }
    }

    /// The file's current stamp: one `stat(2)`, no read.
    public func changeStamp() -> VocabularyChangeStamp {
        var info = stat()
        guard stat(file.url.path, &info) == 0 else { return .missing }
        return VocabularyChangeStamp(
            inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// Whether the file changed since a snapshot was taken.
    public func hasChanged(since snapshot: VocabularySnapshot) -> Bool { changeStamp() != snapshot.stamp }

    /// What the recognizer and parser need: the installed apps' terms of their declared types, and
    /// pronunciations for their words (overrides, and guesses for words the dictionary lacks).
    ///
    /// Vocabulary of apps that are no longer installed, or of types their manifest no longer
    /// declares, stays in the file but is left out.
    /// - Returns: The snapshot.
    /// - Throws: ``SourceError`` for a corrupt file, ``RecognizerError`` when the dictionary cannot be read.
    public func snapshot() throws -> VocabularySnapshot {
        let stamp = changeStamp()
        let state = try file.read()
        var terms: [String: [String]] = [:]
        var words: Set<String> = []
        for manifest in manifests.sorted(by: { $0.appID < $1.appID }) {
            for (type, entry) in state.apps[manifest.appID] ?? [:] where manifest.vocabularyTypes.contains(type) {
                terms[type, default: []] += entry.terms
                for term in entry.terms { words.formUnion(VocabularyNormalizer.words(term)) }
            }
        }
        guard !words.isEmpty else { return VocabularySnapshot(terms: terms, pronunciations: [:], additionalPronunciations: [:], stamp: stamp) }
        let overrides = try overridesByWord(state, installedOnly: true)
        let known = try Pronouncer(dictionaryPath: dictionaryPath).pronunciations(words)
        var pronunciations: [String: Pronunciation] = [:]
        var additional: [String: [String]] = [:]
        for word in words {
            if let variants = overrides[word] {
                pronunciations[word] = Pronunciation(word: word, phones: variants[0], source: .override)
                additional[word] = variants.map { $0.joined(separator: " ") }
            } else if let pronunciation = known[word] {
                pronunciations[word] = pronunciation
                if pronunciation.source == .guess { additional[word] = [pronunciation.phoneString] }
            }
        }
        return VocabularySnapshot(terms: terms, pronunciations: pronunciations, additionalPronunciations: additional, stamp: stamp)
    }

    // MARK: Checks

    private struct CheckedTerm {
        var text: String
        var key: String
    }

    private func manifest(_ app: String) -> PluginManifest? { manifests.first { $0.appID == app } }

    private func checkKnownApp(_ app: String) throws {
        guard manifest(app) != nil else {
            let installed = manifests.map(\.appID).sorted()
            throw VocabularyError(
                .appNotInstalled, appID: app,
                "'\(app)' is not an installed app"
                    + (installed.isEmpty ? " (no plugins were found)" : "; installed: \(installed.joined(separator: ", "))"))
        }
    }

    private func checkDeclared(type: String, app: String) throws {
        try checkKnownApp(app)
        guard let manifest = manifest(app), manifest.vocabularyTypes.contains(type) else {
            let declared = manifest(app)?.vocabularyTypes ?? []
            throw VocabularyError(
                .undeclaredType, appID: app, type: type,
                "\(app) does not declare the vocabulary type '\(type)' in its plugin.json"
                    + (declared.isEmpty ? " (it declares none)" : "; it declares: \(declared.joined(separator: ", "))"))
        }
    }

    private func checkCount(_ count: Int, type: String, app: String) throws {
        guard count <= VocabularyLimits.maximumTermsPerType else {
            throw VocabularyError(
                .tooManyTerms, appID: app, type: type,
                "\(app) \(type): \(count) terms is more than the limit of \(VocabularyLimits.maximumTermsPerType) per type; nothing was changed")
        }
    }

    /// Normalises and checks terms: limits, words, pronunciations. Repeats are returned apart.
    private func validate(_ terms: [String], type: String, app: String) throws -> (terms: [CheckedTerm], repeats: [String]) {
        var checked: [CheckedTerm] = []
        var repeats: [String] = []
        var keys: Set<String> = []
        var allWords: Set<String> = []
        func refuse(_ code: VocabularyError.Code, _ term: String, _ message: String) -> VocabularyError {
            VocabularyError(code, appID: app, type: type, term: term, "\(app) \(type) '\(term)': \(message)")
        }
        for raw in terms {
            let text = VocabularyNormalizer.displayText(raw)
            guard !text.isEmpty else { throw refuse(.invalidTerm, raw, "a term must not be empty") }
            guard text.count <= VocabularyLimits.maximumCharacters else {
                throw refuse(.termTooLong, raw, "\(text.count) characters is more than the limit of \(VocabularyLimits.maximumCharacters)")
            }
            let words = TextNormalizer.words(text)
            guard !words.isEmpty else { throw refuse(.invalidTerm, raw, "the term has no words (only punctuation)") }
            if let word = words.first(where: { $0.contains(where: \.isNumber) }) {
                throw refuse(
                    .invalidTerm, raw,
                    "'\(word)' mixes digits and letters or is too large a number to spell out; write it as it is said (e.g. 'R2D2' as 'R two D two')")
            }
            guard words.count <= VocabularyLimits.maximumWords else {
                throw refuse(.tooManyWords, raw, "\(words.count) words is more than the limit of \(VocabularyLimits.maximumWords)")
            }
            let key = words.joined(separator: " ")
            if keys.insert(key).inserted {
                checked.append(CheckedTerm(text: text, key: key))
                allWords.formUnion(words)
            } else {
                repeats.append(text)
            }
        }
        let known = try Pronouncer(dictionaryPath: dictionaryPath).pronunciations(allWords)
        if allWords.count != known.count {
            for term in checked {
                if let word = term.key.split(separator: " ").map(String.init).first(where: { known[$0] == nil }) {
                    throw refuse(
                        .noPronunciation, term.text,
                        "neither the dictionary nor espeak-ng can pronounce '\(word)'; register it spelled as it sounds")
                }
            }
        }
        return (checked, repeats)
    }

    private func store(_ entry: VocabularyState.TypeEntry, type: String, app: String, in state: inout VocabularyState) {
        if entry.terms.isEmpty {
            state.apps[app]?[type] = nil
            if state.apps[app]?.isEmpty == true { state.apps[app] = nil }
        } else {
            state.apps[app, default: [:]][type] = entry
        }
        state.generation += 1
    }

    /// Every word's override variants, from the overrides of every term that has the word.
    private func overridesByWord(_ state: VocabularyState, installedOnly: Bool) throws -> [String: [[String]]] {
        var result: [String: [[String]]] = [:]
        for (appID, types) in state.apps.sorted(by: { $0.key < $1.key }) {
            let manifest = manifest(appID)
            if installedOnly, manifest == nil { continue }
            for (type, entry) in types.sorted(by: { $0.key < $1.key }) {
                if installedOnly, manifest?.vocabularyTypes.contains(type) != true { continue }
                for (key, override) in entry.overrides.sorted(by: { $0.key < $1.key }) {
                    for (word, phones) in zip(key.split(separator: " ").map(String.init), override.phones)
                    where !(result[word]?.contains(phones) ?? false) {
                        result[word, default: []].append(phones)
                    }
                }
            }
        }
        return result
    }
}
