import Foundation
import HeedPluginKit

/// One timer: counting down to its deadline, or paused with the time it had left.
///
/// Times are wall-clock seconds since 1970, so that timers outlive the plugin's process: they are
/// kept in `timers.json` in the plugin's state folder.
struct KitchenTimer: Codable, Sendable, Equatable {
    var id: String
    /// What the user called it ("pizza"), if anything.
    var label: String?
    /// How long it was set for, in seconds: its name when it has no label, whatever was added later.
    var length: Double
    /// When it ends, while it runs.
    var deadline: Double?
    /// What it had left when it was paused.
    var remainingWhenPaused: Double?
    var started: Double
    var changed: Double

    var isPaused: Bool { deadline == nil }

    func remaining(at now: Double) -> Double {
        max(0, deadline.map { $0 - now } ?? remainingWhenPaused ?? 0)
    }

    /// "pizza timer", or by its length: "10 minute timer".
    var name: String { "\(label ?? lengthName(Int(length.rounded()))) timer" }

    /// Whether the user's words name this timer: its label, its name, or either with "the".
    func isCalled(_ spoken: String) -> Bool {
        let words = spoken.lowercased().split(separator: " ").filter { $0 != "the" && $0 != "my" }.joined(separator: " ")
        return words == label?.lowercased() || words == name.lowercased()
    }

    var activity: PluginActivity {
        PluginActivity(
            id: id, title: "the \(name)", kind: "timer", state: isPaused ? .paused : .running,
            controls: isPaused ? [.resume, .stop] : [.pause, .stop], names: label.map { [$0] } ?? [], started: started, changed: changed)
    }
}

/// The timers, each with a task that sleeps until its deadline and then announces it.
actor TimerStore {
    private var timers: [KitchenTimer] = []
    private var tasks: [String: Task<Void, Never>] = [:]
    private let stored = StoredValue<[KitchenTimer]>("timers.json")
    private var nextNumber = 1

    init() {
        timers = stored.load() ?? []
        nextNumber = (timers.compactMap { Int($0.id.dropFirst()) }.max() ?? 0) + 1
    }

    static var now: Double { Date().timeIntervalSince1970 }

    var all: [KitchenTimer] { timers }
    var activities: [PluginActivity] { timers.map(\.activity) }

    /// After the plugin starts: timers that ended while no Heed ran are announced; the others count on.
    func restore(context: PluginContext) {
        for timer in timers where !timer.isPaused { schedule(timer, context: context) }
    }

    func start(_ length: Double, label: String?, context: PluginContext) -> KitchenTimer {
        let now = Self.now
        let timer = KitchenTimer(
            id: "t\(nextNumber)", label: label, length: length, deadline: now + length, remainingWhenPaused: nil, started: now, changed: now)
        nextNumber += 1
        timers.append(timer)
        schedule(timer, context: context)
        changed(context)
        return timer
    }

    /// The timers that `label` (a label or a timer's name), `length` and `id` all fit, among those
    /// `state` allows.
    func matching(label: String?, length: Double?, id: String?, state: TimerState) -> [KitchenTimer] {
        timers.filter { timer in
            (id == nil || timer.id == id) && (label == nil || timer.isCalled(label!))
                && (length == nil || abs(timer.length - length!) < 0.5) && state.allows(timer)
        }
    }

    func cancel(_ id: String, context: PluginContext) -> KitchenTimer? {
        guard let index = timers.firstIndex(where: { $0.id == id }) else { return nil }
        tasks.removeValue(forKey: id)?.cancel()
        let timer = timers.remove(at: index)
        changed(context)
        return timer
    }

    func cancelAll(context: PluginContext) -> Int {
        let count = timers.count
        for task in tasks.values { task.cancel() }
        tasks = [:]
        timers = []
        changed(context)
        return count
    }

    func pause(_ id: String, context: PluginContext) -> KitchenTimer? {
        update(id, context: context) { timer, now in
            timer.remainingWhenPaused = timer.remaining(at: now)
            timer.deadline = nil
        }
    }

    func resume(_ id: String, context: PluginContext) -> KitchenTimer? {
        update(id, context: context) { timer, now in
            timer.deadline = now + (timer.remainingWhenPaused ?? 0)
            timer.remainingWhenPaused = nil
        }
    }

    /// Adds `seconds` (taking off when negative). Returns `nil` when there is no such timer.
    func add(_ seconds: Double, to id: String, context: PluginContext) -> KitchenTimer? {
        // The length stays what the timer was set for: it is how the user names it ("the five minute timer").
        update(id, context: context) { timer, _ in
            if let deadline = timer.deadline { timer.deadline = deadline + seconds }
            if let left = timer.remainingWhenPaused { timer.remainingWhenPaused = max(0, left + seconds) }
        }
    }

    private func update(_ id: String, context: PluginContext, _ change: (inout KitchenTimer, Double) -> Void) -> KitchenTimer? {
        guard let index = timers.firstIndex(where: { $0.id == id }) else { return nil }
        let now = Self.now
        change(&timers[index], now)
        timers[index].changed = now
        tasks.removeValue(forKey: id)?.cancel()
        if !timers[index].isPaused { schedule(timers[index], context: context) }
        changed(context)
        return timers[index]
    }

    private func schedule(_ timer: KitchenTimer, context: PluginContext) {
        let wait = timer.remaining(at: Self.now)
        let id = timer.id
        tasks[id] = Task {
            try? await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
            guard !Task.isCancelled else { return }
            self.fire(id, context: context)
        }
    }

    private func fire(_ id: String, context: PluginContext) {
        guard let index = timers.firstIndex(where: { $0.id == id }) else { return }
        let timer = timers.remove(at: index)
        tasks[id] = nil
        changed(context)
        context.notify("Your \(timer.label.map { "\($0) " } ?? "")timer is done.", intent: "setTimer", event: "timerFired")
    }

    /// Saves the timers and tells Heed what is going on now.
    private func changed(_ context: PluginContext) {
        stored.save(timers)
        context.reportActivities(activities)
    }
}

