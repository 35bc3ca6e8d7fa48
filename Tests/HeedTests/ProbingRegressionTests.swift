import Foundation
import HeedCore
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
import HeedRuntime
import Logging
import HeedTesting
import Testing
import HeedState

/// What probing Heed as an attacker and a clumsy user found (issue #19), each on real parts: real
/// plugin processes, real files, the built `heed` executable.
@Suite("What probing found")
struct ProbingRegressionTests {
    /// An intent with typed parameters, for the scripted fault plugin.
    static let catalog: IntentCatalog = {
        let intents = """
            {"domain": "probe", "intents": [
              {"name": "typed", "description": "Typed values.",
               "parameters": [
                 {"name": "seconds", "type": "duration", "required": false},
                 {"name": "count", "type": "integer", "required": false}
               ],
               "templates": ["typed"],
               "responses": {"success": "Set {seconds} and {count}."}}
            ]}
            """
        do {
            return try IntentCatalog(intentSources: [("probe.json", intents)], ruleSources: [])
        } catch {
            fatalError("the probe intents do not load: \(error)")
        }
    }()

    /// A fault plugin that answers with `lines` (see heed-fault-plugin's `scripted` mode), as
    /// `appID`, started through a shell wrapper that counts its starts in `starts`.
    static func scriptedPlugin(
        _ lines: [String], appID: String = "org.heed.fault", extensionOf: String? = nil, intents: [String] = ["typed"], in folder: URL
    ) throws -> PluginManifest {
        let script = folder.appendingPathComponent("script-\(UUID().uuidString)")
        try (lines.joined(separator: "\n") + "\n").write(to: script, atomically: true, encoding: .utf8)
        return PluginManifest(
            appID: appID, displayName: "Fault", usageDescription: "Misbehaves for tests.",
            executable: try ProcessCounter.wrapper(in: folder, appID: appID).path, arguments: ["scripted", script.path],
            intents: intents, extensionOf: extensionOf, directory: folder)
    }

    static func dispatch(
        _ manifests: [PluginManifest], store: AuthorizationStore, intent: String = "typed", answers: [String] = [],
        limits: PluginLimits = .standard
    ) async -> (result: ConversationResult, user: ScriptedUser, events: EventLog) {
        let dispatcher = Dispatcher(catalog: catalog, manifests: manifests, authorization: store, pluginLimits: limits, logger: Logger(label: "test"))
        let user = ScriptedUser(answers)
        let log = EventLog()
        let result = await dispatcher.dispatch(IntentMatch(intent: intent, parameters: [:]), user: user) { log.append($0) }
        await dispatcher.shutdown()
        return (result, user, log)
    }

    // MARK: 1, 9: a plugin's values cannot crash Heed and are checked against the parameter's type

    static let hugeNumbers = ["1e19", "9.3e18", "1e300", "-1e300", "9223372036854775807", "-9223372036854775809"]

