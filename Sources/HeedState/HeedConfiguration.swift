public import Foundation
public import HeedCore
import HeedIntents
import HeedPlugins

/// The user's settings (`config.json`) and the folders Heed keeps its files in.
///
/// The config file lives at `$XDG_CONFIG_HOME/heed/config.json` (`~/.config/heed/config.json`).
/// Every key is optional:
///
/// ```json
/// {
///   "keepHeard": true,
///   "policyFile": "/etc/heed/policy.json",
///   "spokenResponses": true,
///   "stateDirectory": "~/heed-state",
///   "wakePhrase": "hey computer",
///   "wyomingClient": "org.heed.wyoming"
/// }
/// ```
///
/// Relative paths are taken from the config file's folder and `~/` from the home folder.
/// An unknown key or a value of the wrong type is a located ``SourceError``.
public struct HeedConfiguration: Sendable, Hashable {
    /// The admin policy file that marks apps `restricted` (default `/etc/heed/policy.json`).
    public var policyFile: URL
    /// Whether response texts are also spoken. Off, the spoken-response service reports `serviceDisabled`.
    public var spokenResponses: Bool
    /// Where authorization records, vocabulary and other state live.
    public var stateDirectory: URL
    /// Where Heed's data (pronunciation additions and the like) lives.
    public var dataDirectory: URL
    /// The wake phrase of `heed listen --activation wake`, when the config names one.
    public var wakePhrase: String?
    /// Whether the listener keeps the commands it acts on to adapt on (`heed listen --keep-heard`).
    public var keepHeard = false
    /// The client identity of `heed serve --wyoming` peers when `--wyoming-client` is not given.
    public var wyomingClient: String?
    /// The config file that was read, or `nil` when there was none.
    public var configFile: URL?

    /// The path of the admin policy file when the config names none.
    public static let defaultPolicyFile = URL(fileURLWithPath: "/etc/heed/policy.json")

    /// The keys a config file may have.
    static let keys: Set<String> = ["keepHeard", "policyFile", "spokenResponses", "stateDirectory", "wakePhrase", "wyomingClient"]

    /// Creates a configuration in code (tests).
    public init(
        policyFile: URL = HeedConfiguration.defaultPolicyFile,
        spokenResponses: Bool = false,
        stateDirectory: URL,
        dataDirectory: URL,
        configFile: URL? = nil
    ) {
        self.policyFile = policyFile
        self.spokenResponses = spokenResponses
        self.stateDirectory = stateDirectory
        self.dataDirectory = dataDirectory
        self.configFile = configFile
    }

    /// Reads the config file and works out the folders.
    ///
    /// Precedence for the state folder: `stateDirectory` argument (the CLI's `--state-dir`),
    /// then the file's `stateDirectory` key, then `$XDG_STATE_HOME/heed`.
    /// - Parameters:
    ///   - file: The config file; `nil` means `config.json` in the XDG config folder, which may
    ///     be missing (then every setting has its default). A file given here must exist.
    ///   - directories: The XDG folders (tests pass their own).
    ///   - stateDirectory: Overrides the state folder.
    ///   - dataDirectory: Overrides the data folder.
    /// - Returns: The configuration.
    /// - Throws: ``SourceError`` located in the file when it cannot be read, is not JSON, has an
    ///   unknown key or a value of the wrong type.
    public static func load(
        file: URL? = nil,
        directories: HeedDirectories = .standard(),
        stateDirectory: URL? = nil,
        dataDirectory: URL? = nil
    ) throws -> HeedConfiguration {
        let url = file ?? directories.configFile
        var configuration: HeedConfiguration
        if file == nil, !FileManager.default.fileExists(atPath: url.path) {
            configuration = HeedConfiguration(stateDirectory: directories.state, dataDirectory: directories.data)
        } else {
            let text: String
            do {
                text = try String(contentsOf: url, encoding: .utf8)
            } catch {
                let reason = FileManager.default.fileExists(atPath: url.path) ? error.localizedDescription : "no such file"
                throw SourceError(
                    .unreadableFile, "cannot read the config file: \(reason)",
                    at: SourceLocation(path: url.path, line: 1, column: 1), underlyingError: error)
            }
            configuration = try parse(SourceText(path: url.path, text: text), directories: directories)
            configuration.configFile = url
        }
        if let stateDirectory { configuration.stateDirectory = stateDirectory }
        if let dataDirectory { configuration.dataDirectory = dataDirectory }
        return configuration
    }

