import Foundation
import HeedPluginKit

/// The workouts the plugin knows, as the `workoutName` vocabulary registers them.
let workoutNames = ["run", "walk", "cycle", "swim", "yoga", "rowing", "strength training", "hike"]

struct StartWorkout: Intent {
    static let name = "startWorkout"
    static let requiredParameters: Set<String> = ["workoutName"]
    var workoutName: String
    var goal: Duration?
    init?(parameters: IntentParameters) {
        guard let name = parameters.string("workoutName") else { return nil }
        workoutName = name.lowercased()
        goal = parameters.duration("goal")
    }
}

/// An intent without parameters the plugin reads: the workout intents, and the bare control
/// intents ("pause", "resume", "stop") Heed sends when the workout is what they are for.
struct PlainIntent<Name: IntentName>: Intent {
    static var name: String { Name.value }
    init?(parameters: IntentParameters) {}
}

protocol IntentName: Sendable { static var value: String { get } }
enum PauseWorkoutName: IntentName { static let value = "pauseWorkout" }
enum ResumeWorkoutName: IntentName { static let value = "resumeWorkout" }
enum EndWorkoutName: IntentName { static let value = "endWorkout" }
enum CancelWorkoutName: IntentName { static let value = "cancelWorkout" }
enum PauseName: IntentName { static let value = "pause" }
enum ResumeName: IntentName { static let value = "resume" }
enum StopName: IntentName { static let value = "stop" }

/// The one workout that may be in progress, with its active time and goal.
///
/// It is kept in `workout.json` in the plugin's state folder, in wall-clock time, so that a workout
/// started by one `heed run` is paused by the next, and a listening Heed that restarts the plugin
/// finds it going on.
actor WorkoutSession {
    enum State: String, Codable { case idle, running, paused }

    struct Saved: Codable {
        var state = State.idle
        var name = ""
        var goalSeconds: Double?
        var activeSecondsBefore = 0.0
        var runningSince: Double?
        var started: Double?
        var changed: Double?
    }

    private var saved: Saved
    private let stored = StoredValue<Saved>("workout.json")
    private var goalTask: Task<Void, Never>?

    init() {
        saved = stored.load() ?? Saved()
    }

    var state: State { saved.state }
    var name: String { saved.name }

    var activeTime: Duration {
        let running = saved.runningSince.map { max(0, Date().timeIntervalSince1970 - $0) } ?? 0
        return .milliseconds(Int64(((saved.activeSecondsBefore + running) * 1000).rounded()))
    }

    /// The workout as an activity Heed routes bare commands to, or none.
    var activities: [PluginActivity] {
        switch saved.state {
        case .idle: []
        case .running, .paused:
            [
                PluginActivity(
                    id: "workout", title: "the \(saved.name) workout", kind: "workout",
                    state: saved.state == .running ? .running : .paused,
                    controls: saved.state == .running ? [.pause, .stop] : [.resume, .stop],
                    names: ["workout", saved.name], started: saved.started, changed: saved.changed)
            ]
        }
    }

    /// After the plugin starts: the goal of a workout that is running still gets its notification.
    func restore(context: PluginContext) {
        if saved.state == .running { scheduleGoal(context: context) }
    }

    func start(_ name: String, goal: Duration?, context: PluginContext) {
        let now = Date().timeIntervalSince1970
        saved = Saved(
            state: .running, name: name, goalSeconds: goal.map(Self.seconds), activeSecondsBefore: 0, runningSince: now,
            started: now, changed: now)
        changed(context)
        scheduleGoal(context: context)
    }

    func pause(context: PluginContext) {
        saved.activeSecondsBefore = Self.seconds(activeTime)
        saved.runningSince = nil
        saved.state = .paused
        saved.changed = Date().timeIntervalSince1970
        goalTask?.cancel()
        changed(context)
    }

    func resume(context: PluginContext) {
        saved.runningSince = Date().timeIntervalSince1970
        saved.state = .running
        saved.changed = saved.runningSince
        changed(context)
        scheduleGoal(context: context)
    }

    /// Ends the workout and returns its active time.
    func finish(context: PluginContext) -> Duration {
        let time = activeTime
        goalTask?.cancel()
        saved = Saved()
        changed(context)
        return time
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Saves the state and tells Heed what is going on now.
    private func changed(_ context: PluginContext) {
        stored.save(saved)
        context.reportActivities(activities)
    }

    private func scheduleGoal(context: PluginContext) {
        goalTask?.cancel()
        guard let goalSeconds = saved.goalSeconds else { return }
        let goal = Duration.milliseconds(Int64(goalSeconds * 1000))
        guard goal > activeTime else { return }
        let wait = goal - activeTime
        let name = saved.name
        goalTask = Task {
            try? await Task.sleep(for: wait)
            guard !Task.isCancelled else { return }
            context.notify(
                "You reached your \(Spoken.duration(goal)) \(name) goal.", intent: StartWorkout.name, event: "goalReached")
        }
    }
}

/// Starting while a workout is in progress fails with a reason (confirm answers
/// `failure`): the user ends or cancels the current one first. It never replaces it silently.
struct StartWorkoutHandler: IntentHandler {
    let session: WorkoutSession

    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        switch request.parameter {
        case "workoutName":
            guard let name = request.value?.stringValue, !name.isEmpty else { return .needsValue }
            guard workoutNames.contains(name.lowercased()) else {
                return .unsupported(reason: "I don't know a \(name) workout.")
            }
            return .success(.string(name.lowercased()))
        case "goal":
            guard let value = request.value else { return .notRequired }
            guard let goal = value.durationValue, goal >= .seconds(1) else {
                return .unsupported(reason: "A goal must be a length of time.")
            }
            return .success(value)
        default:
            return request.value.map(ResolveOutcome.success) ?? .notRequired
        }
    }

    func confirm(_ intent: StartWorkout, context: PluginContext) async throws -> ConfirmOutcome {
        guard await session.state == .idle else {
            return .failure(reason: "A \(await session.name) workout is already in progress. End it first.")
        }
        return .ready
    }

    func handle(_ intent: StartWorkout, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        await session.start(intent.workoutName, goal: intent.goal, context: context)
        let goal = intent.goal.map { " with a goal of \(Spoken.duration($0))" } ?? ""
        return .inProgress("Starting your \(intent.workoutName) workout\(goal).")
    }
}