/// Which timers an intent may be about.
enum TimerState: Sendable {
    case any, running, paused
    func allows(_ timer: KitchenTimer) -> Bool {
        switch self {
        case .any: true
        case .running: !timer.isPaused
        case .paused: timer.isPaused
        }
    }
}

/// A timer's length as people name it: "10 minute" for 600 s.
func lengthName(_ seconds: Int) -> String {
    if seconds % 3600 == 0 { return "\(seconds / 3600) hour" }
    if seconds % 60 == 0 { return "\(seconds / 60) minute" }
    return "\(seconds) second"
}

/// A phrase of time for the user: "4 minutes and 30 seconds".
func spoken(_ seconds: Double) -> String { Spoken.duration(.milliseconds(Int64((seconds.rounded()) * 1000))) }

// MARK: Intents

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

struct SetTimerHandler: IntentHandler {
    let store: TimerStore

    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        switch request.parameter {
        case "duration":
            guard let value = request.value else { return .needsValue }
            guard let duration = value.durationValue, duration >= .seconds(1) else {
                return .unsupported(reason: "A timer must last at least one second.")
            }
            guard duration <= .seconds(86_400) else { return .unsupported(reason: "A timer can last at most 24 hours.") }
            return .success(value)
        default:
            return request.value.map(ResolveOutcome.success) ?? .notRequired
        }
    }

    func handle(_ intent: SetTimer, context: PluginContext) async throws -> HandleOutcome {
        let seconds = Double(intent.duration.components.seconds)
        let timer = await store.start(seconds, label: intent.label?.lowercased(), context: context)
        let name = timer.label.map { "\($0.prefix(1).uppercased())\($0.dropFirst()) timer" } ?? "Timer"
        return .success("\(name) set for \(spoken(seconds)).")
    }
}

/// An intent about timers that already exist: which one comes from `label` (a label or a name the
/// user picked), `lengthMinutes` or `lengthHours` ("the five minute timer") or, for the bare
/// "pause"/"resume"/"stop", Heed's `activity`.
struct TimerIntent<Kind: TimerIntentKind>: Intent {
    static var name: String { Kind.name }
    var label: String?
    var length: Double?
    var activity: String?
    var duration: Double?
    init?(parameters: IntentParameters) {
        label = parameters.string("label")
        length = Self.length(parameters)
        activity = parameters.string("activity")
        duration = parameters.duration("duration").map { Double($0.components.seconds) }
    }
}

