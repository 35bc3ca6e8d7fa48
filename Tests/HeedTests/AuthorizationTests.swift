import Foundation
import HeedCore
import HeedPlugins
import HeedRuntime
import Synchronization
import Testing
import HeedState
import HeedTesting

/// Authorization with SiriKit's semantics: statuses, the asking rule, policy, extensions, speech.
@Suite("Authorization store")
struct AuthorizationTests {
    static func store(policy: String? = nil) throws -> AuthorizationStore {
        let root = try TemporaryFolder.make()
        var policyFile: URL?
        if let policy {
            let file = root.appendingPathComponent("policy.json")
            try policy.write(to: file, atomically: true, encoding: .utf8)
            policyFile = file
        }
        return AuthorizationStore(stateDirectory: root.appendingPathComponent("state"), policyFile: policyFile)
    }

    static func manifest(
        _ appID: String = "org.heed.timer", name: String = "Timers",
        usage: String? = "Sets kitchen timers by voice and tells you when they end.", extensionOf: String? = nil
    ) -> PluginManifest {
        PluginManifest(
            appID: appID, displayName: name, usageDescription: usage, executable: "heed-plugin-timer", intents: ["setTimer"],
            extensionOf: extensionOf, directory: URL(fileURLWithPath: "/plugins/\(name.lowercased())"))
    }

    /// Counts calls of an `ask` closure and answers from a script.
    final class Asker: Sendable {
        let answer: Bool?
        private let calls = Mutex<[AuthorizationPrompt]>([])
        init(_ answer: Bool?) { self.answer = answer }
        var prompts: [AuthorizationPrompt] { calls.withLock { $0 } }
        func ask(_ prompt: AuthorizationPrompt) async throws -> Bool? {
            calls.withLock { $0.append(prompt) }
            return answer
        }
    }

    // MARK: Status matrix

    enum Operation: String, CaseIterable { case grant, deny, reset }

    @Test(arguments: [AuthorizationStatus.notDetermined, .authorized, .denied], Operation.allCases)
    func statusMatrix(start: AuthorizationStatus, operation: Operation) throws {
        let store = try Self.store()
        let app = "org.heed.timer"
        if start != .notDetermined { try store.record(start, for: app, .siri) }
        #expect(try store.status(of: app, .siri) == start)
        switch operation {
        case .grant: try store.record(.authorized, for: app, .siri)
        case .deny: try store.record(.denied, for: app, .siri)
        case .reset: try store.reset(app, .siri)
        }
        let expected: AuthorizationStatus
        switch operation {
        case .grant: expected = .authorized
        case .deny: expected = .denied
        case .reset: expected = .notDetermined
        }
        #expect(try store.status(of: app, .siri) == expected)
        #expect(try store.status(of: "org.heed.other", .siri) == .notDetermined, "other apps are untouched")
        let records = try store.records(.siri)
        #expect(records.map(\.appID) == (expected == .notDetermined ? [] : [app]))
        #expect(records.allSatisfy { !$0.fromPolicy })
        #expect(records.first.map { $0.decided != nil } ?? true)
    }

    @Test func onlyAuthorizedAndDeniedCanBeRecorded() throws {
        let store = try Self.store()
        for status in [AuthorizationStatus.notDetermined, .restricted] {
            let error = try #require(throws: AuthorizationError.self) { try store.record(status, for: "org.heed.timer", .siri) }
            #expect(error.code == .notRecordable)
        }
        let bad = try #require(throws: AuthorizationError.self) { try store.record(.authorized, for: "timer", .siri) }
        #expect(bad.code == .invalidAppID)
        #expect(bad.description.contains("reverse-DNS"))
        #expect(!FileManager.default.fileExists(atPath: store.stateFile.path))
    }

    // MARK: Policy

