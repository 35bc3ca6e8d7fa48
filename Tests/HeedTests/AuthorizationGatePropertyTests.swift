import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedPlugins
import HeedRuntime
import Logging
import HeedTesting
import Testing
import HeedState

/// The authorization gate as a property: over random combinations of statuses, policies,
/// extensions, duplicate app ids, apps claiming one intent and the working folder's plugins, a
/// plugin process is started only for an app that is authorized (or that the user allows when
/// asked) and not restricted. Process starts are counted by a wrapper, not read from outcomes.
/// Every dispatch path: the dispatcher (in process, many cases), `heed run TEXT`,
/// `heed run --audio` and `heed listen` through the ALSA file device (the built executable).
@Suite("Authorization gate property")
struct AuthorizationGatePropertyTests {
    /// One random situation.
    struct Scenario: CustomStringConvertible {
        enum Policy: CaseIterable { case none, restrictsApp, restrictsParent, restrictsOther, unreadable }
        enum Answer: CaseIterable { case yes, no, none }

        var isExtension: Bool
        var status: AuthorizationStatus
        var policy: Policy
        var duplicateAppID: Bool
        var secondApp: Bool
        var answer: Answer
        /// An impostor claiming the app id in the working folder (searched only when named).
        var impostorInWorkingFolder: Bool

        static let app = "org.gate.app"
        static let parent = "org.gate.parent"
        static let other = "org.gate.other"

        init(_ generator: inout SeededGenerator) {
            isExtension = Bool.random(using: &generator)
            status = [.authorized, .denied, .notDetermined].randomElement(using: &generator)!
            policy = Policy.allCases.randomElement(using: &generator)!
            duplicateAppID = Int.random(in: 0..<6, using: &generator) == 0
            secondApp = Int.random(in: 0..<6, using: &generator) == 0
            answer = Answer.allCases.randomElement(using: &generator)!
            impostorInWorkingFolder = Bool.random(using: &generator)
        }

        /// Whether the app's plugin may be started: the property under test.
        var mayStart: Bool {
            guard !duplicateAppID, !secondApp, policy != .unreadable, policy != .restrictsApp else { return false }
            if isExtension, policy == .restrictsParent { return false }
            return status == .authorized || (status == .notDetermined && answer == .yes)
        }

        var description: String {
            "extension \(isExtension), status \(status), policy \(policy), duplicate \(duplicateAppID), second app \(secondApp), "
                + "answer \(answer), impostor \(impostorInWorkingFolder)"
        }

        /// Writes plugins, policy, config and state into `folder`; returns the config file.
        func write(in folder: URL) throws -> (plugins: URL, config: URL, state: URL) {
            let plugins = folder.appendingPathComponent("plugins")
            func plugin(_ directory: String, appID: String, extensionOf: String? = nil, in root: URL = plugins) throws {
                let url = root.appendingPathComponent(directory)
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                var manifest: [String: Any] = [
                    "appId": appID, "displayName": "Gate", "usageDescription": "Tests the gate.",
                    "executable": try ProcessCounter.wrapper(in: folder, appID: appID).path, "intents": ["setTimer"],
                ]
                if let extensionOf { manifest["extensionOf"] = extensionOf }
                try JSONSerialization.data(withJSONObject: manifest).write(to: url.appendingPathComponent("plugin.json"))
            }
            try plugin("app", appID: Self.app, extensionOf: isExtension ? Self.parent : nil)
            if duplicateAppID { try plugin("again", appID: Self.app) }
            if secondApp { try plugin("other", appID: Self.other) }
            // The working folder (the test runs heed there) holds an impostor: never searched by default.
            if impostorInWorkingFolder { try plugin("impostor", appID: Self.app, in: folder.appendingPathComponent("cwd/plugins")) }
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("cwd"), withIntermediateDirectories: true)

            let policyFile = folder.appendingPathComponent("policy.json")
            let restricted: [String]
            switch policy {
            case .none, .unreadable: restricted = []
            case .restrictsApp: restricted = [Self.app]
            case .restrictsParent: restricted = [Self.parent]
            case .restrictsOther: restricted = [Self.other, "org.gate.someone"]
            }
            if policy == .unreadable {
                try FileManager.default.createDirectory(at: policyFile, withIntermediateDirectories: true)
            } else {
                try JSONSerialization.data(withJSONObject: ["restricted": restricted]).write(to: policyFile)
            }
            let config = folder.appendingPathComponent("config.json")
            try JSONSerialization.data(withJSONObject: ["policyFile": policyFile.path, "spokenResponses": false]).write(to: config)

            let state = folder.appendingPathComponent("state")
            let authorizationID = isExtension ? Self.parent : Self.app
            let store = AuthorizationStore(stateDirectory: state, policyFile: nil)
            if status != .notDetermined { try store.record(status, for: authorizationID, .siri) }
            if secondApp { try store.record(.authorized, for: Self.other, .siri) }
            return (plugins, config, state)
        }

