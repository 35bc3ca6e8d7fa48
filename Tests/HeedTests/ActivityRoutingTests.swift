import Foundation
import HeedCore
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
@testable import HeedRuntime
import Logging
import Synchronization
import HeedTesting
import Testing

/// Bare commands ("pause", "next", "louder") go to the app whose activity takes them: the rules of
/// ``ActivityRouter`` alone, then a matrix of apps × states × commands through the dispatcher with
/// real plugin processes (the fault plugin playing several apps).
@Suite("Activity routing")
struct ActivityRoutingTests {
    static func activity(
        _ id: String, kind: String = "media", state: PluginActivity.State = .running, controls: [PluginActivity.Control],
        names: [String] = [], started: Double? = nil, changed: Double? = nil
    ) -> PluginActivity {
        PluginActivity(id: id, title: id, kind: kind, state: state, controls: controls, names: names, started: started, changed: changed)
    }

    @Test func theRulesOfChoosing() {
        let music = AppActivity(appID: "org.a", activity: Self.activity("music", controls: [.pause, .stop, .next], names: ["spotify"]))
        let workout = AppActivity(appID: "org.b", activity: Self.activity("workout", kind: "workout", controls: [.pause, .stop]))
        let pause = ActivityRouting(control: .pause)
        #expect(ActivityRouter.choose(among: [], for: pause, target: nil) == .none)
        #expect(ActivityRouter.choose(among: [music], for: pause, target: nil) == .one(music))
        // Two fit and nothing decides: ask.
        #expect(ActivityRouter.choose(among: [music, workout], for: pause, target: nil) == .ask([music, workout]))
        // The kind narrows it ("pause the music"), and so does a name ("pause spotify").
        #expect(ActivityRouter.choose(among: [music, workout], for: ActivityRouting(control: .pause, kind: "media"), target: nil) == .one(music))
        #expect(ActivityRouter.choose(among: [music, workout], for: pause, target: "Spotify") == .one(music))
        #expect(ActivityRouter.choose(among: [music, workout], for: pause, target: "vlc") == .none)
        // Only what takes the control now.
        #expect(ActivityRouter.choose(among: [music, workout], for: ActivityRouting(control: .next), target: nil) == .one(music))
        #expect(ActivityRouter.choose(among: [music, workout], for: ActivityRouting(control: .resume), target: nil) == .none)
    }

    @Test func timesDecideWhenEveryOneIsKnown() {
        func app(_ id: String, started: Double?, changed: Double?, state: PluginActivity.State = .running) -> AppActivity {
            AppActivity(
                appID: "org.\(id)",
                activity: Self.activity(id, state: state, controls: state == .paused ? [.resume] : [.pause], started: started, changed: changed))
        }
        let pause = ActivityRouting(control: .pause)
        // The one started last.
        let older = app("older", started: 100, changed: 100)
        let newer = app("newer", started: 200, changed: 200)
        #expect(ActivityRouter.choose(among: [older, newer], for: pause, target: nil) == .one(newer))
        // One time unknown, or a tie: nothing decides.
        let unknown = app("unknown", started: nil, changed: nil)
        #expect(ActivityRouter.choose(among: [older, unknown], for: pause, target: nil) == .ask([older, unknown]))
        let tie = app("tie", started: 200, changed: 200)
        #expect(ActivityRouter.choose(among: [newer, tie], for: pause, target: nil) == .ask([newer, tie]))
        // "Resume" goes to what was paused last, whenever it started.
        let pausedFirst = app("first", started: 300, changed: 310, state: .paused)
        let pausedLast = app("last", started: 100, changed: 320, state: .paused)
        #expect(ActivityRouter.choose(among: [pausedFirst, pausedLast], for: ActivityRouting(control: .resume), target: nil) == .one(pausedLast))
    }

