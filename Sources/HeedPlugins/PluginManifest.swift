public import Foundation
public import HeedCore

/// A plugin's `plugin.json`: who it is, what it runs and which intents it handles.
///
/// ```json
/// {
///   "appId": "org.heed.timer",
///   "displayName": "Timers",
///   "usageDescription": "Sets kitchen timers and tells you when they end.",
///   "executable": "heed-plugin-timer",
///   "arguments": [],
///   "intents": ["setTimer", "cancelTimer", "timeRemaining"],
///   "vocabularyTypes": ["timerLabel"],
///   "spokenResponseMode": "spokenAudio"
/// }
/// ```
public struct PluginManifest: Sendable, Hashable {
    /// Whether the app wants its responses spoken, as Apple's preferred microphone-injection
    /// mode: `spokenAudio` (the default) or `none`. The user's speech permission and the
    /// config's service switch still decide; an app can only ask for less.
    public enum SpokenResponseMode: String, Sendable, Hashable, CaseIterable {
        /// Responses are shown, never spoken.
        case none
        /// Responses are spoken when the service is on and the user allows it.
        case spokenAudio
    }

    /// The app id in reverse-DNS form, e.g. `org.heed.timer`.
    public var appID: String
    /// The name users see ("Timers").
    public var displayName: String
    /// Why the plugin wants to handle the user's commands, shown when Heed asks for authorization.
    /// A plugin without one loads, but the authorization step refuses it.
    public var usageDescription: String?
    /// The executable as written: a bare name or a path (see ``executableURL(productsDirectory:)``).
    public var executable: String
    /// Arguments passed to the executable.
    public var arguments: [String]
    /// The intents the plugin handles, never empty.
    public var intents: [String]
    /// The vocabulary types the plugin registers strings for (`playlistTitle`).
    public var vocabularyTypes: [String]
    /// The app id of the app this plugin extends; it shares that app's authorization.
    public var extensionOf: String?
    /// Whether the app wants its responses spoken.
    public var spokenResponseMode: SpokenResponseMode
    /// The folder that holds `plugin.json`; relative executable paths start here.
    public var directory: URL

    /// Creates a manifest in code (tests, built-in plugins).
    public init(
        appID: String,
        displayName: String,
        usageDescription: String? = nil,
        executable: String,
        arguments: [String] = [],
        intents: [String],
        vocabularyTypes: [String] = [],
        extensionOf: String? = nil,
        spokenResponseMode: SpokenResponseMode = .spokenAudio,
        directory: URL
    ) {
        self.spokenResponseMode = spokenResponseMode
        self.appID = appID
        self.displayName = displayName
        self.usageDescription = usageDescription
        self.executable = executable
        self.arguments = arguments
        self.intents = intents
        self.vocabularyTypes = vocabularyTypes
        self.extensionOf = extensionOf
        self.directory = directory
    }

    /// The file name of a manifest inside a plugin directory.
    public static let fileName = "plugin.json"

    static let keys: Set<String> = [
        "appId", "displayName", "usageDescription", "executable", "arguments", "intents", "vocabularyTypes",
        "extensionOf", "spokenResponseMode",
    ]