        /// Checks the starts the wrapper counted against ``mayStart``.
        func check(_ folder: URL, path: String, allowAnswer: Bool = true) throws {
            let started = try ProcessCounter.started(in: folder)
            let expected = allowAnswer ? mayStart : mayStart && status == .authorized
            if expected {
                #expect(started.contains(Self.app), "\(path): not started: \(self)")
            } else {
                #expect(started.isEmpty, "\(path): started \(started): \(self)")
            }
            #expect(!started.contains(Self.other) || !secondApp, "\(path): the second app was started: \(self)")
        }
    }

    static let cases = ProcessInfo.processInfo.environment["HEED_GATE_CASES"].flatMap(Int.init) ?? 200

    @Test func theDispatcherStartsOnlyAuthorizedUnrestrictedPlugins() async throws {
        var generator = SeededGenerator(seed: 2026)
        var allowed = 0
        for _ in 0..<Self.cases {
            let scenario = Scenario(&generator)
            let folder = try TemporaryFolder.make()
            let files = try scenario.write(in: folder)
            let discovery = PluginCatalog.discover(in: [files.plugins])
            let configuration = try HeedConfiguration.load(file: files.config)
            let dispatcher = Dispatcher(
                catalog: DispatchTests.catalog, manifests: discovery.manifests, duplicates: discovery.duplicates,
                authorization: AuthorizationStore(stateDirectory: files.state, policyFile: configuration.policyFile),
                logger: Logger(label: "test"))
            let answers: [String] =
                switch scenario.answer {
                case .yes: ["yes"]
                case .no: ["no"]
                case .none: []
                }
            let match = IntentMatch(intent: "setTimer", parameters: ["duration": .duration(seconds: 300)])
            _ = await dispatcher.dispatch(match, user: ScriptedUser(answers))
            await dispatcher.shutdown()
            try scenario.check(folder, path: "dispatcher")
            if scenario.mayStart { allowed += 1 }
            try? FileManager.default.removeItem(at: folder)
        }
        // Both sides of the property were exercised.
        #expect(allowed > Self.cases / 20 && allowed < Self.cases - Self.cases / 20, "\(allowed) of \(Self.cases) allowed")
        print("authorization gate: \(Self.cases) dispatcher cases, \(allowed) allowed to start")
    }

    /// `heed run` as a user types it, in a folder whose plugins/ holds an impostor.
    @Test func heedRunStartsOnlyAuthorizedUnrestrictedPlugins() throws {
        var generator = SeededGenerator(seed: 7)
        for index in 0..<8 {
            let scenario = Scenario(&generator)
            let folder = try TemporaryFolder.make()
            let files = try scenario.write(in: folder)
            var arguments = ["run", "set a timer for five minutes", "--plugins", files.plugins.path, "--config", files.config.path, "--state-dir", files.state.path]
            switch scenario.answer {
            case .yes: arguments += ["--answer", "yes"]
            case .no: arguments += ["--answer", "no"]
            case .none: break
            }
            // Half the cases name no plugin folder: then the working folder must not be searched either.
            if index % 2 == 1 { arguments.removeSubrange(2...3) }
            try Fixtures.run(Fixtures.heedBinary, arguments, in: folder.appendingPathComponent("cwd"))
            if index % 2 == 1 {
                #expect(try ProcessCounter.started(in: folder).isEmpty, "heed run without --plugins started a plugin: \(scenario)")
            } else {
                try scenario.check(folder, path: "heed run")
            }
        }
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"))
    func heedRunAudioStartsOnlyAuthorizedUnrestrictedPlugins() throws {
        var generator = SeededGenerator(seed: 11)
        let recording = Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path
        var allowed = 0
        var cases = 0
        while cases < 4 {
            let scenario = Scenario(&generator)
            // Keep both sides: two allowed and two refused situations.
            guard (scenario.mayStart ? allowed : cases - allowed) < 2 else { continue }
            cases += 1
            if scenario.mayStart { allowed += 1 }
            let folder = try TemporaryFolder.make()
            let files = try scenario.write(in: folder)
            var arguments = [
                "run", "--audio", recording, "--reject-below", "0.1", "--plugins", files.plugins.path, "--config", files.config.path,
                "--state-dir", files.state.path,
            ]
            if scenario.answer != .none { arguments += ["--answer", scenario.answer == .yes ? "yes" : "no"] }
            let result = try Fixtures.run(Fixtures.heedBinary, arguments, in: folder.appendingPathComponent("cwd"))
            #expect(result.error.contains("heard") || result.output.contains("heard"), "\(result)")
            try scenario.check(folder, path: "heed run --audio")
        }
    }

    @Test(.enabled(if: Fixtures.hasPocketSphinx && Fixtures.hasEspeak, "needs pocketsphinx-en-us and espeak-ng"))
    func heedListenStartsOnlyAuthorizedUnrestrictedPlugins() throws {
        var generator = SeededGenerator(seed: 13)
        let recording = try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path)
        var allowed = 0
        var cases = 0
        while cases < 4 {
            let scenario = Scenario(&generator)
            guard (scenario.mayStart && scenario.status == .authorized ? allowed : cases - allowed) < 2 else { continue }
            cases += 1
            if scenario.mayStart && scenario.status == .authorized { allowed += 1 }
            let home = try ListenCommandTests.Home(input: ListenCommandTests.silence(0.5) + recording.samples + ListenCommandTests.silence(3))
            let files = try scenario.write(in: home.url)
            let result = try Fixtures.run(
                Fixtures.heedBinary,
                [
                    "listen", "--json", "--max-seconds", String(home.seconds), "--reject-below", "0.1", "--plugins", files.plugins.path,
                    "--config", files.config.path, "--state-dir", files.state.path, "--data-dir", home.data,
                ],
                in: home.url.appendingPathComponent("cwd"), environment: ["HOME": home.url.path])
            #expect(result.output.contains("\"intent\":\"setTimer\""), "the listener did not hear the command: \(result.output)")
            // Nobody answers a spoken question here: a notDetermined app stays unstarted.
            try scenario.check(home.url, path: "heed listen", allowAnswer: false)
        }
    }
}
