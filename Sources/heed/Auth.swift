import ArgumentParser
import Foundation
import HeedCore
import HeedPlugins
import HeedRuntime
import HeedService
import HeedState

/// `heed auth`: the user's authorization decisions and speech permissions.
struct Auth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "List, grant, deny and reset which apps may handle your voice commands.",
        discussion: """
            An app (a handler plugin) is one of notDetermined, denied, restricted or authorized, \
            and Heed dispatches only to authorized apps. The first time one of an app's commands \
            is spoken Heed asks you, showing the app's usage description, and remembers the \
            answer. restricted comes from the administrator's policy file and only they can \
            change it. A plugin that extends another app (extensionOf) shares that app's status. \
            Speech permission (undetermined, denied, granted) says whether an app's responses \
            may be spoken aloud when spoken responses are on in the config.

            App ids are checked against the installed plugins (--plugins, default: plugins/ in \
            the current folder and $XDG_DATA_HOME/heed/plugins) and the apps already recorded.

            Exit status: 0 success, 1 failure (a corrupt state or policy file, a restricted app), \
            2 usage error (an unknown or malformed app id, a missing argument).

            Examples:
              heed auth list
              heed auth status org.heed.timer
              heed auth grant org.heed.timer
              heed auth deny org.heed.media --json
              heed auth reset org.heed.timer
              heed auth speech grant org.heed.timer
              heed auth speech-recognition grant org.heed.example-client
              heed auth list --state-dir /tmp/heed-state --plugins ~/my-plugins
            See docs/AUTHORIZATION.md.
            """,
        subcommands: [List.self, Status.self, Grant.self, Deny.self, Reset.self, Request.self, Speech.self, SpeechRecognition.self]
    )
}

// MARK: - Options and context

extension Auth {
    /// The options every `heed auth` subcommand takes: the plugin and state options of
    /// every command that dispatches, and `--json`.
    struct Options: ParsableArguments {
        @Flag(help: "Print JSON instead of text.")
        var json = false

        @OptionGroup var plugins: PluginOptions

        /// Loads the config, the store and the installed plugins.
        func context() throws -> Context {
            let configuration = try plugins.state.configurationWithState()
            return Context(
                configuration: configuration, store: configuration.authorizationStore, manifests: try plugins.installedPlugins().manifests,
                pluginFolders: plugins.searchFolders, json: json)
        }
    }

    /// What a subcommand works with.
    struct Context {
        var configuration: HeedConfiguration
        var store: AuthorizationStore
        var manifests: [PluginManifest]
        var pluginFolders: [URL]
        var json: Bool

        /// An app id the user typed, checked and mapped to the app whose status applies.
        struct Target {
            /// What the user typed.
            var appID: String
            /// The app whose status applies (the parent for an extension).
            var authorizationAppID: String
            /// The plugin with that app id, when installed.
            var manifest: PluginManifest?
        }

        /// Checks an app id: reverse-DNS, and installed, the parent of an installed extension,
        /// recorded or in the policy.
        /// - Throws: `ValidationError` (exit status 2) naming the known app ids.
        func target(_ appID: String) throws -> Target {
            guard PluginManifest.isReverseDNS(appID) else {
                throw ValidationError("'\(appID)' is not an app id: expected reverse-DNS form such as org.heed.timer")
            }
            if let manifest = manifests.first(where: { $0.appID == appID }) {
                return Target(
                    appID: appID, authorizationAppID: AuthorizationStore.authorizationAppID(for: manifest), manifest: manifest)
            }
            let known = try knownAppIDs()
            guard known.contains(appID) else {
                let list = known.sorted().map { id in displayName(of: id).map { "\(id) (\($0))" } ?? id }
                let searched = pluginFolders.map(\.relativePath).joined(separator: ", ")
                throw ValidationError(
                    list.isEmpty
                        ? "unknown app id '\(appID)': no plugins were found (searched \(searched)) and no app is recorded; "
                            + "pass --plugins DIR"
                        : "unknown app id '\(appID)': no installed plugin has it and it is not recorded. "
                            + "Known app ids: \(list.joined(separator: ", ")) (plugins searched in \(searched))")
            }
            return Target(appID: appID, authorizationAppID: appID, manifest: nil)
        }

