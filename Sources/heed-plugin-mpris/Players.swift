import Foundation
import HeedDBus
import HeedPluginKit

/// One MPRIS media player on the session bus, as its properties describe it.
struct Player: Sendable, Hashable {
    /// Its well-known name, `org.mpris.MediaPlayer2.mpv`: the activity's id.
    var busName: String
    /// Its unique connection name (`:1.42`), the sender of its signals.
    var owner: String
    /// `Identity`: "mpv", "Spotify", "Mozilla Firefox".
    var identity: String
    /// `DesktopEntry`, e.g. `firefox`, when the player says.
    var desktopEntry: String?
    /// `PlaybackStatus`: `Playing`, `Paused` or `Stopped`.
    var status: String
    var title: String?
    var artists: [String]
    /// `Volume`, 0 to 1 (or more).
    var volume: Double?
    var canPlay: Bool
    var canPause: Bool
    var canGoNext: Bool
    var canGoPrevious: Bool
    var canSeek: Bool
    var canControl: Bool
    /// When it started playing, if this plugin saw it start (seconds since 1970).
    var started: Double?
    /// When its status last changed, if this plugin saw it (seconds since 1970).
    var changed: Double?

    static let namePrefix = "org.mpris.MediaPlayer2."
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    /// The player as an activity: its controls follow its status and its `Can…` properties.
    var activity: PluginActivity {
        var controls: [PluginActivity.Control] = []
        let state: PluginActivity.State
        switch status {
        case "Playing":
            state = .running
            if canPause { controls.append(.pause) }
            controls += [.stop, .status]
        case "Paused":
            state = .paused
            if canPlay { controls.append(.resume) }
            controls += [.stop, .status]
        default:
            state = .stopped
            if canPlay { controls.append(.start) }
        }
        if canGoNext { controls.append(.next) }
        if canGoPrevious { controls.append(.previous) }
        if canSeek, state != .stopped { controls.append(.seek) }
        if canControl, volume != nil { controls.append(.volume) }
        let shortName = String(busName.dropFirst(Self.namePrefix.count).prefix { $0 != "." })
        var names = [shortName]
        if let desktopEntry { names.append(desktopEntry) }
        return PluginActivity(
            id: busName, title: identity, kind: "media", state: state, controls: controls, names: names, started: started,
            changed: changed)
    }

    /// "Blue in Green by Miles Davis", or the title alone, or `nil` when the player gives neither.
    var track: String? {
        guard let title, !title.isEmpty else { return nil }
        return artists.isEmpty ? title : "\(title) by \(artists.joined(separator: " and "))"
    }
}