    @Test func thePolicyRestrictsAndTheUserCannotChangeIt() throws {
        let store = try Self.store(policy: #"{"restricted": ["com.example.recorder", "org.heed.media"]}"#)
        try store.record(.authorized, for: "org.heed.timer", .siri)
        #expect(try store.status(of: "com.example.recorder", .siri) == .restricted)
        #expect(try store.status(of: "org.heed.timer", .siri) == .authorized)
        let policyPath = try #require(store.policyFile?.path)
        for change in [
            { try store.record(.authorized, for: "org.heed.media", .siri) },
            { try store.record(.denied, for: "org.heed.media", .siri) },
            { try store.reset("org.heed.media", .siri) },
        ] as [() throws -> Void] {
            let error = try #require(throws: AuthorizationError.self) { try change() }
            #expect(error.code == .restrictedByPolicy)
            #expect(
                error.description
                    == "org.heed.media is restricted by the administrator's policy (\(policyPath)); only they can change that")
        }
        #expect(try store.status(of: "org.heed.media", .siri) == .restricted)
        let records = try store.records(.siri)
        #expect(records.map(\.appID) == ["com.example.recorder", "org.heed.media", "org.heed.timer"])
        #expect(records.map(\.value) == [.restricted, .restricted, .authorized])
        #expect(records.map(\.fromPolicy) == [true, true, false])
    }

    @Test func theUsersDecisionComesBackWhenThePolicyIsLifted() async throws {
        let store = try Self.store(policy: #"{"restricted": []}"#)
        try store.record(.denied, for: "org.heed.timer", .siri)
        let policy = try #require(store.policyFile)
        try #"{"restricted": ["org.heed.timer"]}"#.write(to: policy, atomically: true, encoding: .utf8)
        #expect(try store.status(of: "org.heed.timer", .siri) == .restricted)
        let asker = Asker(true)
        #expect(try await store.requestAuthorization(for: Self.manifest(), ask: asker.ask) == .restricted)
        #expect(asker.prompts.isEmpty)
        try FileManager.default.removeItem(at: policy)  // a missing policy file restricts nothing
        #expect(try store.status(of: "org.heed.timer", .siri) == .denied)
    }

    @Test(arguments: [
        ("{\"restricted\": [\"timer\"]}", 1, 17, "'timer' is not an app id in reverse-DNS form"),
        ("{\"restrict\": []}", 1, 2, "unknown key 'restrict' in the policy"),
        ("{\"restricted\": \"org.heed.timer\"}", 1, 16, "expected 'restricted' (an array), found a string"),
        ("{\"restricted\": [\n  \"org.heed.timer\",\n]}", 3, 1, "unexpected character ']'"),
    ])
    func policyErrorsAreLocated(text: String, line: Int, column: Int, message: String) throws {
        let store = try Self.store(policy: text)
        let error = try #require(throws: SourceError.self) { try store.status(of: "org.heed.timer", .siri) }
        let path = try #require(store.policyFile?.path)
        #expect(error.location == SourceLocation(path: path, line: line, column: column), "\(error)")
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.description.hasPrefix("\(path):\(line):\(column): error: "))
        // A broken policy stops changes too: Heed does not guess what the administrator meant.
        #expect(throws: SourceError.self) { try store.record(.authorized, for: "org.heed.timer", .siri) }
        #expect(!FileManager.default.fileExists(atPath: store.stateFile.path))
    }

    // MARK: Extensions

    @Test func anExtensionSharesItsParentsStatus() async throws {
        let store = try Self.store()
        let parent = Self.manifest("org.heed.player", name: "Player")
        let widget = Self.manifest("org.heed.player.widget", name: "Player Widget", extensionOf: "org.heed.player")
        #expect(AuthorizationStore.authorizationAppID(for: widget) == "org.heed.player")
        #expect(AuthorizationStore.authorizationAppID(for: parent) == "org.heed.player")

        try store.record(.authorized, for: "org.heed.player", .siri)
        #expect(try store.status(of: widget) == .authorized)
        try store.reset("org.heed.player", .siri)
        #expect(try store.status(of: widget) == .notDetermined)

        // Granting the extension (answering its request) grants the parent.
        let asker = Asker(true)
        #expect(try await store.requestAuthorization(for: widget, ask: asker.ask) == .authorized)
        #expect(asker.prompts.first?.appID == "org.heed.player")
        #expect(asker.prompts.first?.pluginAppID == "org.heed.player.widget")
        #expect(try store.status(of: parent) == .authorized)
        #expect(try store.records(.siri).map(\.appID) == ["org.heed.player"])
        // …and the parent's later request does not ask.
        #expect(try await store.requestAuthorization(for: parent, ask: asker.ask) == .authorized)
        #expect(asker.prompts.count == 1)
    }

    // MARK: Requesting

