import Foundation
import HeedDBus
import HeedPluginKit

/// A command for a player: Heed puts the player's bus name in `activity` when the player is what
/// the command is for; `level` and `offset` come from what was said.
struct PlayerIntent<Name: PlayerIntentName>: Intent {
    static var name: String { Name.value }
    var activity: String?
    var level: Int?
    var offset: Duration?
    init?(parameters: IntentParameters) {
        activity = parameters.string("activity")
        level = parameters.integer("level")
        offset = parameters.duration("offset")
    }
}

protocol PlayerIntentName: Sendable { static var value: String { get } }

/// Carries out one intent on the player Heed chose.
struct PlayerHandler<Name: PlayerIntentName>: IntentHandler {
    let players: Players
    /// What to do; `nil` for "what's playing", which only reads.
    let command: @Sendable (PlayerIntent<Name>) -> Players.Command?
    /// What to say when it is done, about the player after the command.
    let response: @Sendable (PlayerIntent<Name>, Player) -> String

    func resolve(_ request: ResolveRequest, context: PluginContext) async throws -> ResolveOutcome {
        switch request.parameter {
        case "level":
            guard let value = request.value else { return .needsValue }
            guard let level = value.integerValue, (0...100).contains(level) else {
                return .unsupported(reason: "The volume goes from 0 to 100.")
            }
            return .success(.number(Double(level)))
        case "offset":
            guard let value = request.value else { return .needsValue }
            guard let offset = value.durationValue, offset > .zero else { return .unsupported(reason: "Say how far, like thirty seconds.") }
            return .success(value)
        default:
            return request.value.map(ResolveOutcome.success) ?? .notRequired
        }
    }

    func confirm(_ intent: PlayerIntent<Name>, context: PluginContext) async throws -> ConfirmOutcome {
        if let unavailable = players.unavailable { return .failure(reason: unavailable) }
        guard let name = intent.activity else { return .failure(reason: "Heed did not say which player this is for.") }
        guard await players.player(name) != nil else { return .failure(reason: "That player has quit.") }
        return .ready
    }

    func handle(_ intent: PlayerIntent<Name>, context: PluginContext) async throws -> HandleOutcome {
        if case .failure(let reason) = try await confirm(intent, context: context) { return .failure(reason) }
        guard let name = intent.activity, let before = await players.player(name) else { return .failure("That player has quit.") }
        if let command = command(intent) {
            do {
                try await players.perform(command, on: name)
            } catch {
                return .failure("\(before.identity) did not do that: \(error.message.isEmpty ? error.name : error.message)")
            }
        }
        return .success(response(intent, await players.player(name) ?? before))
    }
}

enum Pause: PlayerIntentName { static let value = "pause" }
enum PauseMedia: PlayerIntentName { static let value = "pauseMedia" }
enum Resume: PlayerIntentName { static let value = "resume" }
enum ResumeMedia: PlayerIntentName { static let value = "resumeMedia" }
enum Start: PlayerIntentName { static let value = "start" }
enum Stop: PlayerIntentName { static let value = "stop" }
enum StopMedia: PlayerIntentName { static let value = "stopMedia" }
enum Next: PlayerIntentName { static let value = "next" }
enum NextTrack: PlayerIntentName { static let value = "nextTrack" }
enum Previous: PlayerIntentName { static let value = "previous" }
enum PreviousTrack: PlayerIntentName { static let value = "previousTrack" }
enum VolumeUp: PlayerIntentName { static let value = "volumeUp" }
enum VolumeDown: PlayerIntentName { static let value = "volumeDown" }
enum Mute: PlayerIntentName { static let value = "mute" }
enum Unmute: PlayerIntentName { static let value = "unmute" }
enum SetVolume: PlayerIntentName { static let value = "setVolume" }
enum NowPlaying: PlayerIntentName { static let value = "nowPlaying" }
enum SeekForward: PlayerIntentName { static let value = "seekForward" }
enum SeekBackward: PlayerIntentName { static let value = "seekBackward" }
enum ReplayTrack: PlayerIntentName { static let value = "replayTrack" }

extension Plugin {
    /// Registers the same command under several intent names (the bare control and the media one).
    mutating func register<each Name: PlayerIntentName>(
        _ players: Players, _ names: repeat (each Name).Type, command: @escaping @Sendable () -> Players.Command?,
        response: @escaping @Sendable (Player) -> String
    ) {
        repeat register(
            PlayerHandler<each Name>(players: players, command: { _ in command() }, response: { _, player in response(player) }))
    }
}

func percent(_ volume: Double?) -> String {
    "\(Int(((volume ?? 0) * 100).rounded())) percent"
}

@main
struct MPRISPlugin {
    static func main() async {
        // `--bus ADDRESS` connects to that bus instead of the user's session bus.
        let arguments = CommandLine.arguments
        let address = arguments.firstIndex(of: "--bus").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        let players = Players(busAddress: address)
        var plugin = Plugin(appID: "org.heed.mpris")
        plugin.register(players, Pause.self, PauseMedia.self, command: { .pause }) { "Paused \($0.identity)." }
        plugin.register(players, Resume.self, ResumeMedia.self, Start.self, command: { .play }) { "Playing \($0.identity)." }
        plugin.register(players, Stop.self, StopMedia.self, command: { .stop }) { "Stopped \($0.identity)." }
        plugin.register(players, Next.self, NextTrack.self, command: { .next }) { player in
            player.track.map { "Next: \($0)." } ?? "Next track."
        }
        plugin.register(players, Previous.self, PreviousTrack.self, command: { .previous }) { player in
            player.track.map { "Back to \($0)." } ?? "Previous track."
        }
        plugin.register(players, VolumeUp.self, command: { .changeVolume(by: 0.1) }) { "Volume \(percent($0.volume))." }
        plugin.register(players, VolumeDown.self, command: { .changeVolume(by: -0.1) }) { "Volume \(percent($0.volume))." }
        plugin.register(players, Mute.self, command: { .mute }) { "Muted \($0.identity)." }
        plugin.register(players, Unmute.self, command: { .unmute }) { "Volume \(percent($0.volume))." }
        plugin.register(players, NowPlaying.self, command: { nil }) { player in
            let what = player.track ?? "something without a title"
            return player.status == "Paused" ? "\(player.identity) is paused: \(what)." : "\(player.identity) is playing \(what)."
        }
        // Seeking before the start goes to the start (MPRIS Seek).
        plugin.register(players, ReplayTrack.self, command: { .seek(seconds: -86_400) }) { player in
            player.track.map { "From the start: \($0)." } ?? "From the start."
        }
        plugin.register(
            PlayerHandler<SetVolume>(
                players: players, command: { intent in intent.level.map { .setVolume(Double($0) / 100) } },
                response: { _, player in "Volume \(percent(player.volume))." }))
        plugin.register(
            PlayerHandler<SeekForward>(
                players: players, command: { intent in .seek(seconds: Double(intent.offset?.components.seconds ?? 0)) },
                response: { intent, _ in "Skipped ahead \(Spoken.duration(intent.offset ?? .zero))." }))
        plugin.register(
            PlayerHandler<SeekBackward>(
                players: players, command: { intent in .seek(seconds: -Double(intent.offset?.components.seconds ?? 0)) },
                response: { intent, _ in "Went back \(Spoken.duration(intent.offset ?? .zero))." }))
        plugin.reportActivities { _ in await players.activities }
        plugin.onStart { context in
            await players.start { activities, names in
                context.reportActivities(activities)
                context.setVocabulary(names, type: "mediaPlayer")
            }
        }
        await plugin.run()
    }
}
