import Foundation
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
import HeedRuntime
import Logging
import Synchronization
import Testing
import HeedState
import HeedTesting

/// Collects conversation events.
final class EventLog: Sendable {
    private let events = Mutex<[ConversationEvent]>([])
    func append(_ event: ConversationEvent) { events.withLock { $0.append(event) } }
    var all: [ConversationEvent] { events.withLock { $0 } }
    func names() -> [String] { all.map(\.event) }
    func outcomes(_ name: String) -> [String] { all.filter { $0.event == name }.compactMap(\.outcome) }
}

/// The conversation with real plugin processes: the built example plugins and the fault plugin.
@Suite("Dispatch conversation (real plugins)")
struct DispatchTests {
    static let catalog: IntentCatalog = {
        // The shipped intents plus the fault plugin's intents; only templates the tests type.
        let fault = """
            {"domain": "fault", "intents": [
              {"name": "ok", "description": "Do nothing.", "templates": ["be okay"]},
              {"name": "crash", "description": "Crash.", "templates": ["crash now"]},
              {"name": "hang", "description": "Hang.", "templates": ["hang now"]}
            ]}
            """
        let root = Fixtures.packageRoot
        do {
            let files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("intents").path)
                .filter { $0.hasSuffix(".json") }.sorted()
            let sources = try files.map { name -> (path: String, text: String) in
                let url = root.appendingPathComponent("intents/\(name)")
                return (url.path, try String(contentsOf: url, encoding: .utf8))
            }
            let rules = try ["intent-phrases.gram"].map { name -> (path: String, text: String) in
                let url = root.appendingPathComponent("grammars/\(name)")
                return (url.path, try String(contentsOf: url, encoding: .utf8))
            }
            return try IntentCatalog(intentSources: sources + [("fault.json", fault)], ruleSources: rules)
        } catch {
            fatalError("the shipped intents do not load: \(error)")
        }
    }()

    static var examples: [PluginManifest] {
        PluginCatalog.discover(in: [Fixtures.packageRoot.appendingPathComponent("plugins")]).manifests
    }

    static func faultPlugin(extensionOf parent: String? = nil, usageDescription: String? = "Misbehaves for tests.") -> PluginManifest {
        PluginManifest(
            appID: "org.heed.fault",
            displayName: "Fault",
            usageDescription: usageDescription,
            executable: Fixtures.heedBinary.deletingLastPathComponent().appendingPathComponent("heed-fault-plugin").path,
            intents: ["ok", "crash", "hang"],
            extensionOf: parent,
            directory: FileManager.default.temporaryDirectory
        )
    }

    /// A store in a fresh folder; `restricted` apps are in its admin policy.
    static func store(authorized: [String] = [], denied: [String] = [], restricted: [String] = []) throws -> AuthorizationStore {
        let folder = try TemporaryFolder.make()
        let policy = folder.appendingPathComponent("policy.json")
        let list = restricted.map { "\"\($0)\"" }.joined(separator: ", ")
        try "{\"restricted\": [\(list)]}".write(to: policy, atomically: true, encoding: .utf8)
        let store = AuthorizationStore(stateDirectory: folder.appendingPathComponent("state"), policyFile: policy)
        for app in authorized { try store.record(.authorized, for: app, .siri) }
        for app in denied { try store.record(.denied, for: app, .siri) }
        return store
    }

    static func dispatcher(_ store: AuthorizationStore, manifests: [PluginManifest] = examples, limits: PluginLimits = .standard) -> Dispatcher {
        Dispatcher(catalog: catalog, manifests: manifests, authorization: store, pluginLimits: limits, logger: Logger(label: "test"))
    }

    static func run(
        _ match: IntentMatch,
        store: AuthorizationStore,
        answers: [String] = [],
        manifests: [PluginManifest] = examples
    ) async -> (result: ConversationResult, user: ScriptedUser, events: EventLog) {
        let dispatcher = dispatcher(store, manifests: manifests)
        let user = ScriptedUser(answers)
        let log = EventLog()
        let result = await dispatcher.dispatch(match, user: user) { log.append($0) }
        await dispatcher.shutdown()
        return (result, user, log)
    }

    static let tenMinuteTimer = IntentMatch(intent: "setTimer", parameters: ["duration": .duration(seconds: 600), "label": .vocabulary("pasta")])

    // MARK: Authorization gate

    @Test func dispatchesToAnAuthorizedApp() async throws {
        let (result, user, events) = await Self.run(Self.tenMinuteTimer, store: try Self.store(authorized: ["org.heed.timer"]))
        #expect(result.ending == .success)
        #expect(result.message == "Pasta timer set for 10 minutes.")
        #expect(user.questions.isEmpty)
        #expect(events.names() == ["intent", "authorization", "resolve", "resolve", "confirm", "handle", "response", "end"])
        #expect(events.all.filter { $0.event != "intent" && $0.event != "response" && $0.event != "end" }.allSatisfy { ($0.milliseconds ?? -1).isFinite && ($0.milliseconds ?? -1) >= 0 })
    }

    @Test(arguments: [(["yes"], true), (["no"], false), ([], false)])
    func asksOnceWhenNotDetermined(answers: [String], dispatched: Bool) async throws {
        let store = try Self.store()
        let first = await Self.run(Self.tenMinuteTimer, store: store, answers: answers)
        #expect(first.user.questions.count == 1)
        #expect(first.user.questions.first?.contains("Sets kitchen timers by voice and tells you when they end.") == true)
        #expect((first.result.ending == .success) == dispatched)
        #expect(first.events.names().contains("handle") == dispatched)
        let second = await Self.run(Self.tenMinuteTimer, store: store, answers: answers)
        // The answer was recorded: not asked again (an unanswered question is asked again).
        #expect(second.user.questions.count == (answers.isEmpty ? 1 : 0))
        #expect((second.result.ending == .success) == dispatched)
    }

    @Test func neverDispatchesToADeniedOrRestrictedApp() async throws {
        let denied = await Self.run(Self.tenMinuteTimer, store: try Self.store(denied: ["org.heed.timer"]), answers: ["yes"])
        #expect(denied.result.ending == .unauthorized)
        #expect(denied.user.questions.isEmpty)
        #expect(!denied.events.names().contains("resolve"))
        #expect(denied.result.message.contains("heed auth grant org.heed.timer"))

        let restricted = await Self.run(
            Self.tenMinuteTimer,
            store: try Self.store(authorized: [], restricted: ["org.heed.timer"]),
            answers: ["yes"]
        )
        #expect(restricted.result.ending == .unauthorized)
        #expect(restricted.user.questions.isEmpty)
        #expect(restricted.events.outcomes("end") == ["unauthorized"])
        #expect(restricted.events.all.first { $0.event == "authorization" }?.status == "restricted")
    }

    @Test func refusesAPluginWithoutUsageDescription() async throws {
        let manifest = Self.faultPlugin(usageDescription: nil)
        let (result, user, _) = await Self.run(IntentMatch(intent: "ok", parameters: [:]), store: try Self.store(), answers: ["yes"], manifests: [manifest])
        #expect(result.ending == .unauthorized)
        #expect(user.questions.isEmpty)
        #expect(result.message.contains("usageDescription"))
        #expect(result.message.contains("org.heed.fault"))
    }

    @Test func anExtensionSharesItsParentsStatus() async throws {
        let manifest = Self.faultPlugin(extensionOf: "org.heed.timer")
        let allowed = await Self.run(IntentMatch(intent: "ok", parameters: [:]), store: try Self.store(authorized: ["org.heed.timer"]), manifests: [manifest])
        #expect(allowed.result.ending == .success)
        #expect(allowed.user.questions.isEmpty)
        let refused = await Self.run(IntentMatch(intent: "ok", parameters: [:]), store: try Self.store(denied: ["org.heed.timer"]), manifests: [manifest])
        #expect(refused.result.ending == .unauthorized)
    }

    // MARK: Resolution outcomes

    @Test func asksBetweenSimilarPlaylistsAndPlaysTheChosenOne() async throws {
        let match = IntentMatch(intent: "playMedia", parameters: ["playlist": .vocabulary("road trip")])
        let (result, user, events) = await Self.run(match, store: try Self.store(authorized: ["org.heed.media"]), answers: ["the second one"])
        #expect(events.outcomes("resolve") == ["disambiguation", "success"])
        #expect(user.questions == ["Which one: Road Trip or Road Trip Classics?"])
        #expect(result.ending == .success)
        #expect(result.message.contains("Road Trip Classics"))
    }

    @Test func picksAnOptionByName() async throws {
        let match = IntentMatch(intent: "playMedia", parameters: ["playlist": .vocabulary("road trip")])
        let (result, _, _) = await Self.run(match, store: try Self.store(authorized: ["org.heed.media"]), answers: ["road trip"])
        #expect(result.ending == .success)
        #expect(!result.message.contains("Classics"))
    }

    @Test func endsOnAnUnsupportedValue() async throws {
        let match = IntentMatch(intent: "playMedia", parameters: ["playlist": .vocabulary("polka party")])
        let (result, _, events) = await Self.run(match, store: try Self.store(authorized: ["org.heed.media"]))
        #expect(events.outcomes("resolve") == ["unsupported"])
        #expect(result.ending == .unresolved)
        #expect(!events.names().contains("handle"))
    }

    @Test func asksForAMissingValueAndParsesTheAnswer() async throws {
        let match = IntentMatch(intent: "setTimer", parameters: [:])
        let (result, user, events) = await Self.run(match, store: try Self.store(authorized: ["org.heed.timer"]), answers: ["an hour and a half"])
        #expect(events.outcomes("resolve").prefix(2) == ["needsValue", "success"])
        #expect(user.questions.count == 1)
        #expect(result.ending == .success)
        #expect(events.all.first { $0.event == "resolve" && $0.outcome == "success" }?.values == [.number(5400)])
    }

    @Test func aMissingPlaylistIsAskedForAndTheAnswerUsesRegisteredVocabulary() async throws {
        let dispatcher = Dispatcher(
            catalog: Self.catalog,
            manifests: Self.examples,
            authorization: try Self.store(authorized: ["org.heed.media"]),
            logger: Logger(label: "test")
        )
        let user = ScriptedUser(["morning jazz"])
        let registered = VocabularySnapshot(terms: ["playlistTitle": ["Morning Jazz", "Road Trip"]])
        let result = await dispatcher.dispatch(IntentMatch(intent: "playMedia", parameters: [:]), vocabulary: registered, user: user)
        await dispatcher.shutdown()
        #expect(user.questions.count == 1)
        #expect(result.ending == .success)
        #expect(result.message.contains("Morning Jazz"))
    }

    @Test func eachCommandsAnswersUseTheVocabularyItWasHeardWith() async throws {
        let dispatcher = Dispatcher(
            catalog: Self.catalog, manifests: Self.examples, authorization: try Self.store(authorized: ["org.heed.media"]),
            logger: Logger(label: "test"))
        // Before a playlist is registered the answer is not understood; once the listener hears
        // with the new vocabulary (registered while Heed runs), the same dispatcher understands it.
        let before = await dispatcher.dispatch(IntentMatch(intent: "playMedia", parameters: [:]), user: ScriptedUser(["morning jazz"]))
        let registered = VocabularySnapshot(terms: ["playlistTitle": ["Morning Jazz"]])
        let after = await dispatcher.dispatch(
            IntentMatch(intent: "playMedia", parameters: [:]), vocabulary: registered, user: ScriptedUser(["morning jazz"]))
        await dispatcher.shutdown()
        #expect(before.ending != .success)
        #expect(after.ending == .success)
        #expect(after.message.contains("Morning Jazz"))
    }

    @Test func cancelEndsTheConversationAtAnyTurn() async throws {
        let match = IntentMatch(intent: "setTimer", parameters: [:])
        let (result, _, events) = await Self.run(match, store: try Self.store(authorized: ["org.heed.timer"]), answers: ["cancel"])
        #expect(result.ending == .cancelled)
        #expect(!events.names().contains("handle"))
    }

    @Test func asksForConfirmationWhenTheIntentRequiresIt() async throws {
        let store = try Self.store(authorized: ["org.heed.workout"])
        let dispatcher = Self.dispatcher(store)
        let start = await dispatcher.dispatch(IntentMatch(intent: "startWorkout", parameters: ["workoutName": .vocabulary("run")]), user: ScriptedUser())
        #expect(start.ending == .inProgress)
        let declined = ScriptedUser(["no"])
        let kept = await dispatcher.dispatch(IntentMatch(intent: "cancelWorkout", parameters: [:]), user: declined)
        #expect(kept.ending == .cancelled)
        #expect(declined.questions.count == 1)
        let confirmed = await dispatcher.dispatch(IntentMatch(intent: "cancelWorkout", parameters: [:]), user: ScriptedUser(["yes"]))
        #expect(confirmed.ending == .success)
        await dispatcher.shutdown()
    }

    @Test func pausingWhenNothingRunsFailsWithAReason() async throws {
        let (result, _, _) = await Self.run(IntentMatch(intent: "pauseWorkout", parameters: [:]), store: try Self.store(authorized: ["org.heed.workout"]))
        #expect(result.ending == .failure)
        #expect(result.message.lowercased().contains("no workout"))
    }

    @Test func theCPluginHandlesNotes() async throws {
        let match = IntentMatch(intent: "addToList", parameters: ["item": .vocabulary("milk"), "list": .vocabulary("shopping")])
        let (result, _, _) = await Self.run(match, store: try Self.store(authorized: ["org.heed.notes"]))
        #expect(result.ending == .success)
        #expect(result.message.contains("milk"))
    }

    // MARK: Faults

    @Test func aCrashingPluginEndsOneConversationNotHeed() async throws {
        let store = try Self.store(authorized: ["org.heed.fault"])
        let dispatcher = Dispatcher(
            catalog: Self.catalog,
            manifests: [Self.faultPlugin()],
            authorization: store,
            pluginLimits: PluginLimits(operationTimeLimit: .milliseconds(500)),
            logger: Logger(label: "test")
        )
        let crash = await dispatcher.dispatch(IntentMatch(intent: "crash", parameters: [:]), user: ScriptedUser())
        #expect(crash.ending == .failure)
        let hang = await dispatcher.dispatch(IntentMatch(intent: "hang", parameters: [:]), user: ScriptedUser())
        #expect(hang.ending == .failure)
        // The plugin is restarted (after its back-off) and the next conversation works.
        try await Task.sleep(for: .seconds(1))
        let fine = await dispatcher.dispatch(IntentMatch(intent: "ok", parameters: [:]), user: ScriptedUser())
        #expect(fine.ending == .success)
        await dispatcher.shutdown()
    }

    @Test func anIntentNoPluginHandlesIsReported() async throws {
        let (result, _, _) = await Self.run(IntentMatch(intent: "orderDrink", parameters: [:]), store: try Self.store())
        #expect(result.ending == .noHandler)
    }
}