/// What an intent about one timer does.
enum TimerAction: Sendable {
    case cancel, pause, resume, addTime, removeTime, remaining

    /// The timers it may be about.
    var state: TimerState {
        switch self {
        case .pause: .running
        case .resume: .paused
        default: .any
        }
    }

    /// What to say when no timer fits.
    var noneFits: String {
        switch self {
        case .pause: "No timer is running."
        case .resume: "No timer is paused."
        default: "There is no timer running."
        }
    }

    /// Does it to `timer` and says how it went.
    func perform(on timer: KitchenTimer, seconds: Double, store: TimerStore, context: PluginContext) async -> HandleOutcome {
        let now = TimerStore.now
        switch self {
        case .cancel:
            _ = await store.cancel(timer.id, context: context)
            return .success("Cancelled the \(timer.name).")
        case .pause:
            guard let paused = await store.pause(timer.id, context: context) else { return .failure(noneFits) }
            return .success("Paused the \(paused.name) with \(spoken(paused.remaining(at: now))) left.")
        case .resume:
            guard let resumed = await store.resume(timer.id, context: context) else { return .failure(noneFits) }
            return .success("Resumed the \(resumed.name): \(spoken(resumed.remaining(at: now))) left.")
        case .addTime:
            guard let changed = await store.add(seconds, to: timer.id, context: context) else { return .failure(noneFits) }
            return .success("Added \(spoken(seconds)) to the \(timer.name): \(spoken(changed.remaining(at: now))) left.")
        case .removeTime:
            let left = timer.remaining(at: now)
            guard seconds < left else { return .failure("The \(timer.name) has only \(spoken(left)) left.") }
            guard let changed = await store.add(-seconds, to: timer.id, context: context) else { return .failure(noneFits) }
            return .success("Took \(spoken(seconds)) off the \(timer.name): \(spoken(changed.remaining(at: now))) left.")
        case .remaining:
            let left = spoken(timer.remaining(at: now))
            return .success(timer.isPaused ? "The \(timer.name) is paused with \(left) left." : "\(left) left on your \(timer.name).")
        }
    }
}

/// An intent about one timer: its name and what it does.
extension TimerIntent {
    /// The length that names a timer, in seconds: `lengthMinutes` or `lengthHours`.
    static func length(_ parameters: IntentParameters) -> Double? {
        if let minutes = parameters.integer("lengthMinutes") { return Double(minutes * 60) }
        if let hours = parameters.integer("lengthHours") { return Double(hours * 3600) }
        return nil
    }
}

protocol TimerIntentKind: Sendable {
    static var name: String { get }
    static var action: TimerAction { get }
}

struct TimerHandler<Kind: TimerIntentKind>: IntentHandler {
    let store: TimerStore

    /// `label` chooses the timer: none fits → unsupported; one → it; several → the user picks.
    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        switch request.parameter {
        case "label":
            let spokenLabel = request.value?.stringValue
            let length = TimerIntent<Kind>.length(request.parameters)
            let state = Kind.action.state
            let matches = await store.matching(label: spokenLabel, length: length, id: nil, state: state)
            switch matches.count {
            case 0:
                let which = spokenLabel.map { $0.lowercased().hasSuffix("timer") ? $0.lowercased() : "\($0.lowercased()) timer" }
                    ?? length.map { "\(lengthName(Int($0))) timer" }
                guard let which else { return .unsupported(reason: Kind.action.noneFits) }
                let how = state == .running ? " running" : state == .paused ? " paused" : ""
                return .unsupported(reason: "There is no \(which)\(how).")
            case 1: return .success(.string(matches[0].name))
            default: return .disambiguation(matches.map { .string($0.name) })
            }
        case "duration":
            return request.value.map(ResolveOutcome.success) ?? .needsValue
        default:
            return request.value.map(ResolveOutcome.success) ?? .notRequired
        }
    }

    func confirm(_ intent: TimerIntent<Kind>, context: PluginContext) async throws -> ConfirmOutcome {
        await timer(for: intent) == nil ? .failure(reason: Kind.action.noneFits) : .ready
    }

    func handle(_ intent: TimerIntent<Kind>, context: PluginContext) async throws -> HandleOutcome {
        guard let timer = await timer(for: intent) else { return .failure(Kind.action.noneFits) }
        return await Kind.action.perform(on: timer, seconds: intent.duration ?? 0, store: store, context: context)
    }

    /// The one timer the intent is about, or `nil` when none or several fit.
    private func timer(for intent: TimerIntent<Kind>) async -> KitchenTimer? {
        let matches = await store.matching(label: intent.label, length: intent.length, id: intent.activity, state: Kind.action.state)
        return matches.count == 1 ? matches[0] : nil
    }
}