/// The MPRIS players on the session bus, kept up to date from D-Bus signals (`NameOwnerChanged`
/// for players that come and go, `PropertiesChanged` for what they do): no polling.
///
/// When they change it calls `onChange` with the players as activities. What this plugin saw (when a
/// player started or was paused) is kept in `players.json` in the plugin's state folder, so that a
/// `heed run` after another knows what was paused last.
actor Players {
    private let bus: SessionBus?
    /// Why there is no bus, when there is none.
    let unavailable: String?
    private var players: [String: Player] = [:]
    private var onChange: @Sendable (_ activities: [PluginActivity], _ names: [String]) -> Void = { _, _ in }
    private let stored = StoredValue<[String: Seen]>("players.json")
    private var volumesBeforeMute: [String: Double] = [:]

    private struct Seen: Codable, Sendable {
        var owner: String
        var started: Double?
        var changed: Double?
        var volumeBeforeMute: Double?
    }

    /// - Parameters:
    /// - Parameter busAddress: The bus to connect to; `nil`: the user's session bus.
    init(busAddress: String?) {
        do {
            bus = try SessionBus(address: busAddress)
            unavailable = nil
        } catch {
            bus = nil
            unavailable = "There is no D-Bus session bus, so Heed cannot reach media players (\(error))."
            FileHandle.standardError.write(Data("mpris: \(error)\n".utf8))
        }
    }

    /// Finds the players on the bus and starts following them.
    /// - Parameter onChange: Called with the players as activities and their names (for the
    ///   `mediaPlayer` vocabulary) at the start and whenever they change.
    func start(onChange: @escaping @Sendable (_ activities: [PluginActivity], _ names: [String]) -> Void) {
        self.onChange = onChange
        guard let bus else { return }
        do {
            try bus.onSignal(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
                [weak self] _, _, arguments in
                guard arguments.count == 3, let name = arguments[0].string, name.hasPrefix(Player.namePrefix) else { return }
                let newOwner = arguments[2].string ?? ""
                Task { await self?.ownerChanged(name, to: newOwner) }
            }
            try bus.onSignal(path: Player.objectPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged") {
                [weak self] sender, _, _ in
                Task { await self?.propertiesChanged(from: sender) }
            }
        } catch {
            FileHandle.standardError.write(Data("mpris: \(error)\n".utf8))
        }
        let saved = loadSeen()
        for name in ((try? bus.names()) ?? []) where name.hasPrefix(Player.namePrefix) {
            guard var player = load(name) else { continue }
            if let seen = saved[name], seen.owner == player.owner {
                player.started = seen.started
                player.changed = seen.changed
                volumesBeforeMute[name] = seen.volumeBeforeMute
            }
            players[name] = player
        }
        onChange(activities, names)
    }

    /// The names of the players, as people say them: "mpv", "spotify", "firefox".
    var names: [String] {
        var seen = Set<String>()
        return players.values.sorted { $0.busName < $1.busName }.flatMap { player in
            [player.identity] + player.activity.names
        }.map { $0.lowercased() }.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// The players as activities. Two players of the same name (two mpv windows) are told apart by
    /// what they play: "mpv playing Road Song", else by number: "mpv 2".
    var activities: [PluginActivity] {
        let sorted = players.values.sorted { $0.busName < $1.busName }
        var seen: [String: Int] = [:]
        return sorted.map { player in
            var activity = player.activity
            guard sorted.filter({ $0.identity == player.identity }).count > 1 else { return activity }
            seen[player.identity, default: 0] += 1
            if let title = player.title, !title.isEmpty {
                activity.title = "\(player.identity) playing \(title)"
            } else if seen[player.identity]! > 1 {
                activity.title = "\(player.identity) \(seen[player.identity]!)"
            }
            activity.names.append(player.identity)
            return activity
        }
    }

    func player(_ busName: String) -> Player? { players[busName] }

    // MARK: Commands

    /// What a command does to a player.
    enum Command: Sendable {
        case play, pause, stop, next, previous
        case seek(seconds: Double)
        case setVolume(Double)
        case changeVolume(by: Double)
        case mute, unmute
    }

    /// Sends a command to a player.
    /// - Throws: ``BusError`` when the player refuses or has gone.
    func perform(_ command: Command, on busName: String) throws(BusError) {
        guard let bus else { throw BusError(name: "no bus", message: unavailable ?? "") }
        func call(_ member: String, _ arguments: [BusArgument] = []) throws(BusError) {
            _ = try bus.call(busName, path: Player.objectPath, interface: Player.playerInterface, member: member, arguments: arguments)
        }
        func setVolume(_ level: Double) throws(BusError) {
            try bus.setProperty("Volume", of: busName, path: Player.objectPath, interface: Player.playerInterface, to: max(0, level))
            players[busName]?.volume = max(0, level)
        }
        let now = Date().timeIntervalSince1970
        switch command {
        case .play:
            try call("Play")
            players[busName]?.changed = now
        case .pause:
            try call("Pause")
            players[busName]?.changed = now
        case .stop:
            try call("Stop")
            players[busName]?.changed = now
        case .next: try call("Next")
        case .previous: try call("Previous")
        case .seek(let seconds): try call("Seek", [.int64(Int64(seconds * 1_000_000))])
        case .setVolume(let level): try setVolume(level)
        case .changeVolume(let step): try setVolume(min(1, (players[busName]?.volume ?? 0.5) + step))
        case .mute:
            volumesBeforeMute[busName] = players[busName]?.volume
            try setVolume(0)
        case .unmute:
            try setVolume(volumesBeforeMute[busName] ?? 0.5)
            volumesBeforeMute[busName] = nil
        }
        saveSeen()
    }

    // MARK: Following the bus

    private func ownerChanged(_ name: String, to newOwner: String) {
        if newOwner.isEmpty {
            guard players.removeValue(forKey: name) != nil else { return }
        } else {
            guard var player = load(name) else { return }
            // A player that appears playing has just started.
            if player.status == "Playing" {
                player.started = Date().timeIntervalSince1970
                player.changed = player.started
            }
            players[name] = player
        }
        changed()
    }

    private func propertiesChanged(from sender: String) {
        guard let name = players.values.first(where: { $0.owner == sender })?.busName, let old = players[name],
            var player = load(name)
        else { return }
        player.started = old.started
        player.changed = old.changed
        if player.status != old.status {
            let now = Date().timeIntervalSince1970
            player.changed = now
            if player.status == "Playing", old.status == "Stopped" || old.started == nil { player.started = now }
        }
        guard player != old else { return }
        players[name] = player
        changed()
    }

    private func changed() {
        saveSeen()
        onChange(activities, names)
    }

    /// Reads a player's properties; `nil` when it does not answer.
    private func load(_ name: String) -> Player? {
        guard let bus else { return nil }
        guard
            let owner = try? bus.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner",
                arguments: [.string(name)]
            ).first?.string,
            let state = try? bus.properties(of: name, path: Player.objectPath, interface: Player.playerInterface)
        else { return nil }
        let root = (try? bus.properties(of: name, path: Player.objectPath, interface: Player.rootInterface)) ?? [:]
        var metadata: [String: BusValue] = [:]
        if case .dictionary(let values)? = state["Metadata"] { metadata = values }
        let fallbackIdentity = String(name.dropFirst(Player.namePrefix.count).prefix { $0 != "." })
        return Player(
            busName: name, owner: owner, identity: root["Identity"]?.string ?? fallbackIdentity,
            desktopEntry: root["DesktopEntry"]?.string, status: state["PlaybackStatus"]?.string ?? "Stopped",
            title: metadata["xesam:title"]?.string, artists: metadata["xesam:artist"]?.strings ?? [],
            volume: state["Volume"]?.double, canPlay: state["CanPlay"]?.bool ?? true, canPause: state["CanPause"]?.bool ?? true,
            canGoNext: state["CanGoNext"]?.bool ?? false, canGoPrevious: state["CanGoPrevious"]?.bool ?? false,
            canSeek: state["CanSeek"]?.bool ?? false, canControl: state["CanControl"]?.bool ?? false)
    }

    private func loadSeen() -> [String: Seen] {
        stored.load() ?? [:]
    }

    private func saveSeen() {
        stored.save(players.mapValues { player in
            Seen(owner: player.owner, started: player.started, changed: player.changed, volumeBeforeMute: volumesBeforeMute[player.busName])
        })
    }
}
