import HeedCore
public import HeedIntents
public import HeedPluginProtocol

/// An activity with the app that reports it.
public struct AppActivity: Sendable, Hashable {
    /// The app the activity belongs to.
    public var appID: String
    /// The activity as its plugin reported it.
    public var activity: PluginActivity

    /// Creates an activity of an app.
    public init(appID: String, activity: PluginActivity) {
        self.appID = appID
        self.activity = activity
    }
}

/// Which activity a control intent ("pause", "next", "louder") is for, among what is going on.
///
/// The rules, in order:
/// 1. Candidates are the activities that take the intent's control now, of the intent's kind when it
///    names one ("pause the music": media), called what the target parameter says when it has a
///    value ("pause spotify").
/// 2. None: nothing fits, and the user is told so ("Nothing is playing.").
/// 3. One: it.
/// 4. Several: "resume" goes to what was paused last, anything else to what was started last — when
///    every candidate's time is known and one is the latest. Otherwise nothing decides, and the user
///    is asked which one, as SiriKit asks to disambiguate.
public enum ActivityRouter {
    /// The outcome of routing.
    public enum Choice: Sendable, Hashable {
        /// Nothing going on takes the control.
        case none
        /// This activity.
        case one(AppActivity)
        /// These fit and nothing decides between them: ask.
        case ask([AppActivity])
    }

    /// Picks the activity for a control intent.
    /// - Parameters:
    ///   - activities: Everything going on, from every app that handles the intent.
    ///   - routing: The intent's control, kind and target parameter.
    ///   - target: The target parameter's value, when it was said.
    /// - Returns: The choice.
    public static func choose(among activities: [AppActivity], for routing: ActivityRouting, target: String?) -> Choice {
        let candidates = activities.filter { fits($0.activity, routing: routing, target: target) }
        guard candidates.count > 1 else { return candidates.first.map(Choice.one) ?? .none }
        let time: (PluginActivity) -> Double? = routing.control == .resume ? { $0.changed ?? $0.started } : { $0.started }
        let times = candidates.compactMap { time($0.activity) }
        if times.count == candidates.count, let latest = times.max(), times.filter({ $0 == latest }).count == 1,
            let chosen = candidates.first(where: { time($0.activity) == latest })
        {
            return .one(chosen)
        }
        return .ask(candidates)
    }

    /// Whether an activity is a candidate for the routing.
    static func fits(_ activity: PluginActivity, routing: ActivityRouting, target: String?) -> Bool {
        guard activity.controls.contains(routing.control) else { return false }
        if let kind = routing.kind, activity.kind != kind { return false }
        if let target { return isCalled(activity, target) }
        return true
    }

    /// Whether the spoken name is the activity's title or one of its names, or a run of whole words
    /// of one ("firefox" for "Mozilla Firefox").
    static func isCalled(_ activity: PluginActivity, _ spoken: String) -> Bool {
        let words = TextNormalizer.words(spoken)
        guard !words.isEmpty else { return false }
        return ([activity.title] + activity.names).contains { name in
            let nameWords = TextNormalizer.words(name)
            guard nameWords.count >= words.count else { return false }
            return (0...(nameWords.count - words.count)).contains { Array(nameWords[$0..<($0 + words.count)]) == words }
        }
    }

    /// What the user is told when nothing going on takes the control.
    public static func nothingFits(_ routing: ActivityRouting) -> String {
        let media = routing.kind == "media"
        switch routing.control {
        case .start: return "There is nothing to start."
        case .stop: return media ? "Nothing is playing." : "Nothing is running."
        case .pause: return media ? "Nothing is playing." : "Nothing is playing or running."
        case .resume: return "Nothing is paused."
        case .next, .previous, .volume, .seek: return "Nothing is playing."
        case .status: return media ? "Nothing is playing." : "Nothing is playing or running."
        }
    }

    /// The names to read when asking which one: the titles, with the app's name added where two
    /// titles are the same.
    static func optionNames(_ candidates: [AppActivity], displayName: (String) -> String) -> [String] {
        let titles = candidates.map(\.activity.title)
        return candidates.map { candidate in
            let title = candidate.activity.title
            return titles.filter { $0 == title }.count > 1 ? "\(title) in \(displayName(candidate.appID))" : title
        }
    }
}
