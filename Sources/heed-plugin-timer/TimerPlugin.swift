import HeedPluginKit

/// `setTimer`: start a timer of `duration` seconds, with an optional `label`.
struct SetTimer: Intent {
    static let name = "setTimer"
    static let requiredParameters: Set<String> = ["duration"]
    var duration: Duration
    var label: String?

    init?(parameters: IntentParameters) {
        guard let duration = parameters.duration("duration") else { return nil }
        self.duration = duration
        self.label = parameters.string("label")
    }
}

/// `cancelTimer`: cancel the timer with `label`, or every timer when no label is given.
struct CancelTimer: Intent {
    static let name = "cancelTimer"
    var label: String?
    init?(parameters: IntentParameters) { label = parameters.string("label") }
}

/// `timeRemaining`: how long the timer with `label` (or the one ending soonest) has left.
struct TimeRemaining: Intent {
    static let name = "timeRemaining"
    var label: String?
    init?(parameters: IntentParameters) { label = parameters.string("label") }
}

/// The running timers. A timer is a task that sleeps, then notifies.
actor TimerStore {
    struct RunningTimer {
        var label: String?
        var deadline: ContinuousClock.Instant
        var task: Task<Void, Never>
    }

    private var timers: [Int: RunningTimer] = [:]
    private var nextID = 1

    var isEmpty: Bool { timers.isEmpty }

    func start(_ duration: Duration, label: String?, context: PluginContext) {
        let id = nextID
        nextID += 1
        let task = Task {
            try? await Task.sleep(for: duration)
            guard !Task.isCancelled else { return }
            self.fire(id, context: context)
        }
        timers[id] = RunningTimer(label: label, deadline: .now + duration, task: task)
    }

    private func fire(_ id: Int, context: PluginContext) {
        guard let timer = timers.removeValue(forKey: id) else { return }
        let text = timer.label.map { "Your \($0) timer is done." } ?? "Your timer is done."
        context.notify(text, intent: SetTimer.name, event: "timerFired")
    }

    /// Cancels matching timers and returns how many were canceled.
    func cancel(label: String?) -> Int {
        let matching = timers.filter { label == nil || $0.value.label?.lowercased() == label?.lowercased() }
        for (id, timer) in matching {
            timer.task.cancel()
            timers[id] = nil
        }
        return matching.count
    }

    func remaining(label: String?) -> (label: String?, remaining: Duration)? {
        let matching = timers.values.filter { label == nil || $0.label?.lowercased() == label?.lowercased() }
        guard let soonest = matching.min(by: { $0.deadline < $1.deadline }) else { return nil }
        return (soonest.label, max(.zero, soonest.deadline - .now))
    }

    func has(label: String?) -> Bool {
        timers.values.contains { label == nil || $0.label?.lowercased() == label?.lowercased() }
    }
}

struct SetTimerHandler: IntentHandler {
    let store: TimerStore

    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        guard request.parameter == "duration" else {
            return request.value.map(ResolveOutcome.success) ?? .notRequired
        }
        guard let value = request.value else { return .needsValue }
        guard let duration = value.durationValue else { return .unsupported(reason: "A timer needs a length in seconds.") }
        if duration < .seconds(1) { return .unsupported(reason: "A timer must last at least one second.") }
        if duration > .seconds(24 * 3600) { return .unsupported(reason: "A timer can last at most 24 hours.") }
        return .success(value)
    }

    func handle(_ intent: SetTimer, context: PluginContext) async throws -> HandleOutcome {
        await store.start(intent.duration, label: intent.label, context: context)
        let what = intent.label.map { "\($0.prefix(1).uppercased())\($0.dropFirst()) timer" } ?? "Timer"
        return .success("\(what) set for \(Spoken.duration(intent.duration)).")
    }
}

struct CancelTimerHandler: IntentHandler {
    let store: TimerStore

    func confirm(_ intent: CancelTimer, context: PluginContext) async throws -> ConfirmOutcome {
        await store.has(label: intent.label) ? .ready : .failure(reason: Self.nothingToCancel(intent.label))
    }

    func handle(_ intent: CancelTimer, context: PluginContext) async throws -> HandleOutcome {
        let count = await store.cancel(label: intent.label)
        switch count {
        case 0: return .failure(Self.nothingToCancel(intent.label))
        case 1: return .success(intent.label.map { "\($0) timer canceled." } ?? "Timer canceled.")
        default: return .success("\(count) timers canceled.")
        }
    }

    static func nothingToCancel(_ label: String?) -> String {
        label.map { "There is no \($0) timer running." } ?? "There is no timer running."
    }
}

struct TimeRemainingHandler: IntentHandler {
    let store: TimerStore

    func handle(_ intent: TimeRemaining, context: PluginContext) async throws -> HandleOutcome {
        guard let (label, remaining) = await store.remaining(label: intent.label) else {
            return .failure(CancelTimerHandler.nothingToCancel(intent.label))
        }
        let which = label.map { "your \($0) timer" } ?? "your timer"
        return .success("\(Spoken.duration(remaining)) left on \(which).")
    }
}

@main
struct TimerPlugin {
    static func main() async {
        let store = TimerStore()
        var plugin = Plugin(appID: "org.heed.timer")
        plugin.register(SetTimerHandler(store: store))
        plugin.register(CancelTimerHandler(store: store))
        plugin.register(TimeRemainingHandler(store: store))
        await plugin.run()
    }
}
