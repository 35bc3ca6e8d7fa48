import ArgumentParser
import Foundation
import HeedAudio
import HeedClient
import HeedCore
import HeedIntents
import HeedRuntime
import HeedService
import HeedPlugins
import HeedSpeech
import HeedWyoming
import Logging
import ServiceLifecycle
import UnixSignals
import HeedState

/// `heed serve`: speech recognition for other programs, on a Unix socket.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recognize speech for other programs: a per-user service on a Unix socket.",
        discussion: """
            Programs on this desktop (a note-taking app, an editor plugin, a script) connect to \
            the socket and ask Heed to recognize a WAV file or audio they stream, with the shipped \
            intents (the final result then names the intent), one of Heed's grammars, or their own \
            phrase list. The wire protocol (JSON lines, version 1), the Swift library HeedClient \
            and a Python client are in docs/CLIENTS.md.

            Each client is identified by the kernel, never by what it says: the socket's peer \
            credentials give its process, /proc/PID/exe its executable, and a client manifest \
            (client.json, in --clients folders) naming that executable gives its app id and its \
            speechRecognitionUsageDescription. Unknown programs, manifests without a usage \
            description, and clients the user has not authorized are refused with a status \
            (unknownClient, noUsageDescription, notDetermined, denied, restricted). A client's \
            question is asked once, on the service's terminal when it has one, else as a desktop \
            notification with Allow and Don't Allow buttons when the session has a notification \
            server (the client's requestAuthorization waits for the answer, up to a minute; one \
            question at a time); with neither, or with --no-ask, a notDetermined client is refused \
            with the command that decides: heed auth speech-recognition grant APP-ID.

            The socket's folder is made private (0700) and the socket 0600. A socket file left by \
            a crashed service is removed; when another service answers on the socket, heed serve \
            refuses to start (exit status 1). SIGINT and SIGTERM stop cleanly and remove the socket. \
            SIGHUP reloads the intents and the registered vocabulary (running tasks keep theirs).

            Dictation: a request with the task hint dictation recognizes free speech with the \
            language model, and source "microphone" is the hand-off for a client without a \
            microphone: Heed signals that it listens, records from --device until the speaker \
            stops, and sends the text back and to $XDG_RUNTIME_DIR/heed/dictation/APP-ID/result.json \
            (docs/DICTATION.md). --no-microphone serves files and streamed audio only.

            With --wyoming URI (repeatable: tcp://HOST:PORT or unix://PATH), Home Assistant and \
            voice satellites use Heed over the Wyoming protocol: speech to text, intents, handling \
            through the plugins of authorized apps, and the wake phrase (docs/WYOMING.md). Each \
            listener's peers speak for one client identity (--wyoming-client, default \
            org.heed.wyoming), which needs speech recognition permission like any client: \
            heed auth speech-recognition grant org.heed.wyoming. Listen on loopback unless other \
            machines must connect: Wyoming has no authentication or encryption.

            With --listen, the service is also the hands-free listener of heed listen (the same \
            options: --activation, --wake-phrase, ...): it holds --device for as long as it runs \
            (a separate heed listen is refused), carries spoken commands to the plugins of \
            authorized apps, lends the microphone to a hand-off between commands, and, with no \
            terminal and no notification server, asks a client's permission question by voice \
            ("yes" or "no") when the config's spokenResponses is true (Heed says the question). \
            SIGUSR1 is push-to-talk.

            Not built yet: dispatching intents to plugins over the local API.

            Examples:
              heed serve --no-microphone
              heed serve --no-microphone --json --socket /tmp/heed-test.sock
              heed auth speech-recognition grant org.heed.example-client
              heed-client-example transcribe examples/audio/set_a_timer_for_5_minutes.wav
              heed serve --no-microphone --wyoming tcp://127.0.0.1:10300
              heed serve --listen --activation wake
            Under systemd: contrib/systemd/heed-serve.service (Type=notify: it says READY=1 when \
            it accepts connections) and heed-serve.socket (socket activation: systemd holds the \
            socket, the service starts when a program first connects and serves on that socket).
            """
    )

    @Option(help: ArgumentHelp("The socket (default: $XDG_RUNTIME_DIR/heed/heed.sock).", valueName: "path"))
    var socket: String?

    @Flag(help: "Print one JSON event per line: listening, connected, refused, task states, final, disconnected, stopped (never what was said).")
    var json = false

    @Flag(name: .customLong("no-microphone"), help: "Serve files and streamed audio only: hand-offs (source microphone) get the status unavailable.")
    var noMicrophone = false

    @Option(
        help: ArgumentHelp(
            "The ALSA capture device of Heed's microphone, opened for each hand-off (arecord -L lists them).", valueName: "name"))
    var device = "default"

    @Option(
        name: .customLong("signal-device"),
        help: ArgumentHelp("The ALSA playback device of the hand-off's listening sound; \"none\" for no sound.", valueName: "name"))
    var signalDevice = "default"

    @Flag(
        name: .customLong("no-ask"),
        help: "Never ask about a notDetermined client (on the terminal or by desktop notification); refuse it, naming the command that decides.")
    var noAsk = false

    @Option(name: .customLong("max-tasks"), help: ArgumentHelp("Recognition tasks at once, over all clients; more get the status busy.", valueName: "n"))
    var maximumTasks = 4

    @Option(
        name: .customLong("wyoming"),
        help: ArgumentHelp(
            "Also serve the Wyoming protocol here: tcp://HOST:PORT or unix://PATH (repeatable).",
            discussion: "tcp://127.0.0.1:10300 serves this machine only; another address lets other machines connect and is logged at start.",
            valueName: "uri"))
    var wyoming: [String] = []

    @Option(
        name: .customLong("wyoming-client"),
        help: ArgumentHelp(
            "The client identity of Wyoming peers (default: the config's wyomingClient, else org.heed.wyoming).",
            discussion: "Once for every --wyoming listener, or once per --wyoming, in the same order.",
            valueName: "app-id"))
    var wyomingClients: [String] = []

    @Option(
        name: .customLong("idle-decoders"),
        help: ArgumentHelp(
            "Idle decoders kept per grammar for the next requests (each tens of MB); a request that finds none loads one (about 0.3 s of CPU).",
            valueName: "n"))
    var idleDecoders = 2

    @Flag(
        name: .customLong("no-wyoming-partial-results"),
        help: "Send Wyoming peers the final transcript only, without transcript-start/-chunk/-stop (saves the second decoder per stream).")
    var noWyomingPartialResults = false

    @Option(
        name: .customLong("wyoming-partial-streams"),
        help: ArgumentHelp(
            "The most Wyoming transcriptions that stream partial results at once; the default is one per processor core.",
            discussion: "Each decodes its audio live on a second decoder, about half again the CPU of its final transcript; "
                + "streams beyond the limit get the final transcript only, so that many satellites speaking at once stay real-time.",
            valueName: "n"))
    var wyomingPartialStreams = WyomingService.Configuration.defaultPartialStreams

    @Flag(
        help: ArgumentHelp(
            "Also listen hands-free for spoken commands on --device, as heed listen does, in this process.",
            discussion: "The listener holds the microphone; a hand-off borrows it when nobody is speaking a command, and "
                + "a client's permission question is asked by voice (with spokenResponses on) when there is no terminal and no notification server."))
    var listen = false

    @OptionGroup(title: "Hands-free listening (with --listen; the wake phrase also for Wyoming)")
    var handsFree: ListenerOptions

    @OptionGroup var clients: ClientFolderOptions
    @OptionGroup var plugins: PluginFolderOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var recognizer: RecognizerOptions
    @OptionGroup var intents: IntentOptions
    @OptionGroup var vocabulary: VocabularyOptions

    func validate() throws {
        guard (1...64).contains(maximumTasks) else { throw ValidationError("--max-tasks must be between 1 and 64, not \(maximumTasks)") }
        if let socket, socket.isEmpty { throw ValidationError("--socket must not be empty") }
        guard (0...64).contains(idleDecoders) else { throw ValidationError("--idle-decoders must be between 0 and 64, not \(idleDecoders)") }
        guard (0...256).contains(wyomingPartialStreams) else {
            throw ValidationError("--wyoming-partial-streams must be between 0 and 256, not \(wyomingPartialStreams)")
        }
        if listen, noMicrophone { throw ValidationError("--listen needs Heed's microphone: leave out --no-microphone") }
        for uri in wyoming {
            do {
                _ = try WyomingAddress(parsing: uri)
            } catch {
                throw ValidationError("--wyoming \(error.description)")
            }
        }
        if !wyomingClients.isEmpty, wyomingClients.count != 1, wyomingClients.count != wyoming.count {
            throw ValidationError(
                "give --wyoming-client once (for every listener) or once per --wyoming (\(wyoming.count)), not \(wyomingClients.count) times")
        }
        for appID in wyomingClients where !PluginManifest.isReverseDNS(appID) {
            throw ValidationError("--wyoming-client must be an app id in reverse-DNS form such as org.heed.wyoming, not '\(appID)'")
        }
    }

    /// The client identity that Wyoming peers speak for when neither the command line nor the config names one.
    static let defaultWyomingClient = "org.heed.wyoming"

    func run() async throws {
        // A service runs for days, its decoders and grammars coming and going: as heed listen.
        Allocator.mapLargeAllocations(from: 64 * 1024)
        let printer = ServeEventPrinter(json: json)
        let path = socket ?? HeedProtocol.defaultSocketPath()
        // systemd's socket (socket activation) if it passed one; else the socket is made here.
        // Another service on it, or a path that is no socket, ends the command at once (exit status 1).
        let listening =
            try ListeningSocket.inherited()
            ?? ListeningSocket.open(at: path) {
                var event = ServiceEvent("staleSocketRemoved")
                event.socket = path
                printer.print(event)
            }
        var doors: [WyomingListener] = []
        do {
            // Read once here; SIGHUP reads it again with the intents and the vocabulary.
            let configuration = try state.configurationWithState()
            doors = try openWyomingListeners(configuration: configuration, printer: printer)
            try await serve(on: listening, wyoming: doors, configuration: configuration, printer: printer)
        } catch {
            listening.close()
            for door in doors { door.close() }
            throw error
        }
    }

    /// Loads the intents and the registered vocabulary anew and compiles the grammar (SIGHUP).
    func reloadedSetup() throws -> Recognizers.Setup {
        try recognitionSetup(
            catalog: try intents.loadCatalog(defaultIntents: ["intents"]),
            vocabulary: try vocabularyStore(configuration: try state.configuration()).snapshot())
    }

    /// The registered vocabulary of the installed apps.
    func vocabularyStore(configuration: HeedConfiguration) throws -> VocabularyStore {
        try vocabulary.store(pluginFolders: plugins.searchFolders, dictionaryPath: recognizer.dictionary, configuration: configuration)
    }

    /// The grammars and decoder settings of the service's tasks, from the intents and the registered vocabulary.
    func recognitionSetup(catalog: IntentCatalog, vocabulary registered: VocabularySnapshot) throws -> Recognizers.Setup {
        let intents = try recognizer.setup(catalog, vocabulary: registered)
        return Recognizers.Setup(
            intents: intents,
            intentsConfiguration: intents.configuration(recognizer.decoderConfiguration(forIntents: true, lenient: true)),
            grammarConfiguration: recognizer.decoderConfiguration(forIntents: false, lenient: true),
            grammarsFolder: URL(fileURLWithPath: IntentOptions.bundled("grammars")),
            // A task's audio is a whole recording once it is finished: `auto` by default, as heed recognize.
            denoise: recognizer.denoise.mode, denoiseSettings: recognizer.denoise.settings,
            dictationConfiguration: recognizer.dictationConfiguration(vocabulary: registered), vocabulary: registered)
    }

    /// Opens the `--wyoming` listeners, each with its client identity; a taken port or a bad path
    /// ends the command (exit status 1).
    private func openWyomingListeners(configuration: HeedConfiguration, printer: ServeEventPrinter) throws -> [WyomingListener] {
        let configured = configuration.wyomingClient ?? Self.defaultWyomingClient
        var opened: [WyomingListener] = []
        for (index, uri) in wyoming.enumerated() {
            let appID = wyomingClients.isEmpty ? configured : wyomingClients[wyomingClients.count == 1 ? 0 : index]
            do {
                opened.append(
                    try WyomingListener.open(try WyomingAddress(parsing: uri), clientAppID: appID) {
                        var event = ServiceEvent("staleSocketRemoved")
                        event.socket = uri
                        printer.print(event)
                    })
            } catch {
                for door in opened { door.close() }
                throw error
            }
        }
        return opened
    }

    private func serve(
        on listening: ListeningSocket, wyoming doors: [WyomingListener], configuration: HeedConfiguration, printer: ServeEventPrinter
    ) async throws {
        bootstrapLogging(verbose: recognizer.verbose)
        // Read once here for the tasks, the listener and the plugins; SIGHUP reads them anew for the tasks.
        let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
        let store = try vocabularyStore(configuration: configuration)
        let setup = try recognitionSetup(catalog: catalog, vocabulary: try store.snapshot())
        let logger = Logger(label: "heed")
        // One conversation with the plugins for the listener and the Wyoming door.
        var dispatcher: Dispatcher?
        if listen || !doors.isEmpty {
            let installed = try plugins.installedPlugins()
            dispatcher = Dispatcher(
                catalog: catalog, manifests: installed.manifests, duplicates: installed.duplicates,
                authorization: configuration.authorizationStore, vocabularyStore: store, logger: logger)
        }
        // The listener holds the microphone (and its claim among Heed's programs) until the service stops.
        let microphone = listen ? try Listen.claimMicrophone(device, owner: "heed serve --listen") : nil
        defer { microphone?.release() }
        let listener: Listener? =
            listen
            ? try handsFree.makeListener(
                source: try ALSACapture(device: device), catalog: catalog, vocabulary: store,
                configuration: configuration, recognizer: recognizer, dispatcher: dispatcher,
                authorization: configuration.authorizationStore, logger: logger, emit: { printer.print($0) })
            : nil
        // Questions go to the service's terminal when it has one, else to a desktop notification,
        // else to the listener's voice — only when Heed speaks (spokenResponses): a question shown
        // in a log nobody reads, answered by whatever "yes" the room hears, would decide for the user.
        let ask: (@Sendable (AuthorizationPrompt) -> Bool?)? =
            noAsk
            ? nil
            : isatty(STDIN_FILENO) != 0
                ? { @Sendable prompt in askOnTerminal(prompt.question) }
                : ClientPermission.notificationAsker()
                    ?? (configuration.spokenResponses ? listener.map(ClientPermission.voiceAsker) : nil)
        let recognizers = Recognizers(setup: setup, logger: logger, idleDecoders: idleDecoders)
        let permission = ClientPermission(store: configuration.authorizationStore, clientFolders: clients.searchFolders, ask: ask)
        let service = try SpeechService(
            socket: listening,
            configuration: SpeechService.Configuration(
                version: Heed.configuration.version, maximumTasks: maximumTasks, microphoneDevice: noMicrophone ? nil : device,
                signalDevice: signalDevice == "none" ? nil : signalDevice),
            permission: permission,
            recognizers: recognizers,
            listener: listener,
            logger: logger,
            emit: { printer.print($0) })
        // Trapped before the service starts: a SIGHUP that comes early reloads, and a SIGUSR1 is
        // a push; neither ends the process.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let command = self
        let reload = ReloadService(signals: hangups, recognizers: recognizers, printer: printer) { try command.reloadedSetup() }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup), .init(service: reload),
        ]
        var listenerService: ListenerService?
        if let listener {
            let running = ListenerService(listener: listener)
            listenerService = running
            let pushes = await UnixSignalsSequence(trapping: .sigusr1)
            services += [
                .init(service: running, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: PushToTalkService(listener: listener, signals: pushes)),
            ]
        }
        if !doors.isEmpty, let dispatcher {
            let door = try WyomingService(
                listeners: doors,
                configuration: WyomingService.Configuration(
                    version: Heed.configuration.version, wakePhrase: handsFree.phrase(configuration),
                    wakeThreshold: handsFree.wakeThreshold, partialStreams: noWyomingPartialResults ? 0 : wyomingPartialStreams),
                permission: permission, recognizers: recognizers, dispatcher: dispatcher,
                logger: logger, emit: { printer.print($0) })
            services.append(.init(service: door, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        // Set up: what start-up ran once need not stay mapped while the service runs for days.
        Allocator.releaseFilePages()
        try await group.run()
        if let failure = listenerService?.failure { throw failure }
    }
}

/// Reloads the intents and the registered vocabulary on SIGHUP; running tasks keep the grammar
/// they started with.
struct ReloadService: Service {
    let signals: UnixSignalsSequence
    let recognizers: Recognizers
    let printer: ServeEventPrinter
    let load: @Sendable () throws -> Recognizers.Setup

    func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            do {
                recognizers.replace(try load())
                printer.print(ServiceEvent("reloaded"))
            } catch {
                var event = ServiceEvent("reloadFailed")
                event.message = "\(error); the service goes on with what it had"
                printer.print(event)
            }
        }
    }
}

