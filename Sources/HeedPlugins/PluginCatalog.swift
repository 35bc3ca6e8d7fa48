public import Foundation
public import HeedCore

/// Finds installed plugins.
public enum PluginCatalog {
    /// What ``discover(in:)`` found.
    public struct Discovery: Sendable {
        /// The manifests that loaded, in folder order, then by directory name. A plugin whose app
        /// id another plugin claims too is not among them.
        public var manifests: [PluginManifest]
        /// One error per manifest that did not load, that Heed refuses to run, or that repeats an app id.
        public var errors: [SourceError]
        /// Every plugin whose app id another plugin claims too. Heed dispatches to none of them:
        /// whichever it chose, the other could be the impostor.
        public var duplicates: [PluginManifest]

        /// Plugins found, without problems.
        public init(manifests: [PluginManifest], errors: [SourceError] = [], duplicates: [PluginManifest] = []) {
            self.manifests = manifests
            self.errors = errors
            self.duplicates = duplicates
        }
    }

    /// Finds plugin directories (each with a `plugin.json`) in `folders`.
    ///
    /// A folder is either a plugin directory itself or holds plugin directories one level
    /// down. A folder that does not exist is skipped. A broken manifest is reported in
    /// ``Discovery/errors`` and does not stop the search. Two or more plugins with one app id
    /// are each reported at their `appId` and all left out (``Discovery/duplicates``). A
    /// plugin whose folder, manifest or executable any user may write to is refused, as ssh
    /// refuses such keys: anyone on the machine could replace what Heed runs with the user's grants.
    /// - Parameter folders: Where to look, in priority order.
    /// - Returns: The manifests and the errors.
    public static func discover(in folders: [URL]) -> Discovery {
        var discovery = Discovery(manifests: [])
        var loaded: [(manifest: PluginManifest, file: URL)] = []
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
                    if let writable = writableByOthers([manifest.directory, file, manifest.executableURL()]) {
                        discovery.errors.append(
                            SourceError(
                                .unreadableFile,
                                "\(writable.path) can be written by any user (mode \(writable.mode)); Heed will not run "
                                    + "\(manifest.appID) until it cannot: chmod o-w \(writable.path)",
                                at: SourceLocation(path: file.path, line: 1, column: 1)))
                        continue
                    }
                    loaded.append((manifest, file))
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
        let claimants = Dictionary(grouping: loaded, by: \.manifest.appID)
        for (manifest, file) in loaded {
            guard let all = claimants[manifest.appID], all.count > 1 else {
                discovery.manifests.append(manifest)
                continue
            }
            discovery.duplicates.append(manifest)
            let others = all.filter { $0.file != file }.map(\.file.path).joined(separator: ", ")
            let source = SourceText(path: file.path, text: (try? String(contentsOf: file, encoding: .utf8)) ?? "")
            let location = appIDLocation(in: source) ?? SourceLocation(path: file.path, line: 1, column: 1)
            discovery.errors.append(
                SourceError(
                    .schema,
                    "app id '\(manifest.appID)' is also claimed by \(others); Heed dispatches to neither until one is removed",
                    at: location, in: source))
        }
        return discovery
    }

    /// The first of `paths` that any user may write to, with its mode. (Group-writable is allowed:
    /// with a user's own private group it is the default umask of many systems.)
    private static func writableByOthers(_ paths: [URL]) -> (path: String, mode: String)? {
        for url in paths {
            var information = stat()
            guard stat(url.path, &information) == 0 else { continue }
            // A sticky directory (/tmp) may be shared: only its owner can replace what is in it.
            let sticky = information.st_mode & S_IFMT == S_IFDIR && information.st_mode & S_ISVTX != 0
            if information.st_mode & S_IWOTH != 0, !sticky {
                return (url.path, String(information.st_mode & 0o7777, radix: 8))
            }
        }
        return nil
    }

    /// The plugins that come with this build of Heed (``bundledFolder(_:)`` `plugins`). The working
    /// folder is never searched unless it is named (`--plugins`): a downloaded folder must not be
    /// able to put its own executable behind an app the user trusts.
    public static var bundledPluginsFolder: URL? { bundledFolder("plugins") }

    /// A folder that comes with this build of Heed (`plugins`, `intents`, `grammars`):
    /// `share/heed/NAME` beside the `bin` folder of an installed `heed`, or `NAME` in the source
    /// tree whose `.build` folder holds the running executable; `nil` when neither exists.
    public static func bundledFolder(_ name: String) -> URL? {
        let products = productsDirectory
        let installed = products.deletingLastPathComponent().appendingPathComponent("share/heed/\(name)")
        if FileManager.default.fileExists(atPath: installed.path) { return installed }
        var folder = products
        while folder.pathComponents.count > 1 {
            if folder.lastPathComponent == ".build" {
                let bundled = folder.deletingLastPathComponent().appendingPathComponent(name)
                return FileManager.default.fileExists(atPath: bundled.path) ? bundled : nil
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
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