    /// Parses config file text.
    /// - Parameters:
    ///   - source: The file's text and path; relative paths in it are taken from the path's folder.
    ///   - directories: The XDG folders that give the defaults.
    /// - Returns: The configuration.
    /// - Throws: ``SourceError`` located at the offending spot.
    public static func parse(_ source: SourceText, directories: HeedDirectories = .standard()) throws -> HeedConfiguration {
        let reader = JSONSchemaReader(source: source)
        let root = try LocatedJSONParser.parse(source)
        let object = try reader.object(root, "the Heed config", allowedKeys: keys)
        let folder = URL(fileURLWithPath: source.path).deletingLastPathComponent()

        func path(_ key: String) throws -> URL? {
            guard let node = object[key] else { return nil }
            let text = try reader.string(node, "'\(key)' (a path)")
            guard !text.isEmpty else { throw reader.error("'\(key)' must not be empty; leave the key out instead", at: node.location) }
            if text == "~" { return directories.home }
            if text.hasPrefix("~/") { return directories.home.appendingPathComponent(String(text.dropFirst(2))) }
            if text.hasPrefix("~") {
                throw reader.error("'\(key)': only '~/' (your home folder) is understood, not '\(text)'", at: node.location)
            }
            return text.hasPrefix("/") ? URL(fileURLWithPath: text) : folder.appendingPathComponent(text).standardizedFileURL
        }

        var configuration = HeedConfiguration(
            policyFile: try path("policyFile") ?? defaultPolicyFile,
            spokenResponses: try object.bool("spokenResponses", default: false),
            stateDirectory: try path("stateDirectory") ?? directories.state,
            dataDirectory: directories.data
        )
        configuration.keepHeard = try object.bool("keepHeard", default: false)
        if let node = object["wakePhrase"] {
            let phrase = try reader.string(node, "'wakePhrase'")
            guard !TextNormalizer.words(phrase).isEmpty else {
                throw reader.error("'wakePhrase' must have words, such as \"hey computer\"", at: node.location)
            }
            configuration.wakePhrase = phrase.lowercased()
        }
        if let node = object["wyomingClient"] {
            let appID = try reader.string(node, "'wyomingClient'")
            guard PluginManifest.isReverseDNS(appID) else {
                throw reader.error("'wyomingClient' must be an app id in reverse-DNS form such as \"org.heed.wyoming\", found '\(appID)'", at: node.location)
            }
            configuration.wyomingClient = appID
        }
        return configuration
    }

    /// An authorization store over this configuration's state folder and policy file.
    public var authorizationStore: AuthorizationStore {
        AuthorizationStore(stateDirectory: stateDirectory, policyFile: policyFile)
    }
}

/// Heed's XDG folders.
public struct HeedDirectories: Sendable, Hashable {
    /// `$XDG_CONFIG_HOME/heed`, default `~/.config/heed`.
    public var config: URL
    /// `$XDG_STATE_HOME/heed`, default `~/.local/state/heed`.
    public var state: URL
    /// `$XDG_DATA_HOME/heed`, default `~/.local/share/heed`.
    public var data: URL
    /// The home folder, for `~/` in paths.
    public var home: URL

    /// Creates the folders in code (tests).
    public init(config: URL, state: URL, data: URL, home: URL) {
        self.config = config
        self.state = state
        self.data = data
        self.home = home
    }

    /// `config.json` in the config folder.
    public var configFile: URL { config.appendingPathComponent("config.json") }

    /// The folders for an environment, following the XDG Base Directory specification:
    /// a variable that is unset, empty or not an absolute path is ignored.
    /// - Parameter environment: The process environment (`HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `XDG_DATA_HOME`).
    /// - Returns: The folders.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> HeedDirectories {
        let homePath = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        let home = URL(fileURLWithPath: homePath, isDirectory: true)
        func base(_ variable: String, _ fallback: String) -> URL {
            if let value = environment[variable], value.hasPrefix("/") {
                return URL(fileURLWithPath: value, isDirectory: true)
            }
            return home.appendingPathComponent(fallback, isDirectory: true)
        }
        return HeedDirectories(
            config: base("XDG_CONFIG_HOME", ".config").appendingPathComponent("heed", isDirectory: true),
            state: base("XDG_STATE_HOME", ".local/state").appendingPathComponent("heed", isDirectory: true),
            data: base("XDG_DATA_HOME", ".local/share").appendingPathComponent("heed", isDirectory: true),
            home: home)
    }
}