enum CancelTimerKind: TimerIntentKind { static let name = "cancelTimer"; static let action = TimerAction.cancel }
enum PauseTimerKind: TimerIntentKind { static let name = "pauseTimer"; static let action = TimerAction.pause }
enum ResumeTimerKind: TimerIntentKind { static let name = "resumeTimer"; static let action = TimerAction.resume }
enum AddTimeKind: TimerIntentKind { static let name = "addTimeToTimer"; static let action = TimerAction.addTime }
enum RemoveTimeKind: TimerIntentKind { static let name = "removeTimeFromTimer"; static let action = TimerAction.removeTime }
enum TimeRemainingKind: TimerIntentKind { static let name = "timeRemaining"; static let action = TimerAction.remaining }
/// The bare "pause", "resume" and "stop", when a timer is what they are for.
enum PauseKind: TimerIntentKind { static let name = "pause"; static let action = TimerAction.pause }
enum ResumeKind: TimerIntentKind { static let name = "resume"; static let action = TimerAction.resume }
enum StopKind: TimerIntentKind { static let name = "stop"; static let action = TimerAction.cancel }

/// `cancelAllTimers` and `listTimers` are about every timer: no parameter chooses one.
struct CancelAllTimers: Intent {
    static let name = "cancelAllTimers"
    init?(parameters: IntentParameters) {}
}

struct CancelAllTimersHandler: IntentHandler {
    let store: TimerStore
    func handle(_ intent: CancelAllTimers, context: PluginContext) async throws -> HandleOutcome {
        let count = await store.cancelAll(context: context)
        switch count {
        case 0: return .failure("You have no timers.")
        case 1: return .success("Cancelled your timer.")
        default: return .success("Cancelled \(count) timers.")
        }
    }
}

struct ListTimers: Intent {
    static let name = "listTimers"
    init?(parameters: IntentParameters) {}
}

struct ListTimersHandler: IntentHandler {
    let store: TimerStore
    func handle(_ intent: ListTimers, context: PluginContext) async throws -> HandleOutcome {
        let timers = await store.all.sorted { $0.remaining(at: TimerStore.now) < $1.remaining(at: TimerStore.now) }
        guard !timers.isEmpty else { return .success("You have no timers.") }
        let now = TimerStore.now
        let each = timers.map { "the \($0.name), \(spoken($0.remaining(at: now))) left\($0.isPaused ? ", paused" : "")" }
        let list = each.count == 1 ? each[0] : each.dropLast().joined(separator: "; ") + "; and " + each.last!
        return .success(timers.count == 1 ? "You have one timer: \(list)." : "You have \(timers.count) timers: \(list).")
    }
}

@main
struct TimerPlugin {
    static func main() async {
        let store = TimerStore()
        var plugin = Plugin(appID: "org.heed.timer")
        plugin.register(SetTimerHandler(store: store))
        plugin.register(TimerHandler<CancelTimerKind>(store: store))
        plugin.register(TimerHandler<PauseTimerKind>(store: store))
        plugin.register(TimerHandler<ResumeTimerKind>(store: store))
        plugin.register(TimerHandler<AddTimeKind>(store: store))
        plugin.register(TimerHandler<RemoveTimeKind>(store: store))
        plugin.register(TimerHandler<TimeRemainingKind>(store: store))
        plugin.register(CancelAllTimersHandler(store: store))
        plugin.register(ListTimersHandler(store: store))
        // The bare "pause", "resume" and "stop" when a timer is what they are for.
        plugin.register(TimerHandler<PauseKind>(store: store))
        plugin.register(TimerHandler<ResumeKind>(store: store))
        plugin.register(TimerHandler<StopKind>(store: store))
        plugin.reportActivities { _ in await store.activities }
        plugin.onStart { context in await store.restore(context: context) }
        await plugin.run()
    }
}
