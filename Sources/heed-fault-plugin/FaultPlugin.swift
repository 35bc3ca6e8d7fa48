import Foundation
import HeedPluginProtocol

/// A plugin that misbehaves on request, for the host's tests.
///
/// App id `org.heed.fault`, or `HEED_FAULT_APP_ID` when set. The intent's name chooses the behaviour of resolve, confirm and handle:
/// `ok` answers normally, `crash` aborts (SIGABRT), `exit` exits with status 3, `hang` never answers,
/// `garbage` writes a line that is not JSON, `huge` writes a 10 MB line, `wrongReply` answers with
/// a reply of the wrong type, `fail` answers with an `error` reply, `notify` sends a notification first,
/// `stderr` writes to standard error first.
///
/// `scripted FILE` answers the requests after the handshake with the lines of FILE in order, each
/// with `$ID` replaced by the request's id and written as it is (any bytes: the host's fuzz tests
/// use it to send every kind of reply through a real process), then normally once the lines run out.
/// `leave-child` starts a `sleep` that holds the plugin's standard output, then exits at its first request.
///
/// `activities APP-ID FILE` is app APP-ID and reports the activities in FILE (a JSON array of
/// `PluginActivity`, read at every request); a control intent's handle answers "APP-ID did INTENT to
/// ACTIVITY." so that routing tests see where it went.
///
/// `ignore-shutdown` ignores the shutdown request and SIGTERM. Other arguments change the start: `exit-at-start` exits before the handshake, `wrong-version`
/// answers the handshake with protocol version 99. With a second argument (a file path) they
/// happen only when that file does not exist yet, and create it: once, then normal.
@main
struct FaultPlugin {
    static func write(_ message: PluginMessage) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = (try? encoder.encode(message)) ?? Data()
        data.append(0x0A)
        FileHandle.standardOutput.write(data)
    }

    static func once(_ arguments: [String]) -> Bool {
        guard arguments.count > 2 else { return true }
        let marker = arguments[2]
        if FileManager.default.fileExists(atPath: marker) { return false }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        return true
    }

    static func main() {
        let arguments = CommandLine.arguments
        let mode = arguments.count > 1 ? arguments[1] : "normal"
        if mode == "exit-at-start", once(arguments) {
            FileHandle.standardError.write(Data("fault plugin: exiting at start\n".utf8))
            exit(2)
        }
        let wrongVersion = mode == "wrong-version" && once(arguments)
        var script: [String] =
            mode == "scripted" && arguments.count > 2
            ? ((try? String(contentsOfFile: arguments[2], encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            : []
        if script.last == "" { script.removeLast() }
        let decoder = JSONDecoder()
        let appID =
            mode == "activities" && arguments.count > 2
            ? arguments[2] : ProcessInfo.processInfo.environment["HEED_FAULT_APP_ID"] ?? "org.heed.fault"
        while let line = readLine() {
            guard let request = try? decoder.decode(PluginRequest.self, from: Data(line.utf8)) else { continue }
            let intent: PluginIntent
            switch request.body {
            case .shutdown:
                if mode == "ignore-shutdown" {
                    // Ignore the request and SIGTERM: only SIGKILL ends this process.
                    signal(SIGTERM, SIG_IGN)
                    while true { sleep(1000) }
                }
                exit(0)
            case .hello:
                let header = PluginProtocolHeader(serializationVersion: wrongVersion ? 99 : 1)
                write(.response(PluginResponse(id: request.id, .hello(PluginHello(header: header, appID: appID, intents: ["ok"])))))
                continue
            case .activities where script.isEmpty:
                // Mode `activities APP-ID FILE`: the activities in FILE (a JSON array of
                // PluginActivity), read at each request so a test can change them; else none.
                let text = mode == "activities" && arguments.count > 3 ? try? String(contentsOfFile: arguments[3], encoding: .utf8) : nil
                let activities = text.flatMap { try? decoder.decode([PluginActivity].self, from: Data($0.utf8)) } ?? []
                write(.response(PluginResponse(id: request.id, .activities(activities))))
                continue
            case .activities:
                intent = PluginIntent(name: "activities")
            case .resolve(let value, _, _), .confirm(let value), .handle(let value):
                intent = value
            }
            if !script.isEmpty {
                let line = script.removeFirst().replacingOccurrences(of: "$ID", with: String(request.id))
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
                continue
            }
            if mode == "leave-child" {
                // A child that keeps our standard output open after we are gone, in our process
                // group as a shell's background job is.
                // Its length (second argument, default 300 s) lets a test find exactly this child.
                let seconds = arguments.count > 2 ? arguments[2].filter { $0.isNumber || $0 == "." } : "300"
                _ = system("sleep \(seconds) &")
                exit(4)
            }
            switch intent.name {
            case "crash":
                abort()
            case "exit":
                exit(3)
            case "hang":
                while true { sleep(1000) }
            case "garbage":
                FileHandle.standardOutput.write(Data("this is not json {\n".utf8))
                continue
            case "huge":
                var data = Data(repeating: UInt8(ascii: "x"), count: 10_000_000)
                data.append(0x0A)
                FileHandle.standardOutput.write(data)
                continue
            case "wrongReply":
                write(.response(PluginResponse(id: request.id, .confirm(.ready))))
                continue
            case "fail":
                write(.response(PluginResponse(id: request.id, .error(message: "the fault plugin refuses"))))
                continue
            case "notify":
                write(.notification(PluginNotification(text: "Something happened.", event: "fault")))
            case "stderr":
                FileHandle.standardError.write(Data("fault plugin: a diagnostic line\n".utf8))
            default:
                break
            }
            let body: PluginResponse.Body
            switch request.body {
            case .resolve(let intent, let parameter, _):
                // The routing tests' apps take commands without naming a player.
                body = .resolve(intent.parameters[parameter].map(ResolveOutcome.success) ?? (mode == "activities" ? .notRequired : .needsValue))
            case .confirm: body = .confirm(.ready)
            default:
                // A control intent says which app and activity it reached, for the routing tests.
                if case .string(let activity) = intent.parameters["activity"] {
                    body = .handle(.success("\(appID) did \(intent.name) to \(activity)."))
                } else {
                    body = .handle(.success("Done."))
                }
            }
            write(.response(PluginResponse(id: request.id, body)))
        }
    }
}