    /// Loads and validates a manifest file.
    /// - Parameter url: The `plugin.json` file.
    /// - Returns: The manifest.
    /// - Throws: ``SourceError`` located at the offending spot: `unreadableFile`, `jsonSyntax` or `schema`.
    public static func load(from url: URL) throws -> PluginManifest {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SourceError(
                .unreadableFile, "cannot read the plugin manifest: \(error.localizedDescription)",
                at: SourceLocation(path: url.path, line: 1, column: 1), underlyingError: error)
        }
        return try parse(SourceText(path: url.path, text: text), directory: url.deletingLastPathComponent())
    }

    /// Parses and validates manifest text.
    /// - Parameters:
    ///   - source: The file's text and path.
    ///   - directory: The folder holding the file.
    /// - Returns: The manifest.
    /// - Throws: ``SourceError`` located at the offending spot.
    public static func parse(_ source: SourceText, directory: URL) throws -> PluginManifest {
        let reader = JSONSchemaReader(source: source)
        let root = try LocatedJSONParser.parse(source)
        let object = try reader.object(root, "a plugin manifest", allowedKeys: keys)

        let appIDNode = try object.required("appId")
        let appID = try reader.string(appIDNode, "'appId'")
        guard isReverseDNS(appID) else {
            throw reader.error(
                "'appId' must be in reverse-DNS form such as 'org.example.timer', found '\(appID)'",
                at: appIDNode.location)
        }
        let displayNameNode = try object.required("displayName")
        let displayName = try reader.string(displayNameNode, "'displayName'")
        guard !displayName.trimmed.isEmpty else {
            throw reader.error("'displayName' must not be empty", at: displayNameNode.location)
        }
        let usageNode = object["usageDescription"]
        let usageDescription = try object.optionalString("usageDescription")
        if let usageNode, usageDescription?.trimmed.isEmpty == true {
            throw reader.error("'usageDescription' must not be empty; leave the key out instead", at: usageNode.location)
        }
        let executableNode = try object.required("executable")
        let executable = try reader.string(executableNode, "'executable'")
        guard !executable.isEmpty else { throw reader.error("'executable' must not be empty", at: executableNode.location) }

        let arguments = try object.optionalArray("arguments").map { try reader.string($0, "an argument") }
        let intentsNode = try object.required("intents")
        let intentNodes = try reader.array(intentsNode, "'intents'")
        guard !intentNodes.isEmpty else {
            throw reader.error("'intents' must name at least one intent", at: intentsNode.location)
        }
        var intents: [String] = []
        for node in intentNodes {
            let name = try reader.string(node, "an intent name")
            guard isIdentifier(name) else {
                throw reader.error("'\(name)' is not an intent name (letters and digits, starting with a letter)", at: node.location)
            }
            guard !intents.contains(name) else { throw reader.error("intent '\(name)' is listed twice", at: node.location) }
            intents.append(name)
        }
        var vocabularyTypes: [String] = []
        for node in try object.optionalArray("vocabularyTypes") {
            let name = try reader.string(node, "a vocabulary type")
            guard isIdentifier(name) else {
                throw reader.error("'\(name)' is not a vocabulary type name", at: node.location)
            }
            vocabularyTypes.append(name)
        }
        var extensionOf: String?
        if let node = object["extensionOf"] {
            let parent = try reader.string(node, "'extensionOf'")
            guard isReverseDNS(parent) else {
                throw reader.error("'extensionOf' must be an app id in reverse-DNS form, found '\(parent)'", at: node.location)
            }
            guard parent != appID else { throw reader.error("a plugin cannot extend itself", at: node.location) }
            extensionOf = parent
        }
        var mode = SpokenResponseMode.spokenAudio
        if let node = object["spokenResponseMode"] {
            let name = try reader.string(node, "'spokenResponseMode'")
            guard let parsed = SpokenResponseMode(rawValue: name) else {
                throw reader.error("'spokenResponseMode' must be \"spokenAudio\" or \"none\", found '\(name)'", at: node.location)
            }
            mode = parsed
        }
        return PluginManifest(
            appID: appID, displayName: DisplayText.sanitized(displayName),
            usageDescription: usageDescription.map(DisplayText.sanitized), executable: executable,
            arguments: arguments, intents: intents, vocabularyTypes: vocabularyTypes, extensionOf: extensionOf,
            spokenResponseMode: mode, directory: directory)
    }

    /// Whether `text` is a reverse-DNS app id: two or more dot-separated labels of ASCII
    /// letters, digits and hyphens, each starting with a letter and not ending with a hyphen.
    public static func isReverseDNS(_ text: String) -> Bool {
        // ASCII only, so bytes are enough (Character's Unicode properties made reading a state file of
        // many apps spend a quarter of its time here).
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        let labels = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            guard let first = label.first, isLetter(first), label.last != UInt8(ascii: "-") else { return false }
            return label.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// Where the executable is.
    ///
    /// - A path (it contains `/`) is used as it is when absolute, and otherwise taken
    ///   relative to the manifest's ``directory``.
    /// - A bare name is looked up in `productsDirectory` (the folder of the running `heed`
    ///   binary, i.e. the build products directory in a development build), then in the
    ///   manifest's ``directory``. When neither holds it, the products-directory path is returned,
    ///   and starting the plugin reports that it is missing.
    /// - Parameter productsDirectory: The folder searched first for a bare name; defaults to
    ///   ``PluginCatalog/productsDirectory``.
    /// - Returns: The executable's URL.
    public func executableURL(productsDirectory: URL? = nil) -> URL {
        Self.executableURL(executable, directory: directory, productsDirectory: productsDirectory)
    }

    /// Where an executable named in a manifest is (a plugin's `plugin.json`, a client's
    /// `client.json`), by the rules of ``executableURL(productsDirectory:)``.
    /// - Parameters:
    ///   - executable: The name or path as written.
    ///   - directory: The folder of the manifest.
    ///   - productsDirectory: The folder searched first for a bare name; defaults to
    ///     ``PluginCatalog/productsDirectory``.
    /// - Returns: The executable's URL.
    public static func executableURL(_ executable: String, directory: URL, productsDirectory: URL? = nil) -> URL {
        if executable.contains("/" as Character) {
            return executable.hasPrefix("/")
                ? URL(fileURLWithPath: executable) : directory.appendingPathComponent(executable).standardizedFileURL
        }
        let products = productsDirectory ?? PluginCatalog.productsDirectory
        let candidates = [products.appendingPathComponent(executable), directory.appendingPathComponent(executable)]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
}