        /// Installed plugins, the apps they extend, recorded apps and apps in the policy.
        func knownAppIDs() throws -> Set<String> {
            var known = Set(manifests.map(\.appID))
            known.formUnion(manifests.compactMap(\.extensionOf))
            let snapshot = try store.snapshot()
            known.formUnion(snapshot.records(.siri).map(\.appID))
            known.formUnion(snapshot.records(.spokenResponses).map(\.appID))
            return known
        }

        /// The display name of an app: its plugin's, or for a parent app, its extensions' names.
        func displayName(of appID: String) -> String? {
            if let manifest = manifests.first(where: { $0.appID == appID }) { return manifest.displayName }
            let extensions = manifests.filter { $0.extensionOf == appID }.map(\.displayName)
            return extensions.isEmpty ? nil : extensions.joined(separator: ", ")
        }

        /// The authorization of a target as printed and as JSON.
        func statusReport(_ target: Target) throws -> StatusReport {
            let snapshot = try store.snapshot()
            let status = target.manifest.map(snapshot.status(of:)) ?? snapshot.status(of: target.authorizationAppID, .siri)
            let record = snapshot.records(.siri).first { $0.appID == target.authorizationAppID }
            return StatusReport(
                appID: target.appID,
                displayName: displayName(of: target.appID),
                extensionOf: target.authorizationAppID == target.appID ? nil : target.authorizationAppID,
                status: status,
                decided: status == .restricted ? nil : record?.decided.map(Auth.dateText),
                fromPolicy: status == .restricted,
                policyFile: status == .restricted ? store.policyFile?.path : nil)
        }

        /// The speech permission of a target as printed and as JSON.
        func speechReport(_ target: Target) throws -> SpeechReport {
            let record = try store.records(.spokenResponses).first { $0.appID == target.authorizationAppID }
            let enabled = configuration.spokenResponses
            return SpeechReport(
                appID: target.appID,
                displayName: displayName(of: target.appID),
                extensionOf: target.authorizationAppID == target.appID ? nil : target.authorizationAppID,
                permission: record?.value ?? .undetermined,
                decided: record?.decided.map(Auth.dateText),
                spokenResponses: enabled,
                status: try store.spokenResponseStatus(of: target.authorizationAppID, serviceEnabled: enabled))
        }

        /// Prints a report as JSON or as its text.
        func emit(_ report: some Encodable & CustomStringConvertible) throws {
            print(json ? try Auth.json(report) : report.description)
        }
    }

    /// One app's authorization.
    struct StatusReport: Encodable, CustomStringConvertible {
        var appID: String
        var displayName: String?
        var extensionOf: String?
        var status: AuthorizationStatus
        var decided: String?
        var fromPolicy: Bool
        var policyFile: String?

        enum CodingKeys: String, CodingKey {
            case appID = "appId"
            case displayName, extensionOf, status, decided, fromPolicy, policyFile
        }

        var description: String {
            let name = displayName.map { "\(appID) (\($0))" } ?? appID
            let shared = extensionOf.map { ", via \($0), the app it extends" } ?? ""
            switch status {
            case .authorized, .denied:
                return "\(name): \(status.rawValue)\(shared)" + (decided.map { " since \($0)" } ?? "")
            case .restricted:
                return "\(name): restricted\(shared) by the administrator's policy (\(policyFile ?? "policy")); only they can change that"
            case .notDetermined:
                return "\(name): notDetermined\(shared); Heed asks the first time one of its commands is spoken"
            }
        }
    }

    /// One app's speech permission.
    struct SpeechReport: Encodable, CustomStringConvertible {
        var appID: String
        var displayName: String?
        var extensionOf: String?
        var permission: SpeechPermission
        var decided: String?
        var spokenResponses: Bool
        var status: SpokenResponseStatus

