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

struct PauseWorkout: Intent {
    static let name = "pauseWorkout"
    init?(parameters: IntentParameters) {}
}

struct ResumeWorkout: Intent {
    static let name = "resumeWorkout"
    init?(parameters: IntentParameters) {}
}

struct EndWorkout: Intent {
    static let name = "endWorkout"
    init?(parameters: IntentParameters) {}
}

struct CancelWorkout: Intent {
    static let name = "cancelWorkout"
    init?(parameters: IntentParameters) {}
}

/// The one workout that may be in progress, with its active time and goal.
actor WorkoutSession {
    enum State: Equatable { case idle, running, paused }
    private(set) var state = State.idle
    private(set) var name = ""
    private var goal: Duration?
    private var activeBefore = Duration.zero
    private var runningSince: ContinuousClock.Instant?
    private var goalTask: Task<Void, Never>?

    var activeTime: Duration { activeBefore + (runningSince.map { .now - $0 } ?? .zero) }

    func start(_ name: String, goal: Duration?, context: PluginContext) {
        self.name = name
        self.goal = goal
        activeBefore = .zero
        runningSince = .now
        state = .running
        scheduleGoal(context: context)
    }

    func pause() {
        activeBefore = activeTime
        runningSince = nil
        state = .paused
        goalTask?.cancel()
    }

    func resume(context: PluginContext) {
        runningSince = .now
        state = .running
        scheduleGoal(context: context)
    }

    /// Ends the workout and returns its active time.
    func finish() -> Duration {
        let time = activeTime
        goalTask?.cancel()
        state = .idle
        runningSince = nil
        return time
    }

    private func scheduleGoal(context: PluginContext) {
        goalTask?.cancel()
        guard let goal, goal > activeTime else { return }
        let wait = goal - activeTime
        let name = self.name
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

struct PauseWorkoutHandler: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: PauseWorkout, context: PluginContext) async throws -> ConfirmOutcome {
        switch await session.state {
        case .idle: .failure(reason: "There is no workout to pause.")
        case .paused: .failure(reason: "Your workout is already paused.")
        case .running: .ready
        }
    }
    func handle(_ intent: PauseWorkout, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        await session.pause()
        return .success("Workout paused.")
    }
}

struct ResumeWorkoutHandler: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: ResumeWorkout, context: PluginContext) async throws -> ConfirmOutcome {
        switch await session.state {
        case .idle: .failure(reason: "There is no workout to resume.")
        case .running: .failure(reason: "Your workout is not paused.")
        case .paused: .ready
        }
    }
    func handle(_ intent: ResumeWorkout, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        await session.resume(context: context)
        return .inProgress("Resuming your workout.")
    }
}

struct EndWorkoutHandler: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: EndWorkout, context: PluginContext) async throws -> ConfirmOutcome {
        await session.state == .idle ? .failure(reason: "There is no workout to end.") : .ready
    }
    func handle(_ intent: EndWorkout, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        let name = await session.name
        let time = await session.finish()
        return .success("Your \(name) workout is saved: \(Spoken.duration(time)).")
    }
}

struct CancelWorkoutHandler: IntentHandler {
    let session: WorkoutSession
    func confirm(_ intent: CancelWorkout, context: PluginContext) async throws -> ConfirmOutcome {
        await session.state == .idle ? .failure(reason: "There is no workout to cancel.") : .ready
    }
    func handle(_ intent: CancelWorkout, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        _ = await session.finish()
        return .success("Workout canceled and not saved.")
    }
}

@main
struct WorkoutPlugin {
    static func main() async {
        let session = WorkoutSession()
        var plugin = Plugin(appID: "org.heed.workout")
        plugin.register(StartWorkoutHandler(session: session))
        plugin.register(PauseWorkoutHandler(session: session))
        plugin.register(ResumeWorkoutHandler(session: session))
        plugin.register(EndWorkoutHandler(session: session))
        plugin.register(CancelWorkoutHandler(session: session))
        await plugin.run()
    }
}