    @Test func aManifestWithoutUsageDescriptionCannotRequest() async throws {
        let store = try Self.store()
        let asker = Asker(true)
        let manifest = Self.manifest(usage: nil)
        let error = await #expect(throws: AuthorizationError.self) {
            try await store.requestAuthorization(for: manifest, ask: asker.ask)
        }
        #expect(error?.code == .missingUsageDescription)
        #expect(error?.description.contains("“Timers” (org.heed.timer)") == true)
        #expect(error?.description.contains("'usageDescription'") == true)
        #expect(error?.description.contains("/plugins/timers/plugin.json") == true)
        #expect(asker.prompts.isEmpty)
        #expect(try store.status(of: "org.heed.timer", .siri) == .notDetermined)

        // A decided status needs no question, so it is returned even without a description.
        try store.record(.authorized, for: "org.heed.timer", .siri)
        #expect(try await store.requestAuthorization(for: manifest, ask: asker.ask) == .authorized)
    }

    @Test(arguments: [true, false])
    func theUserIsAskedOnce(answer: Bool) async throws {
        let store = try Self.store()
        let asker = Asker(answer)
        let expected: AuthorizationStatus = answer ? .authorized : .denied
        #expect(try await store.requestAuthorization(for: Self.manifest(), ask: asker.ask) == expected)
        #expect(try await store.requestAuthorization(for: Self.manifest(), ask: asker.ask) == expected)
        #expect(asker.prompts.count == 1)
        #expect(try store.status(of: "org.heed.timer", .siri) == expected)
        let prompt = try #require(asker.prompts.first)
        #expect(prompt.kind == .authorization)
        #expect(prompt.displayName == "Timers")
        #expect(
            prompt.question
                == "“Timers” wants to use Heed to handle your voice requests. Sets kitchen timers by voice and tells you when they end. Allow?"
        )
    }

    @Test func noAnswerLeavesTheAppNotDeterminedAndAsksNextTime() async throws {
        let store = try Self.store()
        let asker = Asker(nil)
        #expect(try await store.requestAuthorization(for: Self.manifest(), ask: asker.ask) == .notDetermined)
        #expect(try await store.requestAuthorization(for: Self.manifest(), ask: asker.ask) == .notDetermined)
        #expect(asker.prompts.count == 2)
        #expect(try store.records(.siri).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: store.stateFile.path))
    }

    @Test func aDecisionRecordedWhileAskingStands() async throws {
        let store = try Self.store()
        let status = try await store.requestAuthorization(for: Self.manifest()) { _ in
            try store.record(.denied, for: "org.heed.timer", .siri)  // e.g. `heed auth deny` in another terminal
            return true
        }
        #expect(status == .denied)
        #expect(try store.status(of: "org.heed.timer", .siri) == .denied)
    }

    @Test func aThrowingAskRecordsNothing() async throws {
        struct Cancelled: Error {}
        let store = try Self.store()
        await #expect(throws: Cancelled.self) {
            try await store.requestAuthorization(for: Self.manifest()) { _ in throw Cancelled() }
        }
        #expect(try store.status(of: "org.heed.timer", .siri) == .notDetermined)
    }

    @Test func theQuestionEndsTheDescriptionWithAFullStop() async throws {
        let store = try Self.store()
        let asker = Asker(nil)
        let manifest = Self.manifest(name: "Timer", usage: "Timer uses Heed to set and cancel timers by voice")
        _ = try await store.requestAuthorization(for: manifest, ask: asker.ask)
        #expect(
            asker.prompts.first?.question
                == "“Timer” wants to use Heed to handle your voice requests. Timer uses Heed to set and cancel timers by voice. Allow?")
    }

    // MARK: Speech permission

    @Test func speechPermissionIsSeparateAndRemembered() async throws {
        let store = try Self.store()
        #expect(try store.status(of: "org.heed.timer", .spokenResponses) == .undetermined)
        try store.record(.authorized, for: "org.heed.timer", .siri)
        #expect(try store.status(of: "org.heed.timer", .spokenResponses) == .undetermined)

        try store.record(.granted, for: "org.heed.timer", .spokenResponses)
        #expect(try store.status(of: "org.heed.timer", .spokenResponses) == .granted)
        #expect(try store.spokenResponseStatus(of: "org.heed.timer", serviceEnabled: true) == .granted)
        #expect(try store.spokenResponseStatus(of: "org.heed.timer", serviceEnabled: false) == .serviceDisabled)
        try store.record(.denied, for: "org.heed.timer", .spokenResponses)
        #expect(try store.records(.spokenResponses).map(\.value) == [.denied])
        try store.reset("org.heed.timer", .spokenResponses)
        #expect(try store.status(of: "org.heed.timer", .spokenResponses) == .undetermined)
        #expect(try store.status(of: "org.heed.timer", .siri) == .authorized, "the authorization is untouched")
        try store.reset("org.heed.timer", .siri)
        #expect(throws: AuthorizationError.self) { try store.record(.undetermined, for: "org.heed.timer", .spokenResponses) }

        let asker = Asker(true)
        #expect(try await store.requestSpeechPermission(for: Self.manifest(), serviceEnabled: false, ask: asker.ask) == .serviceDisabled)
        #expect(asker.prompts.isEmpty, "a disabled service asks nobody")
        #expect(try await store.requestSpeechPermission(for: Self.manifest(), serviceEnabled: true, ask: asker.ask) == .granted)
        #expect(try await store.requestSpeechPermission(for: Self.manifest(), serviceEnabled: true, ask: asker.ask) == .granted)
        #expect(asker.prompts.count == 1)
        #expect(asker.prompts.first?.kind == .speech)
        #expect(asker.prompts.first?.question.hasPrefix("“Timers” wants Heed to speak its responses aloud.") == true)
        #expect(try store.status(of: "org.heed.timer", .siri) == .notDetermined, "speech permission is not authorization")
        await #expect(throws: AuthorizationError.self) {
            try await store.requestSpeechPermission(for: Self.manifest("org.heed.quiet", usage: nil), serviceEnabled: true, ask: asker.ask)
        }
    }

    // MARK: Concurrent writers

    @Test func concurrentWritersInOneProcessLoseNothing() throws {
        let store = try Self.store()
        let count = 32
        Concurrently.run(count) { index in
            let app = "org.test.app\(index)"
            do {
                try store.record(index.isMultiple(of: 2) ? .authorized : .denied, for: app, .siri)
                try store.record(.granted, for: app, .spokenResponses)
            } catch {
                Issue.record("writer \(index): \(error)")
            }
        }
        let records = try store.records(.siri)
        #expect(records.count == count)
        for index in 0..<count {
            #expect(try store.status(of: "org.test.app\(index)", .siri) == (index.isMultiple(of: 2) ? .authorized : .denied))
        }
        #expect(try store.records(.spokenResponses).count == count)
        let entries = try FileManager.default.contentsOfDirectory(atPath: store.stateDirectory.path).sorted()
        #expect(entries == ["authorization.json", "authorization.json.lock"], "no temporary files are left")
    }
}