        enum CodingKeys: String, CodingKey {
            case appID = "appId"
            case displayName, extensionOf, permission, decided, spokenResponses, status
        }

        var description: String {
            let name = displayName.map { "\(appID) (\($0))" } ?? appID
            let shared = extensionOf.map { ", via \($0), the app it extends" } ?? ""
            var text = "\(name): speech \(permission.rawValue)\(shared)" + (decided.map { " since \($0)" } ?? "")
            if !spokenResponses {
                text += " (spoken responses are off: set \"spokenResponses\": true in the config)"
            }
            return text
        }
    }

    static func dateText(_ date: Date) -> String { date.iso8601Text }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

// MARK: - Subcommands

extension Auth {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List installed plugins and recorded apps with their authorization and speech permission.",
            discussion: """
                --json prints one array: [{"appId", "displayName", "extensionOf", "status", "decided", \
                "fromPolicy", "speechPermission"}] (absent keys are left out).

                Examples:
                  heed auth list
                  heed auth list --json --plugins plugins
                """
        )

        @OptionGroup var options: Options

        struct Row: Encodable {
            var appID: String
            var displayName: String?
            var extensionOf: String?
            var status: AuthorizationStatus
            var decided: String?
            var fromPolicy: Bool
            var speechPermission: SpeechPermission

            enum CodingKeys: String, CodingKey {
                case appID = "appId"
                case displayName, extensionOf, status, decided, fromPolicy, speechPermission
            }
        }