struct PauseWorkoutHandler<Name: IntentName>: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> ConfirmOutcome {
        switch await session.state {
        case .idle: .failure(reason: "There is no workout to pause.")
        case .paused: .failure(reason: "Your workout is already paused.")
        case .running: .ready
        }
    }
    func handle(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        await session.pause(context: context)
        return .success("Workout paused.")
    }
}

struct ResumeWorkoutHandler<Name: IntentName>: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> ConfirmOutcome {
        switch await session.state {
        case .idle: .failure(reason: "There is no workout to resume.")
        case .running: .failure(reason: "Your workout is not paused.")
        case .paused: .ready
        }
    }
    func handle(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        await session.resume(context: context)
        return .inProgress("Resuming your workout.")
    }
}

struct EndWorkoutHandler<Name: IntentName>: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> ConfirmOutcome {
        await session.state == .idle ? .failure(reason: "There is no workout to end.") : .ready
    }
    func handle(_ intent: PlainIntent<Name>, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        let name = await session.name
        let time = await session.finish(context: context)
        return .success("Your \(name) workout is saved: \(Spoken.duration(time)).")
    }
}

struct CancelWorkoutHandler: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: PlainIntent<CancelWorkoutName>, context: PluginContext) async throws -> ConfirmOutcome {
        await session.state == .idle ? .failure(reason: "There is no workout to cancel.") : .ready
    }
    func handle(_ intent: PlainIntent<CancelWorkoutName>, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        _ = await session.finish(context: context)
        return .success("Workout canceled and not saved.")
    }
}

@main
struct WorkoutPlugin {
    static func main() async {
        let session = WorkoutSession()
        var plugin = Plugin(appID: "org.heed.workout")
        plugin.register(StartWorkoutHandler(session: session))
        plugin.register(PauseWorkoutHandler<PauseWorkoutName>(session: session))
        plugin.register(ResumeWorkoutHandler<ResumeWorkoutName>(session: session))
        plugin.register(EndWorkoutHandler<EndWorkoutName>(session: session))
        plugin.register(CancelWorkoutHandler(session: session))
        // The bare "pause", "resume" and "stop" when the workout is what they are for.
        plugin.register(PauseWorkoutHandler<PauseName>(session: session))
        plugin.register(ResumeWorkoutHandler<ResumeName>(session: session))
        plugin.register(EndWorkoutHandler<StopName>(session: session))
        plugin.reportActivities { _ in await session.activities }
        plugin.onStart { context in await session.restore(context: context) }
        await plugin.run()
    }
}