// MARK: - The command line

/// `heed auth` through the built binary.
@Suite("heed auth command line")
struct AuthorizationCommandLineTests {
    /// A temporary state folder, config and policy, and the repository's example plugins.
    struct Setup {
        var root: URL
        var state: URL
        var config: URL
        var policy: URL
        var plugins: [String]

        init(policy: String = #"{"restricted": ["org.heed.notes"]}"#, spokenResponses: Bool = false, plugins: [String]? = nil) throws {
            root = try TemporaryFolder.make()
            state = root.appendingPathComponent("state")
            config = root.appendingPathComponent("config.json")
            self.policy = root.appendingPathComponent("policy.json")
            try policy.write(to: self.policy, atomically: true, encoding: .utf8)
            try """
            {"policyFile": "policy.json", "spokenResponses": \(spokenResponses)}
            """.write(to: config, atomically: true, encoding: .utf8)
            self.plugins = plugins ?? [Fixtures.packageRoot.appendingPathComponent("plugins").path]
        }

        var options: [String] {
            ["--state-dir", state.path, "--config", config.path] + plugins.flatMap { ["--plugins", $0] }
        }

        @discardableResult
        func heed(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
            try Fixtures.run(Fixtures.heedBinary, ["auth"] + arguments + options)
        }

        func json(_ arguments: String...) throws -> [String: Any] {
            let result = try Fixtures.run(Fixtures.heedBinary, ["auth"] + arguments + ["--json"] + options)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        }
    }

