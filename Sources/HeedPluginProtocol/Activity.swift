/// Something an app has going on that a bare command may be meant for: a workout running, a
/// timer counting, music playing.
///
/// A plugin reports its app's activities when Heed asks (`{"op": "activities"}`) and, unasked,
/// whenever they change (`{"type": "activities", "activities": [...]}` without an id). Heed sends a
/// control intent ("pause", "next", "louder") to the app whose activity lists that control now,
/// with the activity's ``id`` in the intent's `activity` parameter.
///
/// ```json
/// {"id": "workout", "title": "the run workout", "kind": "workout", "state": "running",
///  "controls": ["pause", "stop"], "started": 1764028800.5, "changed": 1764028800.5}
/// ```
public struct PluginActivity: Sendable, Hashable, Codable {
    /// The controls an activity can take. A control intent names one of them
    /// (`"control": "pause"` in its intent file).
    public enum Control: String, Sendable, Hashable, Codable, CaseIterable {
        case start, stop, pause, resume, next, previous, volume, seek, status
    }

    /// What the activity is doing now.
    public enum State: String, Sendable, Hashable, Codable {
        /// Going on: playing, counting, running.
        case running
        /// Paused; "resume" may bring it back.
        case paused
        /// Ready but not going (a player with a track loaded and stopped).
        case stopped
    }

    /// The activity's name within its app, unique there, e.g. a player's bus name or `workout`.
    public var id: String
    /// What the user hears when Heed asks which one: "the run workout", "mpv".
    public var title: String
    /// What sort of thing it is: `media`, `workout`, `timer`. Intents like "pause the music" pick
    /// activities of one kind.
    public var kind: String
    /// What it is doing now.
    public var state: State
    /// The controls it can take now.
    public var controls: [Control]
    /// Other names the user may call it by ("spotify"), besides its title.
    public var names: [String]
    /// When it started, in seconds since 1970, if known.
    public var started: Double?
    /// When its state last changed (paused, resumed), in seconds since 1970, if known.
    public var changed: Double?

    /// Creates an activity.
    public init(
        id: String, title: String, kind: String, state: State, controls: [Control], names: [String] = [],
        started: Double? = nil, changed: Double? = nil
    ) {
        self.id = id
        self.title = title
        self.kind = kind
        self.state = state
        self.controls = controls
        self.names = names
        self.started = started
        self.changed = changed
    }

    private enum CodingKeys: String, CodingKey { case id, title, kind, state, controls, names, started, changed }

    /// Reads an activity. Controls Heed does not know are left out, so a plugin written for a later
    /// Heed still works with this one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        kind = try container.decode(String.self, forKey: .kind)
        state = try container.decode(State.self, forKey: .state)
        controls = try container.decode([String].self, forKey: .controls).compactMap(Control.init(rawValue:))
        names = try container.decodeIfPresent([String].self, forKey: .names) ?? []
        started = try container.decodeIfPresent(Double.self, forKey: .started)
        changed = try container.decodeIfPresent(Double.self, forKey: .changed)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(kind, forKey: .kind)
        try container.encode(state, forKey: .state)
        try container.encode(controls, forKey: .controls)
        if !names.isEmpty { try container.encode(names, forKey: .names) }
        try container.encodeIfPresent(started, forKey: .started)
        try container.encodeIfPresent(changed, forKey: .changed)
    }
}
