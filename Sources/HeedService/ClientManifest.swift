public import Foundation
public import HeedCore
import HeedPlugins

/// A client program's `client.json`: who it is and why it wants speech recognition.
///
/// ```json
/// {
///   "appId": "org.heed.example-client",
///   "displayName": "Heed example client",
///   "executable": "heed-client-example",
///   "speechRecognitionUsageDescription": "Transcribes the recordings you give it.",
///   "microphoneUsageDescription": "Listens through Heed's microphone when you ask it to."
/// }
/// ```
///
/// The service identifies a connecting program by the kernel (its executable, from the
/// socket's peer credentials) and finds the manifest whose ``executable`` is that file.
public struct ClientManifest: Sendable, Hashable {
    /// The app id in reverse-DNS form.
    public var appID: String
    /// The name users see.
    public var displayName: String
    /// The executable as written: an absolute path, a path relative to the manifest's folder,
    /// or a bare name looked up beside `heed`, then in the manifest's folder.
    public var executable: String
    /// Why the client wants speech recognition (Apple's `NSSpeechRecognitionUsageDescription`).
    /// Without it the client cannot ask, and is refused with `noUsageDescription`.
    public var speechRecognitionUsageDescription: String?
    /// Why the client wants Heed's microphone (`NSMicrophoneUsageDescription`): a hand-off
    /// needs it.
    public var microphoneUsageDescription: String?
    /// The command run when a hand-off's result is ready and the client is no longer connected
    /// (the "return to the keyboard" step): the program and its arguments, run with
    /// `HEED_DICTATION_RESULT` set to the result file. `nil`: the client reads the file itself.
    public var dictationCallback: [String]?
    /// The folder holding `client.json`.
    public var directory: URL

    /// The file name of a client manifest.
    public static let fileName = "client.json"

    static let keys: Set<String> = ["appId", "displayName", "executable", "speechRecognitionUsageDescription", "microphoneUsageDescription", "dictationCallback",
    ]

    /// The manifest file.
    public var file: URL { directory.appendingPathComponent(Self.fileName) }

    /// The executable this manifest names, with symbolic links resolved.
    public var executableURL: URL {
        PluginManifest.executableURL(executable, directory: directory).resolvingSymlinksInPath()
    }

    /// Reads and checks a manifest.
    /// - Parameter url: The `client.json` file.
    /// - Returns: The manifest.
    /// - Throws: ``SourceError`` located at the offending spot.
    public static func load(from url: URL) throws -> ClientManifest {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SourceError(
                .unreadableFile, "cannot read the client manifest: \(error.localizedDescription)",
                at: SourceLocation(path: url.path, line: 1, column: 1), underlyingError: error)
        }
        let source = SourceText(path: url.path, text: text)
        let reader = JSONSchemaReader(source: source)
        let object = try reader.object(LocatedJSONParser.parse(source), "a client manifest", allowedKeys: keys)
        let appIDNode = try object.required("appId")
        let appID = try reader.string(appIDNode, "'appId'")
        guard PluginManifest.isReverseDNS(appID) else {
            throw reader.error("'appId' must be in reverse-DNS form such as 'org.example.notes', found '\(appID)'", at: appIDNode.location)
        }
        let displayNameNode = try object.required("displayName")
        let displayName = try reader.string(displayNameNode, "'displayName'")
        guard !displayName.trimmed.isEmpty else {
            throw reader.error("'displayName' must not be empty", at: displayNameNode.location)
        }
        let executableNode = try object.required("executable")
        let executable = try reader.string(executableNode, "'executable'")
        guard !executable.isEmpty else { throw reader.error("'executable' must not be empty", at: executableNode.location) }
        func description(_ key: String) throws -> String? {
            guard let node = object[key] else { return nil }
            let text = try reader.string(node, "'\(key)'")
            guard !text.trimmed.isEmpty else {
                throw reader.error("'\(key)' must not be empty; leave the key out instead", at: node.location)
            }
            return DisplayText.sanitized(text)
        }
        var callback: [String]?
        if let node = object["dictationCallback"] {
            let items = try reader.array(node, "'dictationCallback'")
            guard !items.isEmpty else {
                throw reader.error("'dictationCallback' must be a list of strings: the program and its arguments", at: node.location)
            }
            callback = try items.map { try reader.string($0, "an item of 'dictationCallback'") }
            guard callback?.first?.hasPrefix("/") == true else {
                throw reader.error("'dictationCallback' must start with an absolute path to the program", at: node.location)
            }
        }
        return ClientManifest(
            appID: appID, displayName: DisplayText.sanitized(displayName), executable: executable,
            speechRecognitionUsageDescription: try description("speechRecognitionUsageDescription"),
            microphoneUsageDescription: try description("microphoneUsageDescription"), dictationCallback: callback,
            directory: url.deletingLastPathComponent())
    }
}

/// The client manifests Heed knows.
public struct ClientCatalog: Sendable {
    /// The manifests that loaded, in folder order.
    public var manifests: [ClientManifest]
    /// One error per manifest that did not load.
    public var errors: [SourceError]

    /// The folders searched when none is given: `clients/` of this build of Heed, then
    /// `$XDG_DATA_HOME/heed/clients`.
    public static func defaultFolders(dataDirectory: URL) -> [URL] {
        [PluginCatalog.bundledFolder("clients"), dataDirectory.appendingPathComponent("clients")].compactMap { $0 }
    }

    /// Reads every `client.json` in `folders`: a folder is a client folder itself or holds client
    /// folders one level down. Missing folders are skipped; a broken manifest is reported.
    /// - Parameter folders: Where to look, in priority order.
    /// - Returns: The catalog.
    public static func discover(in folders: [URL]) -> ClientCatalog {
        var catalog = ClientCatalog(manifests: [], errors: [])
        let fileManager = FileManager.default
        for folder in folders {
            var files: [URL] = []
            let own = folder.appendingPathComponent(ClientManifest.fileName)
            if fileManager.fileExists(atPath: own.path) {
                files.append(own)
            } else if let entries = try? fileManager.contentsOfDirectory(atPath: folder.path) {
                for entry in entries.sorted() {
                    let file = folder.appendingPathComponent(entry).appendingPathComponent(ClientManifest.fileName)
                    if fileManager.fileExists(atPath: file.path) { files.append(file) }
                }
            }
            for file in files {
                do {
                    catalog.manifests.append(try ClientManifest.load(from: file))
                } catch let error as SourceError {
                    catalog.errors.append(error)
                } catch {
                    catalog.errors.append(SourceError(.unreadableFile, "\(error)", at: SourceLocation(path: file.path, line: 1, column: 1)))
                }
            }
        }
        return catalog
    }

    /// The manifest of an app id.
    public func manifest(appID: String) -> ClientManifest? {
        manifests.first { $0.appID == appID }
    }

    /// The first manifest whose executable is `executable` (symbolic links resolved on both sides).
    public func manifest(executable: URL) -> ClientManifest? {
        let path = executable.resolvingSymlinksInPath().path
        return manifests.first { $0.executableURL.path == path }
    }
}