    @Test func helpShowsTheSubcommandsAndExamples() throws {
        let result = try Fixtures.run(Fixtures.heedBinary, ["auth", "--help"])
        #expect(result.status == 0)
        for word in ["list", "status", "grant", "deny", "reset", "speech", "heed auth grant org.heed.timer", "2 usage error"] {
            #expect(result.output.contains(word), "missing \(word)")
        }
        let speech = try Fixtures.run(Fixtures.heedBinary, ["auth", "speech", "--help"])
        #expect(speech.status == 0)
        #expect(speech.output.contains("serviceDisabled"))
    }

    @Test func grantDenyResetAndStatusAsJSON() throws {
        let setup = try Setup()
        let initial = try setup.json("status", "org.heed.timer")
        #expect(initial["status"] as? String == "notDetermined")
        #expect(initial["displayName"] as? String == "Timers")
        #expect(initial["appId"] as? String == "org.heed.timer")

        let granted = try setup.json("grant", "org.heed.timer")
        #expect(granted["status"] as? String == "authorized")
        #expect(granted["decided"] is String)
        #expect(granted["fromPolicy"] as? Bool == false)
        #expect(try setup.json("status", "org.heed.timer")["status"] as? String == "authorized")
        #expect(try setup.json("deny", "org.heed.timer")["status"] as? String == "denied")
        #expect(try setup.json("reset", "org.heed.timer")["status"] as? String == "notDetermined")

        let text = try setup.heed("grant", "org.heed.media")
        #expect(text.status == 0)
        #expect(text.output.hasPrefix("org.heed.media (Music): authorized since "))
    }

    @Test func listShowsPluginsRecordsAndPolicy() throws {
        let setup = try Setup()
        try setup.heed("grant", "org.heed.timer")
        try setup.heed("speech", "grant", "org.heed.timer")
        let result = try Fixtures.run(Fixtures.heedBinary, ["auth", "list", "--json"] + setup.options)
        #expect(result.status == 0, "\(result.error)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["appId"] as? String).map { ($0, row) } })
        #expect(Set(byID.keys) == ["org.heed.media", "org.heed.mpris", "org.heed.notes", "org.heed.timer", "org.heed.workout"])
        #expect(byID["org.heed.timer"]?["status"] as? String == "authorized")
        #expect(byID["org.heed.timer"]?["speechPermission"] as? String == "granted")
        #expect(byID["org.heed.notes"]?["status"] as? String == "restricted")
        #expect(byID["org.heed.notes"]?["fromPolicy"] as? Bool == true)
        #expect(byID["org.heed.media"]?["status"] as? String == "notDetermined")

        let table = try setup.heed("list")
        #expect(table.status == 0)
        #expect(table.output.contains("APP ID"))
        #expect(table.output.contains("administrator's policy"))
    }