/// `heed run` end to end: the built binary, real plugins, text and recorded audio.
@Suite("heed run command line")
struct RunCommandTests {
    static let timerRecording = Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path

    private func heed(_ arguments: [String], state: URL) throws -> (status: Int32, output: String, error: String) {
        // Run from the package root: intents/, grammars/ and plugins/ are found there.
        try Fixtures.run(Fixtures.heedBinary, arguments + ["--state-dir", state.path], in: Fixtures.packageRoot)
    }

    @Test(
        .enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"),
        arguments: [("authorized", true), ("denied", false), ("restricted", false), ("notDetermined", false)]
    )
    func recordedAudioIsDispatchedOnlyWhenAuthorized(status: String, dispatched: Bool) throws {
        let state = try TemporaryFolder.make()
        if status == "authorized" || status == "denied" {
            let verb = status == "authorized" ? "grant" : "deny"
            #expect(try heed(["auth", verb, "org.heed.timer"], state: state).status == 0)
        }
        var arguments = ["run", "--json", "--audio", Self.timerRecording, "--reject-below", "0.1"]
        if status == "restricted" {
            let config = state.appendingPathComponent("config.json")
            let policy = state.appendingPathComponent("policy.json")
            try "{\"restricted\": [\"org.heed.timer\"]}".write(to: policy, atomically: true, encoding: .utf8)
            try "{\"policyFile\": \"\(policy.path)\"}".write(to: config, atomically: true, encoding: .utf8)
            arguments += ["--config", config.path]
        }
        // notDetermined: no terminal and no --answer, so the question goes unanswered.
        let result = try heed(arguments, state: state)
        #expect(result.output.contains("\"text\":\"set a timer for five minutes\""))
        #expect(result.output.contains("\"event\":\"handle\"") == dispatched, "\(result.output)\(result.error)")
        #expect((result.status == 0) == dispatched)
    }

