import ArgumentParser
import Foundation
import HeedCore
import HeedIntents
import HeedPlugins
import HeedRuntime
import HeedState

struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List and check the installed handler plugins.",
        discussion: """
            A plugin is a folder with plugin.json (app id, display name, usage description, \
            executable, the intents it handles, the vocabulary types it owns) next to its \
            executable; see docs/PLUGINS.md.
            """,
        subcommands: [List.self, Check.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the installed plugins with their intents and authorization.",
            discussion: """
                Examples:
                  heed plugins list
                  heed plugins list --json --plugins ~/my-plugins
                """
        )

        @OptionGroup var plugins: PluginOptions

        @Flag(help: "Print one JSON object per plugin, one per line.")
        var json = false

        func run() throws {
            let store = try plugins.authorizationStore()
            for manifest in try plugins.installedPlugins().manifests {
                let status = try store.status(of: manifest)
                if json {
                    print(try jsonLine(Listing(manifest: manifest, authorization: status.rawValue)))
                } else {
                    let parent = manifest.extensionOf.map { "  (extension of \($0))" } ?? ""
                    print("\(manifest.appID)  \"\(manifest.displayName)\"  \(status.rawValue)\(parent)")
                    print("  intents: \(manifest.intents.joined(separator: ", "))")
                    if !manifest.vocabularyTypes.isEmpty { print("  vocabulary: \(manifest.vocabularyTypes.joined(separator: ", "))") }
                    print("  executable: \(manifest.executableURL().path)")
                }
            }
        }

        private struct Listing: Encodable {
            var appId: String
            var displayName: String
            var usageDescription: String?
            var intents: [String]
            var vocabularyTypes: [String]
            var extensionOf: String?
            var executable: String
            var authorization: String

            init(manifest: PluginManifest, authorization: String) {
                appId = manifest.appID
                displayName = manifest.displayName
                usageDescription = manifest.usageDescription
                intents = manifest.intents
                vocabularyTypes = manifest.vocabularyTypes
                extensionOf = manifest.extensionOf
                executable = manifest.executableURL().path
                self.authorization = authorization
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check plugin manifests against each other and the intent definitions.",
            discussion: """
                Reports manifests that do not load (with file:line:column), executables that \
                are missing, intents no definition declares, intents two plugins both claim, \
                extensions of apps that are not installed, and plugins without a usage \
                description (they cannot ask for authorization). Exit status 1 on any problem.

                Example:
                  heed plugins check --plugins plugins
                """
        )

        @OptionGroup var plugins: PluginOptions
        @OptionGroup var intents: IntentOptions

        func run() throws {
            let discovery = PluginCatalog.discover(in: plugins.searchFolders)
            let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
            var problems = discovery.errors.map(\.description)
            var owners: [String: String] = [:]
            let appIDs = Set(discovery.manifests.map(\.appID))
            for manifest in discovery.manifests {
                let file = manifest.directory.appendingPathComponent("plugin.json").path
                if !FileManager.default.isExecutableFile(atPath: manifest.executableURL().path) {
                    problems.append("\(file): error: executable \(manifest.executableURL().path) is missing or not executable")
                }
                if manifest.usageDescription?.isEmpty ?? true {
                    problems.append("\(file): error: no usageDescription: \(manifest.appID) cannot ask for authorization")
                }
                if let parent = manifest.extensionOf, !appIDs.contains(parent) {
                    problems.append("\(file): error: extensionOf \(parent), which is not installed")
                }
                for intent in manifest.intents {
                    if catalog.intent(named: intent) == nil {
                        problems.append("\(file): error: intent \(intent) is not defined in the intent files")
                    }
                    if let owner = owners[intent] {
                        problems.append("\(file): error: intent \(intent) is also handled by \(owner)")
                    }
                    owners[intent] = manifest.appID
                }
            }
            print("\(discovery.manifests.count) plugins, \(owners.count) intents handled, \(problems.count) problems")
            for problem in problems { print(problem) }
            if !problems.isEmpty { throw ExitCode.failure }
        }
    }
}
