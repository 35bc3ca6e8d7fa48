import Foundation
import HeedPluginKit

/// The plugin's playlist library.
struct Library {
    struct Playlist {
        var title: String
        var tracks: [String]
    }

    static let playlists: [Playlist] = [
        Playlist(title: "Road Trip", tracks: ["Highway Song", "Open Road", "Sunset Drive"]),
        Playlist(title: "Road Trip Classics", tracks: ["Born to Run", "Route 66", "Take It Easy"]),
        Playlist(title: "Morning Jazz", tracks: ["Blue in Green", "So What"]),
        Playlist(title: "Workout Mix", tracks: ["Eye of the Tiger", "Stronger", "Lose Yourself"]),
        Playlist(title: "Rainy Day", tracks: ["Riders on the Storm", "Set Fire to the Rain"]),
        Playlist(title: "Chill Evening", tracks: ["Teardrop", "Porcelain"]),
    ]

    /// Lower case, single spaces, no leading "the" and no trailing "playlist".
    static func normalize(_ text: String) -> String {
        var words = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if words.first == "the" { words.removeFirst() }
        if words.last == "playlist" { words.removeLast() }
        return words.joined(separator: " ")
    }

    /// The titles a spoken name may mean.
    ///
    /// The rule: a title matches when its normalized form equals the spoken name, or starts
    /// with the spoken name followed by a space (a whole-word prefix). "road trip" matches
    /// both "Road Trip" and "Road Trip Classics"; "road trip classics" matches one; "road"
    /// matches both; "trip" matches none.
    static func matches(_ spoken: String) -> [Playlist] {
        let name = normalize(spoken)
        guard !name.isEmpty else { return [] }
        return playlists.filter {
            let title = normalize($0.title)
            return title == name || title.hasPrefix(name + " ")
        }
    }

    /// The playlist whose title is exactly `spoken` once normalized.
    static func exact(_ spoken: String) -> Playlist? {
        let name = normalize(spoken)
        return playlists.first { normalize($0.title) == name }
    }
}

struct PlayMedia: Intent {
    static let name = "playMedia"
    static let requiredParameters: Set<String> = ["playlist"]
    var playlist: String
    init?(parameters: IntentParameters) {
        guard let playlist = parameters.string("playlist") else { return nil }
        self.playlist = playlist
    }
}

struct PauseMedia: Intent {
    static let name = "pauseMedia"
    init?(parameters: IntentParameters) {}
}

struct ResumeMedia: Intent {
    static let name = "resumeMedia"
    init?(parameters: IntentParameters) {}
}

struct NextTrack: Intent {
    static let name = "nextTrack"
    init?(parameters: IntentParameters) {}
}

struct PreviousTrack: Intent {
    static let name = "previousTrack"
    init?(parameters: IntentParameters) {}
}

struct SetVolume: Intent {
    static let name = "setVolume"
    static let requiredParameters: Set<String> = ["level"]
    var level: Int
    init?(parameters: IntentParameters) {
        guard let level = parameters.integer("level") else { return nil }
        self.level = level
    }
}

/// What plays: a playlist and a track, playing or paused, and the volume.
actor Player {
    enum State { case stopped, playing, paused }
    private(set) var state = State.stopped
    private var playlist: Library.Playlist?
    private var track = 0
    private(set) var volume = 50
    private var startedAt: Double?
    private var changedAt: Double?

    var currentTrack: String? { playlist.map { $0.tracks[track] } }

    func play(_ playlist: Library.Playlist) {
        self.playlist = playlist
        track = 0
        state = .playing
        startedAt = Date().timeIntervalSince1970
        changedAt = startedAt
    }

    func pause() -> Bool {
        guard state == .playing else { return false }
        state = .paused
        changedAt = Date().timeIntervalSince1970
        return true
    }

    func resume() -> Bool {
        guard state == .paused else { return false }
        state = .playing
        changedAt = Date().timeIntervalSince1970
        return true
    }

    func skip(by offset: Int) -> String? {
        guard state != .stopped, let playlist else { return nil }
        track = (track + offset + playlist.tracks.count) % playlist.tracks.count
        state = .playing
        return playlist.tracks[track]
    }

    func setVolume(_ level: Int) { volume = level }

    /// The playlist going on, as an activity: "pause", "next" and the volume reach it.
    var activities: [PluginActivity] {
        guard state != .stopped, let playlist else { return [] }
        let controls: [PluginActivity.Control] = state == .playing ? [.pause, .stop, .next, .previous, .volume] : [.resume, .stop, .next, .previous, .volume]
        return [
            PluginActivity(
                id: "playlist", title: playlist.title, kind: "media", state: state == .playing ? .running : .paused, controls: controls,
                names: ["music"], started: startedAt, changed: changedAt)
        ]
    }
}