    @Test func typedTextIsDispatchedAndReportsEachStep() throws {
        let state = try TemporaryFolder.make()
        let result = try heed(["run", "--json", "set a timer", "--answer", "yes", "--answer", "ninety seconds"], state: state)
        #expect(result.status == 0)
        let events = result.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        #expect(events.compactMap { $0["event"] as? String } == [
            "intent", "prompt", "answer", "authorization", "resolve", "prompt", "answer", "resolve", "resolve", "confirm", "handle", "response", "end",
            // The authorization question comes first: Timers is not determined in a fresh state folder.
        ])
        #expect(events.last?["outcome"] as? String == "success")
        #expect(events.first { $0["event"] as? String == "handle" }?["milliseconds"] != nil)
    }

    @Test func aTimerFiresWhileHeedWaits() throws {
        let state = try TemporaryFolder.make()
        let result = try heed(["run", "--json", "set a tea timer for two seconds", "--answer", "yes", "--wait", "8"], state: state)
        #expect(result.status == 0)
        #expect(result.output.contains(#"{"event":"notification","intent":"setTimer","text":"Your tea timer is done."}"#), "\(result.output)")
    }

    @Test func unmatchedTextFailsWithStatus1() throws {
        let result = try heed(["run", "what is the meaning of life"], state: try TemporaryFolder.make())
        #expect(result.status == 1)
        #expect(result.error.contains("no intent matches"))
    }
}