    @Test(arguments: hugeNumbers, ["success", "confirmationRequired", "disambiguation"])
    func aHugeNumberFromAPluginEndsTheConversationNotHeed(number: String, outcome: String) async throws {
        let folder = try TemporaryFolder.make()
        let value = outcome == "disambiguation" ? "\"values\":[\(number),5]" : "\"value\":\(number)"
        let manifest = try Self.scriptedPlugin([#"{"type":"resolve","id":$ID,"outcome":"\#(outcome)",\#(value)}"#], in: folder)
        let (result, _, events) = await Self.dispatch([manifest], store: try DispatchTests.store(authorized: ["org.heed.fault"]), answers: ["yes", "the first one"])
        #expect(result.ending == .failure)
        #expect(result.message.contains("resolved seconds to"), "\(result.message)")
        #expect(result.message.contains("which is not a duration"))
        #expect(!events.names().contains("handle"))
    }

    /// As a user met it: `heed run` ended with SIGILL (exit 132).
    @Test func heedRunSurvivesAHugeNumber() throws {
        let folder = try TemporaryFolder.make()
        let plugin = folder.appendingPathComponent("plugins/fault")
        try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("script")
        try #"{"type":"resolve","id":$ID,"outcome":"success","value":1e19}"#.write(to: script, atomically: true, encoding: .utf8)
        let manifest: [String: Any] = [
            "appId": "org.heed.fault", "displayName": "Fault", "usageDescription": "Misbehaves.",
            "executable": try ProcessCounter.wrapper(in: folder).path, "arguments": ["scripted", script.path], "intents": ["typed"],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: plugin.appendingPathComponent("plugin.json"))
        let intents = folder.appendingPathComponent("probe.json")
        try #"{"domain": "probe", "intents": [{"name": "typed", "description": "Typed.", "parameters": [{"name": "seconds", "type": "duration", "required": false}], "templates": ["typed"]}]}"#
            .write(to: intents, atomically: true, encoding: .utf8)
        let state = folder.appendingPathComponent("state").path
        let config = try ProbeFiles.config(in: folder, restricted: [])
        let options = ["--plugins", folder.appendingPathComponent("plugins").path, "--state-dir", state, "--config", config.path]
        #expect(try Fixtures.run(Fixtures.heedBinary, ["auth", "grant", "org.heed.fault"] + options).status == 0)
        let result = try Fixtures.run(Fixtures.heedBinary, ["run", "typed", "--intents", intents.path] + options)
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("Fault resolved seconds to 1e+19, which is not a duration."), "\(result)")
        #expect(try ProcessCounter.starts(in: folder) == 1)
    }

    @Test func aHugeIntegerIsRefusedAndAFittingOneIsSpoken() async throws {
        let folder = try TemporaryFolder.make()
        let store = try DispatchTests.store(authorized: ["org.heed.fault"])
        let huge = try Self.scriptedPlugin(
            [#"{"type":"resolve","id":$ID,"outcome":"success","value":90}"#, #"{"type":"resolve","id":$ID,"outcome":"success","value":1e19}"#],
            in: folder)
        let refused = await Self.dispatch([huge], store: store)
        #expect(refused.result.ending == .failure)
        #expect(refused.result.message.contains("resolved count to 1e+19, which is not an integer"), "\(refused.result.message)")

        let fitting = try Self.scriptedPlugin(
            [
                #"{"type":"resolve","id":$ID,"outcome":"success","value":90}"#, #"{"type":"resolve","id":$ID,"outcome":"success","value":3}"#,
                #"{"type":"confirm","id":$ID,"outcome":"ready"}"#, #"{"type":"handle","id":$ID,"outcome":"success"}"#,
            ],
            in: folder)
        let handled = await Self.dispatch([fitting], store: store)
        #expect(handled.result.ending == .success)
        #expect(handled.events.all.first { $0.event == "response" }?.text == "Set one minute thirty seconds and 3.")
    }

    @Test(arguments: [
        (#""value":{"minutes":5}"#, "which is not a duration"),
        (#""value":"ten minutes""#, "which is not a duration"),
        (#""value":-5"#, "which is not a duration"),
        (#""value":[1,2]"#, "which is not a duration"),
    ])
    func aValueOfTheWrongTypeIsRefused(value: String, message: String) async throws {
        let folder = try TemporaryFolder.make()
        let manifest = try Self.scriptedPlugin([#"{"type":"resolve","id":$ID,"outcome":"success",\#(value)}"#], in: folder)
        let (result, _, events) = await Self.dispatch([manifest], store: try DispatchTests.store(authorized: ["org.heed.fault"]))
        #expect(result.ending == .failure)
        #expect(result.message.contains(message), "\(result.message)")
        #expect(events.outcomes("resolve") == ["failure"])
    }

    @Test func anEmptyListToChooseFromIsAPluginFailure() async throws {
        let folder = try TemporaryFolder.make()
        let manifest = try Self.scriptedPlugin([#"{"type":"resolve","id":$ID,"outcome":"disambiguation","values":[]}"#], in: folder)
        let (result, user, _) = await Self.dispatch([manifest], store: try DispatchTests.store(authorized: ["org.heed.fault"]))
        #expect(result.ending == .failure)
        #expect(result.message == "Fault gave an empty list to choose a seconds from.")
        #expect(user.questions.isEmpty)
    }

    // MARK: 2: restricted wins for extensions

    @Test func aRestrictedExtensionIsNeverStartedNorGrantable() async throws {
        let folder = try TemporaryFolder.make()
        let store = try DispatchTests.store(authorized: ["org.heed.timer"], restricted: ["org.evil.ext"])
        let manifest = try Self.scriptedPlugin([], appID: "org.evil.ext", extensionOf: "org.heed.timer", in: folder)
        let (result, user, _) = await Self.dispatch([manifest], store: store, answers: ["yes"])
        #expect(result.ending == .unauthorized)
        #expect(user.questions.isEmpty)
        #expect(try ProcessCounter.starts(in: folder) == 0)
        #expect(try store.status(of: manifest) == .restricted)
        #expect(throws: AuthorizationError.self) { try store.record(.authorized, for: manifest) }
        #expect(throws: AuthorizationError.self) { try store.reset(manifest) }
        #expect(try store.status(of: "org.heed.timer", .siri) == .authorized)
    }

    @Test func heedAuthGrantRefusesARestrictedExtension() throws {
        let folder = try TemporaryFolder.make()
        let plugin = folder.appendingPathComponent("plugins/evil")
        try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
        try #"{"appId": "org.evil.ext", "displayName": "Evil", "usageDescription": "x", "executable": "/bin/true", "intents": ["setTimer"], "extensionOf": "org.heed.timer"}"#
            .write(to: plugin.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
        let config = try ProbeFiles.config(in: folder, restricted: ["org.evil.ext"])
        let arguments = ["--plugins", folder.appendingPathComponent("plugins").path, "--config", config.path]
        let grant = try Fixtures.run(Fixtures.heedBinary, ["auth", "grant", "org.evil.ext"] + arguments)
        #expect(grant.status != 0)
        #expect(grant.error.contains("org.evil.ext is restricted by the administrator's policy"), "\(grant.error)")
        let status = try Fixtures.run(Fixtures.heedBinary, ["auth", "status", "org.evil.ext", "--json"] + arguments)
        #expect(status.output.contains("\"status\":\"restricted\""), "\(status.output)")
    }

    // MARK: 3: the policy fails closed

    @Test(arguments: ["directory", "too long"])
    func aPolicyThatCannotBeReadRefusesDispatch(kind: String) async throws {
        let folder = try TemporaryFolder.make()
        let policy: URL
        if kind == "directory" {
            policy = folder.appendingPathComponent("policy.json")
            try FileManager.default.createDirectory(at: policy, withIntermediateDirectories: true)
        } else {
            policy = folder.appendingPathComponent(String(repeating: "p", count: 300))
        }
        try await Self.expectDispatchRefused(policy: policy, in: folder)
    }

    @Test(.enabled(if: getuid() != 0, "root reads every folder; aPolicyInAFolderTheUserMayNotEnterRefusesDispatch runs heed as nobody"))
    func aPolicyInAnUnreadableFolderRefusesDispatch() async throws {
        let folder = try TemporaryFolder.make()
        let locked = folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try "{\"restricted\": []}".write(to: locked.appendingPathComponent("policy.json"), atomically: true, encoding: .utf8)
        chmod(locked.path, 0o000)
        try await Self.expectDispatchRefused(policy: locked.appendingPathComponent("policy.json"), in: folder)
    }

    /// A policy file Heed cannot read refuses every dispatch, before any plugin starts.
    static func expectDispatchRefused(policy: URL, in folder: URL) async throws {
        let store = AuthorizationStore(stateDirectory: folder.appendingPathComponent("state"), policyFile: policy)
        #expect(throws: SourceError.self) { try store.status(of: "org.heed.fault", .siri) }
        let manifest = try Self.scriptedPlugin([], in: folder)
        let (result, user, _) = await Self.dispatch([manifest], store: store, answers: ["yes"])
        #expect(result.ending == .unauthorized)
        #expect(result.message.contains("cannot read the administrator's policy file") || result.message.contains("is a directory"), "\(result.message)")
        #expect(user.questions.isEmpty)
        #expect(try ProcessCounter.starts(in: folder) == 0)
    }

    /// What runs heed as `nobody` when the tests run as root.
    static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")

    /// Whether `nobody` can run the built heed (the checkout may sit in a 0700 home folder).
    static var nobodyCanRunHeed: Bool {
        guard FileManager.default.isExecutableFile(atPath: setpriv.path) else { return false }
        let reachable = try? Fixtures.run(setpriv, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/test", "-x", Fixtures.heedBinary.path])
        return reachable?.status == 0
    }

    /// The probe's own case: a policy in a root-owned folder of mode 0700, read by an ordinary
    /// user. As root the test runs `heed` as `nobody` (setpriv); as an ordinary user, directly.
    @Test(.enabled(if: getuid() != 0 || nobodyCanRunHeed, "as root it runs heed as nobody, who needs /usr/bin/setpriv and a heed it can reach"))
    func aPolicyInAFolderTheUserMayNotEnterRefusesDispatch() throws {
        let folder = try TemporaryFolder.make()
        chmod(folder.path, 0o755)
        let locked = folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try "{\"restricted\": []}".write(to: locked.appendingPathComponent("policy.json"), atomically: true, encoding: .utf8)
        chmod(locked.path, 0o700)
        let state = folder.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        chmod(state.path, 0o777)
        let config = folder.appendingPathComponent("config.json")
        try "{\"policyFile\": \"\(locked.path)/policy.json\", \"spokenResponses\": false}".write(to: config, atomically: true, encoding: .utf8)
        chmod(config.path, 0o644)
        let arguments = ["run", "set a timer for ten minutes", "--state-dir", state.path, "--config", config.path, "--answer", "yes"]
        let result =
            getuid() == 0
            ? try Fixtures.run(Self.setpriv, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", Fixtures.heedBinary.path] + arguments, in: folder)
            : try Fixtures.run(Fixtures.heedBinary, arguments, in: folder)
        #expect(result.status == 1, "\(result)")
        #expect((result.output + result.error).contains("cannot read the administrator's policy file: Permission denied"), "\(result)")
        #expect(!(result.output + result.error).contains("Timer set"))
    }

    // MARK: 4: a state file cannot crash Heed

    @Test(arguments: ["1e19", "9223372036854775807", "1e308", "-1e400", "1e400", "1.5", "-1"])
    func aHugeGenerationIsALocatedError(number: String) throws {
        let folder = try TemporaryFolder.make()
        try "{\n  \"version\": 1,\n  \"generation\": \(number),\n  \"apps\": {}\n}\n"
            .write(to: folder.appendingPathComponent("vocabulary.json"), atomically: true, encoding: .utf8)
        let result = try Fixtures.run(Fixtures.heedBinary, ["vocab", "list", "--data-dir", folder.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.error.contains("vocabulary.json:3:17: error: expected 'generation' to be a whole number"), "\(result.error)")
    }

    // MARK: 5: the working folder does not shadow installed plugins; duplicates are refused

    @Test func theWorkingFoldersPluginsAreNotSearchedUnlessNamed() throws {
        let folder = try TemporaryFolder.make()
        let marker = folder.appendingPathComponent("impostor-ran")
        let impostor = folder.appendingPathComponent("plugins/timer")
        try FileManager.default.createDirectory(at: impostor, withIntermediateDirectories: true)
        try "#!/bin/sh\ntouch '\(marker.path)'\nexit 1\n".write(to: impostor.appendingPathComponent("run"), atomically: true, encoding: .utf8)
        chmod(impostor.appendingPathComponent("run").path, 0o755)
        try #"{"appId": "org.heed.timer", "displayName": "Timers", "usageDescription": "x", "executable": "run", "intents": ["setTimer"]}"#
            .write(to: impostor.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
        let state = folder.appendingPathComponent("state").path
        let config = try ProbeFiles.config(in: folder, restricted: [])
        let common = ["--state-dir", state, "--config", config.path, "--intents", Fixtures.packageRoot.appendingPathComponent("intents").path]
        try Fixtures.run(Fixtures.heedBinary, ["auth", "grant", "org.heed.timer", "--state-dir", state, "--config", config.path])

        let run = try Fixtures.run(Fixtures.heedBinary, ["run", "set a timer for ten minutes"] + common, in: folder)
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("Timer set for 10 minutes."))
        #expect(!FileManager.default.fileExists(atPath: marker.path))

        // Both named: the app id is claimed twice, so Heed dispatches to neither.
        let both = try Fixtures.run(
            Fixtures.heedBinary,
            ["run", "set a timer for ten minutes", "--plugins", Fixtures.packageRoot.appendingPathComponent("plugins").path, "--plugins", "plugins"]
                + common, in: folder)
        #expect(both.status == 1)
        #expect(both.error.contains("Two plugins claim the app id org.heed.timer") || both.output.contains("Two plugins claim the app id org.heed.timer"), "\(both)")
        #expect(both.error.contains("is also claimed by"))
        #expect(!FileManager.default.fileExists(atPath: marker.path))
    }

    @Test func twoAppsClaimingOneIntentAreRefusedBothNamed() async throws {
        let folder = try TemporaryFolder.make()
        let first = try Self.scriptedPlugin([], appID: "org.heed.fault", in: folder)
        let second = try Self.scriptedPlugin([], appID: "org.heed.other", in: folder)
        let (result, _, _) = await Self.dispatch([first, second], store: try DispatchTests.store(authorized: ["org.heed.fault", "org.heed.other"]))
        #expect(result.ending == .conflict)
        #expect(result.message.contains("org.heed.fault") && result.message.contains("org.heed.other"))
        #expect(try ProcessCounter.starts(in: folder) == 0)
    }

    @Test func aWorldWritablePluginIsRefused() throws {
        let folder = try TemporaryFolder.make()
        let plugin = folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
        try #"{"appId": "org.x.open", "displayName": "Open", "executable": "/bin/true", "intents": ["x"]}"#
            .write(to: plugin.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
        chmod(plugin.path, 0o777)
        let discovery = PluginCatalog.discover(in: [folder])
        #expect(discovery.manifests.isEmpty)
        #expect(discovery.errors.first?.description.contains("can be written by any user (mode 777)") == true)
        chmod(plugin.path, 0o755)
        #expect(PluginCatalog.discover(in: [folder]).manifests.map(\.appID) == ["org.x.open"])
    }

    // MARK: 6: nothing from a plugin or manifest reaches the terminal as a control sequence

    @Test func controlCharactersFromAPluginAreShownAsSpaces() async throws {
        let folder = try TemporaryFolder.make()
        let hostile = #"\u001b[8mhidden\rAllow? yes\u202e"#
        let manifest = try Self.scriptedPlugin(
            [
                #"{"type":"resolve","id":$ID,"outcome":"notRequired"}"#, #"{"type":"resolve","id":$ID,"outcome":"notRequired"}"#,
                #"{"type":"confirm","id":$ID,"outcome":"ready"}"#, #"{"type":"handle","id":$ID,"outcome":"success","response":"\#(hostile)"}"#,
            ], in: folder)
        let (result, _, _) = await Self.dispatch([manifest], store: try DispatchTests.store(authorized: ["org.heed.fault"]))
        #expect(result.ending == .success)
        #expect(result.message == " [8mhidden Allow? yes")
        #expect(!result.message.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" })
    }

    @Test func aManifestsNamesAreSanitizedInThePrompt() throws {
        let folder = try TemporaryFolder.make()
        let plugin = folder.appendingPathComponent("fake")
        try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
        try #"{"appId": "org.x.fake", "displayName": "Fake\r\u001b[2K", "usageDescription": "Real?\u0007\n", "executable": "/bin/true", "intents": ["x"]}"#
            .write(to: plugin.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
        let manifest = try #require(PluginCatalog.discover(in: [folder]).manifests.first)
        #expect(manifest.displayName == "Fake  [2K")
        #expect(manifest.usageDescription == "Real?  ")
    }

    // MARK: 7: linear state parsing, bounded error excerpts

    @Test func stateParsingIsLinear() throws {
        func authorizationState(_ apps: Int) -> SourceText {
            let entries = (0..<apps).map { "\"org.example.app\($0)\": {\"status\": \"authorized\", \"decided\": \"2026-01-01T00:00:00Z\"}" }
            return SourceText(path: "authorization.json", text: "{\"version\": 1, \"apps\": {\(entries.joined(separator: ",\n"))}}")
        }
        func seconds(_ source: SourceText) throws -> Double {
            var best = Double.infinity
            for _ in 0..<3 {
                let start = ContinuousClock.now
                _ = try LocatedJSONParser.parse(source)
                let elapsed = ContinuousClock.now - start
                best = min(best, Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
            }
            return best
        }
        // A ratio, not a time limit: 8 times the apps take about 8 times as long when parsing is
        // linear, 64 times when quadratic (the probe measured 35 times for 8 times the apps).
        let ratio = try seconds(authorizationState(40_000)) / seconds(authorizationState(5_000))
        #expect(ratio < 20, "parsing 8× the apps took \(ratio)× as long")
    }

    @Test func anErrorOnAHugeLineQuotesAWindowOfIt() throws {
        let line = "{\"apps\": [" + String(repeating: "1, ", count: 300_000) + "]}"
        let error = try #require(throws: SourceError.self) { try LocatedJSONParser.parse(SourceText(path: "big.json", text: line)) }
        let text = error.description
        #expect(text.count < 400, "\(text.count) characters")
        #expect(text.hasPrefix("big.json:1:"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let excerpt = String(lines[1])
        let caret = lines[2].count
        // The caret points at the ']' after the last comma, inside the window.
        #expect(Array(excerpt)[caret - 1] == "]", "\(excerpt)")
    }

    @Test func stringLocationsAreWorkedOutWhenAskedFor() throws {
        // The quote is at column 7; escapes are one scalar at the column of their backslash.
        let source = SourceText(path: "s.json", text: #"{"k": "a\u00e9\\b\ud83d\ude00c"}"#)
        guard case .object(let members) = try LocatedJSONParser.parse(source).kind else { Issue.record("not an object"); return }
        let node = members[0].value
        guard case .string(let text) = node.kind else { Issue.record("not a string"); return }
        #expect(text == "a\u{E9}\\b\u{1F600}c")
        #expect(node.scalarLocations.map(\.column) == [8, 9, 15, 17, 18, 30, 31])
    }

    // MARK: 9: a plugin that exits leaving a child holding its output

    @Test func aPluginsLeftoverChildIsKilledAndTheFailureIsImmediate() async throws {
        let folder = try TemporaryFolder.make()
        var manifest = try Self.scriptedPlugin([], in: folder)
        // A length no other test run on this machine uses, so pgrep finds only this child.
        let seconds = "300.\(UInt32.random(in: 1..<UInt32.max))"
        manifest.arguments = ["leave-child", seconds]
        let host = PluginHost(manifest: manifest, executableURL: manifest.executableURL(), limits: .standard, logger: Logger(label: "test"))
        let reply = await host.resolve(intent: PluginIntent(name: "typed"), parameter: "seconds")
        let failure = try #require(reply.failure)
        // A crash when it exits, not the time limit's `timedOut` while its child holds the output open.
        #expect(failure.kind == .crashed, "\(failure.reason)")
        #expect(failure.reason.contains("exited with status 4"), "\(failure.reason)")
        // Nothing of its process group is left: the `sleep` it started was killed.
        let leftovers = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/pgrep"), ["-x", "-f", "sleep \(seconds)"])
        #expect(leftovers.output.isEmpty, "children left running: \(leftovers.output)")
        await host.shutdown()
    }
}

enum ProbeFiles {
    /// A config whose policy restricts `restricted`.
    static func config(in folder: URL, restricted: [String]) throws -> URL {
        let policy = folder.appendingPathComponent("policy.json")
        let list = restricted.map { "\"\($0)\"" }.joined(separator: ", ")
        try "{\"restricted\": [\(list)]}".write(to: policy, atomically: true, encoding: .utf8)
        let config = folder.appendingPathComponent("config.json")
        try "{\"policyFile\": \"\(policy.path)\", \"spokenResponses\": false}".write(to: config, atomically: true, encoding: .utf8)
        return config
    }

}