/// Prints the service's events: JSON lines, or short lines for people.
struct ServeEventPrinter: Sendable {
    let json: Bool

    /// Prints an event of the service's listener (`--listen`): as JSON, inside an event
    /// `listener` (`{"event":"listener","listener":{...}}`, the object heed listen prints), so
    /// that its kinds never mix with the service's own; for people, after "listener: ".
    func print(_ output: ListenerOutput) {
        defer { fflush(nil) }
        guard json else {
            if let line = EventPrinter.text(output) { Swift.print("listener: \(line)") }
            return
        }
        if let line = EventPrinter.jsonText(output) { Swift.print(#"{"event":"listener","listener":\#(line)}"#) }
    }

    func print(_ event: ServiceEvent) {
        defer { fflush(nil) }
        if json {
            if let line = try? jsonLine(event) { Swift.print(line) }
            return
        }
        let who = "connection \(event.connection.map(String.init) ?? "?")" + (event.appId.map { " (\($0))" } ?? "")
        switch event.event {
        case "listening": Swift.print("listening on \(event.socket ?? "?") (protocol \(HeedProtocol.version)); Ctrl-C stops")
        case "staleSocketRemoved": Swift.print("removed a stale socket left by a service that is gone: \(event.socket ?? "?")")
        case "connected":
            Swift.print("\(who): pid \(event.pid.map(String.init) ?? "?"), \(event.executable ?? "unknown executable")")
        case "refused": Swift.print("\(who): refused, \(event.status ?? "?"): \(event.message ?? "")")
        case "final": Swift.print("\(who), task \(event.task ?? "?"): final result sent")
        case "disconnected": Swift.print("\(who): disconnected")
        case "stopped": Swift.print("stopped; removed \(event.socket ?? "the socket")")
        case "reloaded": Swift.print("reloaded the intents and the registered vocabulary")
        case "reloadFailed": Swift.print("reload failed: \(event.message ?? "")")
        case "handoff": Swift.print("hand-off for \(event.appId ?? "?"): \(event.message ?? "")")
        case "wyomingListening":
            Swift.print("Wyoming on \(event.socket ?? "?") for \(event.appId ?? "?")" + (event.message.map { ": \($0)" } ?? ""))
        case "wyomingConnected", "wyomingDisconnected":
            Swift.print("wyoming \(who): \(event.event == "wyomingConnected" ? "connected" : "disconnected, \(event.message ?? "")")")
        case "wyomingRefused", "wyomingError": Swift.print("wyoming \(who): \(event.status ?? "?"): \(event.message ?? "")")
        case "zeroconf": Swift.print("zeroconf: \(event.message ?? "")")
        default: break
        }
    }
}
