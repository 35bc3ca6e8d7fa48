internal import Foundation
internal import HeedPluginProtocol

/// A plugin's main loop: the handshake, then requests from standard input dispatched to
/// handlers, replies and notifications on standard output.
///
/// ```swift
/// @main struct TimerPlugin {
///     static func main() async {
///         var plugin = Plugin(appID: "org.heed.timer")
///         plugin.register(SetTimerHandler(store: store))
///         await plugin.run()
///     }
/// }
/// ```
///
/// Standard input is read on a thread of its own, so handler tasks (timers) run and
/// notify while the loop waits for the next request. Requests are served one at a time,
/// in order. Write diagnostics to standard error: Heed logs them; standard output
/// carries only protocol lines.
public struct Plugin: Sendable {
    private typealias Route = @Sendable (PluginRequest.Body, PluginContext) async throws -> PluginResponse.Body

    /// The plugin's app id, as in its manifest.
    public let appID: String
    private var routes: [String: Route] = [:]
    private var intentNames: [String] = []
    private var activityReporter: (@Sendable (PluginContext) async -> [PluginActivity])?
    private var startAction: (@Sendable (PluginContext) async -> Void)?

    /// Creates a plugin with no handlers.
    /// - Parameter appID: The app id of the plugin's manifest, e.g. `org.heed.timer`.
    public init(appID: String) { self.appID = appID }

    /// Adds the handler of one intent. A later handler for the same intent replaces an earlier one.
    /// - Parameter handler: The handler.
    public mutating func register<Handler: IntentHandler>(_ handler: Handler) {
        let name = Handler.Intent.name
        if routes[name] == nil { intentNames.append(name) }
        routes[name] = { body, context in
            switch body {
            case .resolve(let intent, let parameter, let userChoice):
                let request = ResolveRequest(
                    parameter: parameter, parameters: IntentParameters(intent.parameters), isUserChoice: userChoice)
                return .resolve(try await handler.resolve(request, context: context))
            case .confirm(let wire):
                guard let intent = Handler.Intent(parameters: IntentParameters(wire.parameters)) else {
                    return .error(message: Self.malformed(wire))
                }
                return .confirm(try await handler.confirm(intent, context: context))
            case .handle(let wire):
                guard let intent = Handler.Intent(parameters: IntentParameters(wire.parameters)) else {
                    return .error(message: Self.malformed(wire))
                }
                return .handle(try await handler.handle(intent, context: context))
            case .hello, .activities, .shutdown:
                return .error(message: "not an intent request")
            }
        }
    }

    /// Sets what the plugin answers when Heed asks for its app's ongoing activities
    /// (``PluginActivity``). Without it the plugin reports none. Report changes unasked with
    /// ``PluginContext/reportActivities(_:)``.
    /// - Parameter reporter: Returns the activities going on now, most important first.
    public mutating func reportActivities(_ reporter: @escaping @Sendable (PluginContext) async -> [PluginActivity]) {
        activityReporter = reporter
    }

    /// Sets what the plugin does once it runs, before the first request: pick up state a previous
    /// run left (a workout still going on whose goal is due).
    /// - Parameter action: Called once with the plugin's context.
    public mutating func onStart(_ action: @escaping @Sendable (PluginContext) async -> Void) {
        startAction = action
    }

    private static func malformed(_ intent: PluginIntent) -> String {
        "the parameters of \(intent.name) are missing or have the wrong type: \(PluginValue.object(intent.parameters))"
    }

    /// Serves requests until Heed sends `shutdown` or closes standard input.
    public func run() async {
        let context = PluginContext(output: LineWriter(), appID: appID)
        await startAction?(context)
        let decoder = JSONDecoder()
        for await line in Self.standardInputLines() {
            guard !line.isEmpty else { continue }
            let request: PluginRequest
            do {
                request = try decoder.decode(PluginRequest.self, from: Data(line.utf8))
            } catch {
                Self.diagnose("cannot read request: \(error)")
                if let id = (try? decoder.decode(RequestID.self, from: Data(line.utf8)))?.id {
                    context.output.write(.response(PluginResponse(id: id, .error(message: "malformed request"))))
                }
                continue
            }
            let body: PluginResponse.Body
            switch request.body {
            case .shutdown:
                return
            case .hello(let header, _):
                if header.serializationVersion != PluginProtocol.serializationVersion {
                    Self.diagnose(
                        "Heed speaks protocol \(header.serializationVersion), this plugin \(PluginProtocol.serializationVersion)")
                }
                body = .hello(PluginHello(appID: appID, intents: intentNames))
            case .activities:
                body = .activities(await activityReporter?(context) ?? [])
            case .resolve(let intent, _, _), .confirm(let intent), .handle(let intent):
                if let route = routes[intent.name] {
                    do {
                        body = try await route(request.body, context)
                    } catch {
                        body = .error(message: "\(error)")
                    }
                } else {
                    body = .error(message: "\(appID) does not handle the intent '\(intent.name)'")
                }
            }
            context.output.write(.response(PluginResponse(id: request.id, body)))
        }
    }

    private struct RequestID: Decodable { var id: Int }

    private static func diagnose(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    /// Lines of standard input, read on a dedicated thread so the cooperative pool never blocks.
    private static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                continuation.yield(line)
            }
            continuation.finish()
        }
        thread.name = "heed-plugin-stdin"
        thread.start()
        return stream
    }
}
