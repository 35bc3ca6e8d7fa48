public import Foundation
public import HeedCore

/// Finds installed plugins.
public enum PluginCatalog {
    /// What ``discover(in:)`` found.
    public struct Discovery: Sendable {
        /// The manifests that loaded, in folder order, then by directory name.
        public var manifests: [PluginManifest]
        /// One error per manifest that did not load, or that repeats an app id.
        public var errors: [SourceError]
    }

    /// Finds plugin directories (each with a `plugin.json`) in `folders`.
    ///
    /// A folder is either a plugin directory itself or holds plugin directories one level
    /// down. A folder that does not exist is skipped. A broken manifest is reported in
    /// ``Discovery/errors`` and does not stop the search; a second plugin with an app id
    /// already found is reported at its `appId` and left out.
    /// - Parameter folders: Where to look, in priority order.
    /// - Returns: The manifests and the errors.
    public static func discover(in folders: [URL]) -> Discovery {
        var discovery = Discovery(manifests: [], errors: [])
        let fileManager = FileManager.default
        for folder in folders {
            var manifestFiles: [URL] = []
            let own = folder.appendingPathComponent(PluginManifest.fileName)
            if fileManager.fileExists(atPath: own.path) {
                manifestFiles.append(own)
            } else if let entries = try? fileManager.contentsOfDirectory(atPath: folder.path) {
                for entry in entries.sorted() {
                    let file = folder.appendingPathComponent(entry).appendingPathComponent(PluginManifest.fileName)
                    if fileManager.fileExists(atPath: file.path) { manifestFiles.append(file) }
                }
            }
            for file in manifestFiles {
                do {
                    let manifest = try PluginManifest.load(from: file)
                    if let first = discovery.manifests.first(where: { $0.appID == manifest.appID }) {
                        let source = SourceText(path: file.path, text: (try? String(contentsOf: file, encoding: .utf8)) ?? "")
                        let location = appIDLocation(in: source) ?? SourceLocation(path: file.path, line: 1, column: 1)
                        discovery.errors.append(
                            SourceError(
                                .schema,
                                "app id '\(manifest.appID)' is already used by the plugin in \(first.directory.path)",
                                at: location, in: source))
                        continue
                    }
                    discovery.manifests.append(manifest)
                } catch let error as SourceError {
                    discovery.errors.append(error)
                } catch {
                    discovery.errors.append(
                        SourceError(
                            .unreadableFile, "\(error)", at: SourceLocation(path: file.path, line: 1, column: 1),
                            underlyingError: error))
                }
            }
        }
        return discovery
    }

    private static func appIDLocation(in source: SourceText) -> SourceLocation? {
        guard let root = try? LocatedJSONParser.parse(source), case .object(let members) = root.kind else { return nil }
        return members.first { $0.key == "appId" }?.value.location
    }

    /// The folder of the running executable: where bare executable names are looked up first.
    ///
    /// For `heed` this is its build products directory (`.build/debug`) in development,
    /// and its `bin` folder when installed. In a test run on Linux, it is the folder of the
    /// test runner, which is the build products directory as well.
    public static var productsDirectory: URL {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "."
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }
}