    @Test func aNameIsWholeWordsOfATitleOrName() {
        let firefox = Self.activity("Mozilla Firefox", controls: [.pause], names: ["firefox"])
        #expect(ActivityRouter.isCalled(firefox, "firefox"))
        #expect(ActivityRouter.isCalled(firefox, "mozilla firefox"))
        #expect(!ActivityRouter.isCalled(firefox, "fire"))
        #expect(!ActivityRouter.isCalled(firefox, ""))
    }

    // MARK: The matrix

    /// One app of the matrix: what it reports in each state.
    struct MatrixApp {
        var appID: String
        var kind: String
        /// The controls it takes when running and when paused.
        var running: [PluginActivity.Control]
        var paused: [PluginActivity.Control]
        var file: URL

        func activities(_ state: PluginActivity.State?, started: Double) -> [PluginActivity] {
            guard let state else { return [] }
            return [
                PluginActivity(
                    id: "\(kind)-1", title: "the \(kind)", kind: kind, state: state, controls: state == .running ? running : paused,
                    started: started, changed: started)
            ]
        }

        var manifest: PluginManifest {
            PluginManifest(
                appID: appID, displayName: appID, usageDescription: "Routing tests.",
                executable: Fixtures.heedBinary.deletingLastPathComponent().appendingPathComponent("heed-fault-plugin").path,
                arguments: ["activities", appID, file.path],
                intents: ["pause", "resume", "stop", "next", "volumeUp", "pauseMedia", "resumeMedia", "nextTrack"],
                directory: FileManager.default.temporaryDirectory)
        }
    }