        func run() throws {
            let context = try options.context()
            let snapshot = try context.store.snapshot()
            let records = snapshot.records(.siri)
            let speech = snapshot.records(.spokenResponses)
            var appIDs = Set(context.manifests.map(\.appID))
            appIDs.formUnion(records.map(\.appID))
            appIDs.formUnion(speech.map(\.appID))
            let rows = appIDs.sorted().map { appID -> Row in
                let manifest = context.manifests.first { $0.appID == appID }
                let owner = manifest.map(AuthorizationStore.authorizationAppID(for:)) ?? appID
                let record = records.first { $0.appID == owner }
                // An extension the policy restricts by its own id is restricted whatever its parent's status.
                let restrictedItself = manifest != nil && owner != appID && records.contains { $0.appID == appID && $0.fromPolicy }
                return Row(
                    appID: appID,
                    displayName: context.displayName(of: appID),
                    extensionOf: owner == appID ? nil : owner,
                    status: restrictedItself ? .restricted : record?.value ?? .notDetermined,
                    decided: restrictedItself ? nil : record?.decided.map(Auth.dateText),
                    fromPolicy: restrictedItself || record?.fromPolicy ?? false,
                    speechPermission: speech.first { $0.appID == owner }?.value ?? .undetermined)
            }
            if options.json {
                print(try Auth.json(rows))
                return
            }
            guard !rows.isEmpty else {
                print("No plugins found and no app recorded (state: \(context.store.stateFile.path)).")
                return
            }
            let table = [["APP ID", "NAME", "AUTHORIZATION", "SPEECH", "DECIDED"]]
                + rows.map { row in
                    [
                        row.appID, row.displayName ?? "-",
                        row.status.rawValue + (row.extensionOf.map { " (via \($0))" } ?? ""),
                        row.speechPermission.rawValue,
                        row.fromPolicy ? "administrator's policy" : row.decided ?? "-",
                    ]
                }
            let widths = (0..<5).map { column in table.map { $0[column].count }.max() ?? 0 }
            for line in table {
                let padded = line.enumerated().map { index, cell in
                    index == line.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }
                print(padded.joined(separator: "  "))
            }
            if !context.configuration.spokenResponses {
                print("\nSpoken responses are off; speech permissions apply once \"spokenResponses\" is true in the config.")
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one app's authorization status.",
            discussion: """
                --json prints {"appId", "displayName", "extensionOf", "status", "decided", "fromPolicy", "policyFile"}.

                Example:
                  heed auth status org.heed.timer
                """
        )

        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The app id, e.g. org.heed.timer.", valueName: "app-id")) var app: String

        func run() throws {
            let context = try options.context()
            try context.emit(try context.statusReport(try context.target(app)))
        }
    }

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Authorize an app to handle your voice commands.",
            discussion: """
                Granting an extension grants the app it extends (and so all of that app's extensions). \
                An app restricted by the administrator's policy cannot be granted (exit status 1).

                Example:
                  heed auth grant org.heed.timer
                """
        )

        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The app id, e.g. org.heed.timer.", valueName: "app-id")) var app: String

        func run() throws { try Auth.record(.authorized, app, options) }
    }

    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forbid an app to handle your voice commands; Heed will not ask again.",
            discussion: """
                Denying an extension denies the app it extends.

                Example:
                  heed auth deny org.heed.media
                """
        )

        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The app id, e.g. org.heed.media.", valueName: "app-id")) var app: String

        func run() throws { try Auth.record(.denied, app, options) }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget your decision for an app: it is notDetermined and Heed asks again.",
            discussion: """
                Example:
                  heed auth reset org.heed.timer
                """
        )

        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The app id, e.g. org.heed.timer.", valueName: "app-id")) var app: String

        func run() throws {
            let context = try options.context()
            let target = try context.target(app)
            if let manifest = target.manifest {
                try context.store.reset(manifest)
            } else {
                try context.store.reset(target.authorizationAppID, .siri)
            }
            try context.emit(try context.statusReport(target))
        }
    }

    static func record(_ status: AuthorizationStatus, _ app: String, _ options: Options) throws {
        let context = try options.context()
        let target = try context.target(app)
        if let manifest = target.manifest {
            try context.store.record(status, for: manifest)
        } else {
            try context.store.record(status, for: target.authorizationAppID, .siri)
        }
        try context.emit(try context.statusReport(target))
    }

    struct Request: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask for an installed plugin's authorization now, as Heed does the first time it is used.",
            discussion: """
                A decided status is shown at once without asking. Otherwise the question, with the \
                plugin's usage description, is asked on the terminal: y or n. Without a terminal, or \
                with an empty answer, nothing is recorded and the app stays notDetermined. A plugin \
                without a usageDescription cannot ask (exit status 1).

                Example:
                  heed auth request org.heed.timer
                """
        )

        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The app id of an installed plugin.", valueName: "app-id")) var app: String

        func run() async throws {
            let context = try options.context()
            let target = try context.target(app)
            guard let manifest = target.manifest else {
                throw ValidationError("'\(app)' is not an installed plugin; request needs its manifest (pass --plugins DIR)")
            }
            _ = try await context.store.requestAuthorization(for: manifest) { prompt in askOnTerminal(prompt.question) }
            try context.emit(try context.statusReport(target))
        }
    }
}

// MARK: - Speech permission

extension Auth {
    struct Speech: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change whether an app's responses may be spoken aloud.",
            discussion: """
                Permissions are undetermined, denied or granted. They apply only when spoken \
                responses are on ("spokenResponses": true in the config); otherwise the status is \
                serviceDisabled. An extension shares the permission of the app it extends.

                --json prints {"appId", "displayName", "extensionOf", "permission", "decided", \
                "spokenResponses", "status"}.

                Examples:
                  heed auth speech status org.heed.timer
                  heed auth speech grant org.heed.timer
                  heed auth speech reset org.heed.timer --json
                """,
            subcommands: [Status.self, Grant.self, Deny.self, Reset.self]
        )

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show an app's speech permission.")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The app id.", valueName: "app-id")) var app: String

            func run() throws {
                let context = try options.context()
                try context.emit(try context.speechReport(try context.target(app)))
            }
        }

        struct Grant: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Let an app's responses be spoken.")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The app id.", valueName: "app-id")) var app: String

            func run() throws { try Speech.change(.granted, app, options) }
        }

        struct Deny: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Keep an app's responses silent (shown only).")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The app id.", valueName: "app-id")) var app: String

            func run() throws { try Speech.change(.denied, app, options) }
        }

        struct Reset: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Forget an app's speech permission: undetermined.")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The app id.", valueName: "app-id")) var app: String

            func run() throws { try Speech.change(.undetermined, app, options) }
        }

        static func change(_ permission: SpeechPermission, _ app: String, _ options: Options) throws {
            let context = try options.context()
            let target = try context.target(app)
            if permission == .undetermined {
                try context.store.reset(target.authorizationAppID, .spokenResponses)
            } else {
                try context.store.record(permission, for: target.authorizationAppID, .spokenResponses)
            }
            try context.emit(try context.speechReport(target))
        }
    }
}