    @Test func aRestrictedAppCannotBeGranted() throws {
        let setup = try Setup()
        let result = try setup.heed("grant", "org.heed.notes")
        #expect(result.status == 1)
        #expect(
            result.error.contains(
                "org.heed.notes is restricted by the administrator's policy (\(setup.policy.path)); only they can change that"))
        #expect(try setup.json("status", "org.heed.notes")["status"] as? String == "restricted")
    }

    @Test func unknownAndMalformedAppIDsAreUsageErrors() throws {
        let setup = try Setup()
        let unknown = try setup.heed("grant", "org.example.nothing")
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown app id 'org.example.nothing'"))
        #expect(unknown.error.contains("org.heed.timer (Timers)"))
        let malformed = try setup.heed("status", "timer")
        #expect(malformed.status == 2)
        #expect(malformed.error.contains("reverse-DNS"))
        #expect(try Fixtures.run(Fixtures.heedBinary, ["auth", "grant"]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: setup.state.appendingPathComponent("authorization.json").path))
    }

    @Test func aCorruptStoreIsReportedAndLeftUntouched() throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(at: setup.state, withIntermediateDirectories: true)
        let file = setup.state.appendingPathComponent("authorization.json")
        let text = "{\n  \"apps\": {\n    \"org.heed.timer\": {\"status\": \"authorised\", \"decided\": \"2025-05-01T09:30:00Z\"}\n  }\n}\n"
        try text.write(to: file, atomically: true, encoding: .utf8)
        for arguments in [["grant", "org.heed.timer"], ["status", "org.heed.timer"], ["list"], ["speech", "grant", "org.heed.timer"]] {
            let result = try Fixtures.run(Fixtures.heedBinary, ["auth"] + arguments + setup.options)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains("\(file.path):3:34: error: 'status' must be 'authorized' or 'denied', found 'authorised'"))
            #expect(result.error.contains("^"))
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == text)
    }

    @Test func aConfigErrorIsLocated() throws {
        let setup = try Setup()
        try "{\n  \"spokenResponses\": 1\n}".write(to: setup.config, atomically: true, encoding: .utf8)
        let result = try setup.heed("list")
        #expect(result.status == 1)
        #expect(result.error.contains("\(setup.config.path):2:22: error: expected 'spokenResponses' (true or false), found a number"))
    }

    @Test func speechPermissionCommands() throws {
        let off = try Setup()
        let disabled = try off.json("speech", "status", "org.heed.timer")
        #expect(disabled["permission"] as? String == "undetermined")
        #expect(disabled["status"] as? String == "serviceDisabled")
        #expect(disabled["spokenResponses"] as? Bool == false)

        let on = try Setup(spokenResponses: true)
        #expect(try on.json("speech", "grant", "org.heed.timer")["status"] as? String == "granted")
        #expect(try on.json("speech", "deny", "org.heed.timer")["permission"] as? String == "denied")
        #expect(try on.json("speech", "reset", "org.heed.timer")["status"] as? String == "undetermined")
        #expect(try on.json("status", "org.heed.timer")["status"] as? String == "notDetermined")
    }

    @Test func anExtensionIsGrantedThroughItsParent() throws {
        let plugins = try TemporaryFolder.make()
        try Self.writePlugin(in: plugins, appID: "org.heed.player", name: "Player")
        try Self.writePlugin(in: plugins, appID: "org.heed.player.widget", name: "Widget", extensionOf: "org.heed.player")
        let setup = try Setup(plugins: [plugins.path])
        let granted = try setup.json("grant", "org.heed.player.widget")
        #expect(granted["status"] as? String == "authorized")
        #expect(granted["extensionOf"] as? String == "org.heed.player")
        #expect(try setup.json("status", "org.heed.player")["status"] as? String == "authorized")
    }

    @Test func requestWithoutATerminalLeavesTheAppNotDetermined() throws {
        let setup = try Setup()
        let result = try setup.heed("request", "org.heed.timer", "--json")
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("\"status\":\"notDetermined\""))
    }

    @Test func concurrentProcessesLoseNoGrant() throws {
        let plugins = try TemporaryFolder.make()
        let count = 16
        for index in 0..<count { try Self.writePlugin(in: plugins, appID: "org.test.app\(index)", name: "App \(index)") }
        let setup = try Setup(plugins: [plugins.path])
        var processes: [(Process, Pipe)] = []
        for index in 0..<count {
            let process = Process()
            process.executableURL = Fixtures.heedBinary
            process.arguments = ["auth", index.isMultiple(of: 3) ? "deny" : "grant", "org.test.app\(index)"] + setup.options
            let error = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = error
            try process.run()
            processes.append((process, error))
        }
        for (process, error) in processes {
            let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(message)")
        }
        let store = AuthorizationStore(stateDirectory: setup.state, policyFile: nil)
        #expect(try store.records(.siri).count == count)
        for index in 0..<count {
            #expect(try store.status(of: "org.test.app\(index)", .siri) == (index.isMultiple(of: 3) ? .denied : .authorized))
        }
        let entries = try FileManager.default.contentsOfDirectory(atPath: setup.state.path).sorted()
        #expect(entries == ["authorization.json", "authorization.json.lock"])
    }

    static func writePlugin(in folder: URL, appID: String, name: String, extensionOf: String? = nil) throws {
        let directory = folder.appendingPathComponent(appID)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let parent = extensionOf.map { ", \"extensionOf\": \"\($0)\"" } ?? ""
        try """
        {"appId": "\(appID)", "displayName": "\(name)", "usageDescription": "Does things by voice.", \
        "executable": "true", "intents": ["doIt"]\(parent)}
        """.write(to: directory.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
    }
}