struct PlayMediaHandler: IntentHandler {
    let player: Player

    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        guard request.parameter == "playlist" else { return request.value.map(ResolveOutcome.success) ?? .notRequired }
        guard let spoken = request.value?.stringValue, !Library.normalize(spoken).isEmpty else { return .needsValue }
        // A title the user picked from our own list is settled, even if it is a prefix of another.
        if request.isUserChoice, let playlist = Library.exact(spoken) { return .success(.string(playlist.title)) }
        let matches = Library.matches(spoken)
        switch matches.count {
        case 0: return .unsupported(reason: "I can't find a playlist called \(spoken).")
        case 1: return .success(.string(matches[0].title))
        default: return .disambiguation(matches.map { .string($0.title) })
        }
    }

    func handle(_ intent: PlayMedia, context: PluginContext) async throws -> HandleOutcome {
        guard let playlist = Library.exact(intent.playlist) else {
            return .failure("I can't find a playlist called \(intent.playlist).")
        }
        await player.play(playlist)
        context.reportActivities(await player.activities)
        return .success("Playing \(playlist.title).")
    }
}

struct PauseMediaHandler: IntentHandler {
    let player: Player
    func confirm(_ intent: PauseMedia, context: PluginContext) async throws -> ConfirmOutcome {
        await player.state == .playing ? .ready : .failure(reason: "Nothing is playing.")
    }
    func handle(_ intent: PauseMedia, context: PluginContext) async throws -> HandleOutcome {
        let paused = await player.pause()
        context.reportActivities(await player.activities)
        return paused ? .success("Paused.") : .failure("Nothing is playing.")
    }
}

struct ResumeMediaHandler: IntentHandler {
    let player: Player
    func confirm(_ intent: ResumeMedia, context: PluginContext) async throws -> ConfirmOutcome {
        await player.state == .paused ? .ready : .failure(reason: "Nothing is paused.")
    }
    func handle(_ intent: ResumeMedia, context: PluginContext) async throws -> HandleOutcome {
        let resumed = await player.resume()
        context.reportActivities(await player.activities)
        return resumed ? .success("Resuming.") : .failure("Nothing is paused.")
    }
}

struct SkipHandler<SkipIntent: Intent>: IntentHandler {
    typealias Intent = SkipIntent
    let player: Player
    let offset: Int
    func confirm(_ intent: SkipIntent, context: PluginContext) async throws -> ConfirmOutcome {
        await player.state == .stopped ? .failure(reason: "Nothing is playing.") : .ready
    }
    func handle(_ intent: SkipIntent, context: PluginContext) async throws -> HandleOutcome {
        guard let track = await player.skip(by: offset) else { return .failure("Nothing is playing.") }
        return .success("Playing \(track).")
    }
}

struct SetVolumeHandler: IntentHandler {
    let player: Player
    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        guard request.parameter == "level" else { return request.value.map(ResolveOutcome.success) ?? .notRequired }
        guard let value = request.value else { return .needsValue }
        guard let level = value.integerValue, (0...100).contains(level) else {
            return .unsupported(reason: "The volume goes from 0 to 100.")
        }
        return .success(.number(Double(level)))
    }
    func handle(_ intent: SetVolume, context: PluginContext) async throws -> HandleOutcome {
        guard (0...100).contains(intent.level) else { return .failure("The volume goes from 0 to 100.") }
        await player.setVolume(intent.level)
        return .success("Volume \(intent.level).")
    }
}

@main
struct MediaPlugin {
    static func main() async {
        let player = Player()
        var plugin = Plugin(appID: "org.heed.media")
        plugin.register(PlayMediaHandler(player: player))
        plugin.register(PauseMediaHandler(player: player))
        plugin.register(ResumeMediaHandler(player: player))
        plugin.register(SkipHandler<NextTrack>(player: player, offset: 1))
        plugin.register(SkipHandler<PreviousTrack>(player: player, offset: -1))
        plugin.register(SetVolumeHandler(player: player))
        plugin.reportActivities { _ in await player.activities }
        await plugin.run()
    }
}