// MARK: - Speech recognition for clients of heed serve

extension Auth {
    struct SpeechRecognition: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "speech-recognition",
            abstract: "Show or change which programs may use speech recognition through heed serve.",
            discussion: """
                A client program (identified by its executable and its client.json) is notDetermined, \
                denied, restricted or authorized, as with Apple's SFSpeechRecognizer.requestAuthorization. \
                heed serve recognizes only for authorized clients. It asks on its terminal when it has \
                one; otherwise a notDetermined client is refused with a sentence naming these commands. \
                restricted comes \
                from the administrator's policy file (the same one as for apps) and only they can change it.

                App ids are checked against the client manifests (--clients, default: clients/ of this \
                build and $XDG_DATA_HOME/heed/clients) and the clients already recorded.

                --json prints {"appId", "displayName", "status", "decided", "fromPolicy", "policyFile", \
                "usageDescription"} (list: an array of them).

                Examples:
                  heed auth speech-recognition list
                  heed auth speech-recognition grant org.heed.example-client
                  heed auth speech-recognition deny org.heed.example-client --json
                  heed auth speech-recognition reset org.heed.example-client
                See docs/CLIENTS.md.
                """,
            subcommands: [List.self, Status.self, Grant.self, Deny.self, Reset.self]
        )

        /// The options of every `speech-recognition` subcommand.
        struct Options: ParsableArguments {
            @OptionGroup var auth: Auth.Options
            @OptionGroup var clients: ClientFolderOptions

            /// The store, the client manifests, and the app id checked.
            func context() throws -> (context: Context, catalog: ClientCatalog) {
                (try auth.context(), clients.catalog())
            }
        }

        /// One client's speech-recognition status.
        struct Report: Encodable, CustomStringConvertible {
            var appID: String
            var displayName: String?
            var status: AuthorizationStatus
            var decided: String?
            var fromPolicy: Bool
            var policyFile: String?
            var usageDescription: String?

            enum CodingKeys: String, CodingKey {
                case appID = "appId"
                case displayName, status, decided, fromPolicy, policyFile, usageDescription
            }

            init(appID: String, catalog: ClientCatalog, snapshot: AuthorizationStore.Snapshot, store: AuthorizationStore) {
                let manifest = catalog.manifest(appID: appID)
                let record = snapshot.records(.speechRecognition).first { $0.appID == appID }
                self.appID = appID
                displayName = manifest?.displayName
                status = snapshot.status(of: appID, .speechRecognition)
                decided = status == .restricted ? nil : record?.decided.map(Auth.dateText)
                fromPolicy = status == .restricted
                policyFile = status == .restricted ? store.policyFile?.path : nil
                usageDescription = manifest?.speechRecognitionUsageDescription
            }

            var description: String {
                let name = displayName.map { "\(appID) (\($0))" } ?? appID
                switch status {
                case .authorized, .denied:
                    return "\(name): speech recognition \(status.rawValue)" + (decided.map { " since \($0)" } ?? "")
                case .restricted:
                    return "\(name): speech recognition restricted by the administrator's policy (\(policyFile ?? "policy")); only they can change that"
                case .notDetermined:
                    return "\(name): speech recognition notDetermined; heed serve refuses it until you grant or deny it"
                }
            }
        }

        /// Checks an app id: reverse-DNS, and a client manifest's, recorded or in the policy.
        static func target(_ appID: String, _ context: Context, _ catalog: ClientCatalog) throws -> String {
            guard PluginManifest.isReverseDNS(appID) else {
                throw ValidationError("'\(appID)' is not an app id: expected reverse-DNS form such as org.heed.example-client")
            }
            let snapshot = try context.store.snapshot()
            var known = Set(catalog.manifests.map(\.appID))
            known.formUnion(snapshot.records(.speechRecognition).map(\.appID))
            known.formUnion(snapshot.policy.restricted)
            guard known.contains(appID) else {
                let clients = catalog.manifests.map { "\($0.appID) (\($0.displayName))" }
                throw ValidationError(
                    "unknown client '\(appID)': no client.json has it and it is not recorded. "
                        + (clients.isEmpty ? "No client manifests were found; pass --clients DIR" : "Known clients: \(clients.joined(separator: ", "))"))
            }
            return appID
        }

        static func report(_ appID: String, _ context: Context, _ catalog: ClientCatalog) throws -> Report {
            Report(appID: appID, catalog: catalog, snapshot: try context.store.snapshot(), store: context.store)
        }

        static func change(_ status: AuthorizationStatus?, _ app: String, _ options: Options) throws {
            let (context, catalog) = try options.context()
            let appID = try target(app, context, catalog)
            if let status {
                try context.store.record(status, for: appID, .speechRecognition)
            } else {
                try context.store.reset(appID, .speechRecognition)
            }
            try context.emit(try report(appID, context, catalog))
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List client programs and recorded clients with their status.")
            @OptionGroup var options: Options

            func run() throws {
                let (context, catalog) = try options.context()
                let snapshot = try context.store.snapshot()
                let appIDs = Set(catalog.manifests.map(\.appID)).union(snapshot.records(.speechRecognition).map(\.appID)).sorted()
                let reports = appIDs.map { Report(appID: $0, catalog: catalog, snapshot: snapshot, store: context.store) }
                if context.json {
                    print(try Auth.json(reports))
                    return
                }
                guard !reports.isEmpty else {
                    print("No client manifests found and no client recorded (state: \(context.store.stateFile.path)).")
                    return
                }
                let table = [["APP ID", "NAME", "SPEECH RECOGNITION", "DECIDED"]]
                    + reports.map { [$0.appID, $0.displayName ?? "-", $0.status.rawValue, $0.fromPolicy ? "administrator's policy" : $0.decided ?? "-"] }
                let widths = (0..<4).map { column in table.map { $0[column].count }.max() ?? 0 }
                for line in table {
                    print(
                        line.enumerated().map { index, cell in
                            index == line.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                        }.joined(separator: "  "))
                }
            }
        }

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show a client's speech-recognition status.")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The client's app id, e.g. org.heed.example-client.", valueName: "app-id")) var app: String

            func run() throws {
                let (context, catalog) = try options.context()
                try context.emit(try SpeechRecognition.report(try SpeechRecognition.target(app, context, catalog), context, catalog))
            }
        }

        struct Grant: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Let a client use speech recognition (authorized).",
                discussion: "A client restricted by the administrator's policy cannot be granted (exit status 1).")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The client's app id.", valueName: "app-id")) var app: String

            func run() throws { try SpeechRecognition.change(.authorized, app, options) }
        }

        struct Deny: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Refuse a client speech recognition (denied).")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The client's app id.", valueName: "app-id")) var app: String

            func run() throws { try SpeechRecognition.change(.denied, app, options) }
        }

        struct Reset: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Forget your decision for a client: notDetermined.")
            @OptionGroup var options: Options
            @Argument(help: ArgumentHelp("The client's app id.", valueName: "app-id")) var app: String

            func run() throws { try SpeechRecognition.change(nil, app, options) }
        }
    }
}