    /// Apps × states × commands: every bare command and media command reaches the app the rules
    /// name, or asks when nothing decides, or says nothing fits — and never a denied app or one the
    /// user has not authorized yet.
    @Test func everyCommandReachesTheRightAppInEveryState() async throws {
        let folder = try TemporaryFolder.make()
        let apps = [
            MatrixApp(appID: "org.test.music", kind: "media", running: [.pause, .stop, .next, .volume], paused: [.resume, .stop, .next, .volume],
                file: folder.appendingPathComponent("music.json")),
            MatrixApp(appID: "org.test.timer", kind: "timer", running: [.pause, .stop], paused: [.resume, .stop],
                file: folder.appendingPathComponent("timer.json")),
            MatrixApp(appID: "org.test.workout", kind: "workout", running: [.pause, .stop], paused: [.resume, .stop],
                file: folder.appendingPathComponent("workout.json")),
        ]  // in app id order: the order Heed reads the options in
        // A denied app that always has music playing: never a candidate.
        let denied = MatrixApp(appID: "org.test.denied", kind: "media", running: [.pause, .stop, .next, .volume], paused: [],
            file: folder.appendingPathComponent("denied.json"))
        try JSONEncoder().encode(denied.activities(.running, started: 999)).write(to: denied.file)
        // And one the user has not decided about: Heed does not start its plugin to ask.
        let undecided = MatrixApp(appID: "org.test.undecided", kind: "media", running: [.pause, .stop, .next, .volume], paused: [],
            file: folder.appendingPathComponent("undecided.json"))
        try JSONEncoder().encode(undecided.activities(.running, started: 999)).write(to: undecided.file)
        let store = try DispatchTests.store(authorized: apps.map(\.appID), denied: [denied.appID])
        let catalog = try IntentCatalog.load(
            intents: [Fixtures.packageRoot.appendingPathComponent("intents")], grammars: [Fixtures.packageRoot.appendingPathComponent("grammars")])
        let dispatcher = Dispatcher(
            catalog: catalog, manifests: (apps + [denied, undecided]).map(\.manifest), authorization: store, logger: Logger(label: "test"))

        let commands: [(text: String, intent: String, control: PluginActivity.Control, kind: String?)] = [
            ("pause", "pause", .pause, nil), ("resume", "resume", .resume, nil), ("stop", "stop", .stop, nil),
            ("next", "next", .next, nil), ("louder", "volumeUp", .volume, nil), ("pause the music", "pauseMedia", .pause, "media"),
            ("resume the music", "resumeMedia", .resume, "media"), ("next track", "nextTrack", .next, "media"),
        ]
        let states: [PluginActivity.State?] = [nil, .running, .paused]
        var cases = 0
        var right = 0
        var failures: [String] = []
        for (index, combination) in Self.combinations(states, count: apps.count).enumerated() {
            // Start times: distinct in half the states (the latest decides), all equal in the others (ask).
            let distinct = index.isMultiple(of: 2)
            for (offset, app) in apps.enumerated() {
                let started = distinct ? Double(100 + offset * 10) : 100
                try JSONEncoder().encode(app.activities(combination[offset], started: started)).write(to: app.file)
            }
            for command in commands {
                cases += 1
                let fitting = apps.indices.filter { offset in
                    guard let state = combination[offset] else { return false }
                    let controls = state == .running ? apps[offset].running : apps[offset].paused
                    return controls.contains(command.control) && (command.kind == nil || apps[offset].kind == command.kind)
                }
                // What should happen, by the rules: none, the one, the latest when times differ, else ask.
                let expected: String
                var answers: [String] = []
                switch fitting.count {
                case 0: expected = "noActivity"
                case 1: expected = apps[fitting[0]].appID
                default:
                    if distinct, let latest = fitting.max() {
                        expected = apps[latest].appID
                    } else {
                        expected = apps[fitting[1]].appID
                        answers = ["the second one"]
                    }
                }
                let user = ScriptedUser(answers)
                let match = try #require(catalog.parse(command.text).first)
                #expect(match.intent == command.intent)
                let result = await dispatcher.dispatch(match, user: user)
                let got: String
                switch result.ending {
                case .success: got = String(result.message.prefix { $0 != " " })
                case .noActivity: got = "noActivity"
                default: got = "\(result.ending): \(result.message)"
                }
                let asked = !user.questions.isEmpty
                if got == expected && asked == !answers.isEmpty {
                    right += 1
                } else {
                    failures.append("\(combination) \(command.text): expected \(expected), got \(got) (asked: \(user.questions))")
                }
            }
        }
        await dispatcher.shutdown()
        print("activity routing matrix: \(right) of \(cases) right")
        #expect(cases == 27 * commands.count)
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func combinations<T>(_ values: [T], count: Int) -> [[T]] {
        guard count > 0 else { return [[]] }
        return combinations(values, count: count - 1).flatMap { rest in values.map { rest + [$0] } }
    }

    @Test func aPluginsActivitiesAreCheckedAndSanitized() {
        let many = (0..<100).map { Self.activity("a\($0)", controls: [.pause]) }
        let duplicated = [Self.activity("same", controls: [.pause]), Self.activity("same", controls: [.stop]), Self.activity("", controls: [.pause])]
        #expect(Dispatcher.valid(many).count == 64)
        #expect(Dispatcher.valid(duplicated).map(\.controls) == [[.pause]])
    }

    @Test func unknownControlsAreLeftOutAndTheWireFormatRoundTrips() throws {
        let line = #"{"type":"activities","activities":[{"id":"w","title":"the workout","kind":"workout","state":"running","controls":["pause","lap","stop"],"started":5}]}"#
        let message = try JSONDecoder().decode(PluginMessage.self, from: Data(line.utf8))
        guard case .activities(let activities) = message else {
            Issue.record("not an activities message: \(message)")
            return
        }
        #expect(activities.first?.controls == [.pause, .stop])
        #expect(activities.first?.started == 5)
        let again = try JSONDecoder().decode(PluginMessage.self, from: JSONEncoder().encode(message))
        #expect(again == message)
        // With an id it answers a request.
        let reply = #"{"id":4,"type":"activities","activities":[]}"#
        #expect(try JSONDecoder().decode(PluginMessage.self, from: Data(reply.utf8)) == .response(PluginResponse(id: 4, .activities([]))))
    }
}
