import Foundation
import HeedAudio
import HeedClient
import HeedCore
import HeedPlugins
import HeedState
import HeedRuntime
import Logging
import Synchronization

/// A hand-off (reference 001): Heed's microphone records for a client that has none, and the
/// result goes back over the socket and to shared storage
/// (`$XDG_RUNTIME_DIR/heed/dictation/APP-ID/result.json`), so that a client that went away
/// finds it on return; its registered callback command is the "return to the keyboard" step.
///
/// One hand-off at a time: the microphone is reserved when the request is accepted and given
/// back when its task ends.
final class Handoff: Sendable {
    let appID: String
    let displayName: String
    let callback: [String]?
    /// The capture device.
    let device: String
    /// The shared-storage file of this app.
    let resultFile: URL
    private let service: SpeechService
    /// The claim on the device among Heed's processes (`heed listen` holds one while it
    /// listens); `nil` when the runtime folder cannot hold one, or when the service's own
    /// listener holds the device and lends it.
    private let claim: MicrophoneClaim?
    /// The microphone borrowed from the service's listener (`heed serve --listen`).
    private let loan = Mutex<MicrophoneLoan?>(nil)

    private init(manifest: ClientManifest, device: String, claim: MicrophoneClaim?, service: SpeechService) {
        self.claim = claim
        appID = manifest.appID
        displayName = manifest.displayName
        callback = manifest.dictationCallback
        self.device = device
        resultFile = URL(fileURLWithPath: service.configuration.dictationFolder)
            .appendingPathComponent(manifest.appID).appendingPathComponent("result.json")
        self.service = service
    }

    struct Refusal: Error {
        var status: ServiceStatus
        var message: String
    }

    /// Whether a client (already authorized for speech recognition) may have a hand-off now;
    /// if so the microphone is reserved for it.
    /// - Returns: The hand-off, or why not: `unavailable` (a service without a microphone),
    ///   `noUsageDescription` (no `microphoneUsageDescription`), `busy` (a hand-off runs).
    static func check(_ identity: ClientIdentity, service: SpeechService) -> Result<Handoff, Refusal> {
        guard let manifest = identity.manifest else {
            return .failure(Refusal(status: .unknownClient, message: "\(identity.name) is not a known client"))
        }
        guard let device = service.configuration.microphoneDevice else {
            return .failure(
                Refusal(
                    status: .unavailable,
                    message: "this service has no microphone (it was started with --no-microphone): send a file or stream your own audio"))
        }
        guard manifest.microphoneUsageDescription != nil else {
            return .failure(
                Refusal(
                    status: .noUsageDescription,
                    message: "\(identity.name) cannot use Heed's microphone: its manifest \(manifest.file.path) has no "
                        + "'microphoneUsageDescription'. Add a sentence that tells the user why it listens, "
                        + "e.g. \"microphoneUsageDescription\": \"Lets you dictate messages.\""))
        }
        if let user = service.reserveMicrophone(for: manifest.appID) {
            return .failure(
                Refusal(
                    status: .busy,
                    message: "Heed's microphone is taken by a hand-off for \(user) already; try again when it has finished"))
        }
        var claim: MicrophoneClaim?
        // The service's own listener holds the device: it lends it (``openMicrophone()``).
        if service.listener == nil {
            do {
                claim = try MicrophoneClaim.take(
                    device: device, owner: "heed serve, a hand-off for \(manifest.appID)", folder: service.configuration.runtimeFolder)
            } catch .inUse(let device, let holder) {
                service.releaseMicrophone()
                let error = MicrophoneClaimError.inUse(device: device, holder: holder)
                return .failure(Refusal(status: .busy, message: "Heed's microphone is busy: \(error); try again when it is free"))
            } catch {
                // No runtime folder to coordinate in: the hand-off records anyway.
                service.logger.warning("heed serve: \(error)")
            }
        }
        return .success(Handoff(manifest: manifest, device: device, claim: claim, service: service))
    }

    /// Opens the microphone: the device itself, or what the service's listener lends as soon
    /// as nobody is speaking a command to it.
    func openMicrophone() throws(AudioError) -> any AudioSource {
        guard let listener = service.listener else { return try ALSACapture(device: device) }
        let borrowed = MicrophoneLoan(device: device, borrower: appID)
        loan.withLock { $0 = borrowed }
        listener.lend(borrowed)
        return borrowed
    }

    /// Gives the microphone back.
    func release() {
        loan.withLock { $0?.giveBack() }
        claim?.release()
        service.releaseMicrophone()
    }

    // MARK: Telling the user

    /// Tells the user that Heed listens: a short rising sound on the signal device and a
    /// desktop notification through `notify-send`, each when there is one; their absence is logged.
    func signalListening() {
        if let signalDevice = service.configuration.signalDevice {
            do {
                try ALSAPlayback(device: signalDevice).play(Self.listeningSound, sampleRate: 16_000)
            } catch {
                log("no listening sound: \(error)")
            }
        }
        guard let notifySend = Self.program("notify-send") else {
            log("no notify-send on PATH: no desktop notification")
            return
        }
        do {
            try ChildProcess.launch(
                URL(fileURLWithPath: notifySend), arguments: ["--app-name=Heed", "Heed is listening", "Dictating for \(displayName): speak, then pause."])
        } catch {
            log("notify-send failed: \(error)")
        }
    }

    /// Two short tones, 660 then 880 Hz, 0.2 s in all, soft.
    static let listeningSound: [Int16] = {
        let rate = 16_000.0
        return [660.0, 880.0].flatMap { frequency in
            (0..<1600).map { index in
                let time = Double(index) / rate
                let envelope = min(1, min(Double(index), Double(1600 - index)) / 160)
                return Int16(6000 * envelope * sin(2 * .pi * frequency * time))
            }
        }
    }()

    /// Logs something about the hand-off in the service's events (never what was said).
    func log(_ message: String, state: String? = nil, milliseconds: Double? = nil) {
        var event = ServiceEvent("handoff")
        event.appId = appID
        event.state = state
        event.message = message
        event.milliseconds = milliseconds
        service.emit(event)
    }

    // MARK: Shared storage

    /// Writes the app's record, replacing the last one atomically (0600 in a 0700 folder).
    func store(_ status: String, text: String = "", reason: String? = nil, confidence: Double? = nil) {
        let record = DictationRecord(
            status: status, text: text, reason: reason, confidence: confidence,
            timestamp: Date().iso8601Text, appId: appID)
        do {
            try AtomicFile.createDirectory(resultFile.deletingLastPathComponent())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try AtomicFile.replace(resultFile, with: try encoder.encode(record) + Data("\n".utf8))
        } catch {
            log("cannot write the hand-off result \(resultFile.path): \(error)")
        }
    }

    /// Runs the client's callback command, when it registered one, with `HEED_DICTATION_RESULT`
    /// naming the result file.
    func runCallback() {
        guard let callback, let program = callback.first else { return }
        do {
            try ChildProcess.launch(
                URL(fileURLWithPath: program), arguments: Array(callback.dropFirst()), environment: ["HEED_DICTATION_RESULT": resultFile.path])
            log("ran the callback of \(appID)", state: "callback")
        } catch {
            log("the callback \(program) of \(appID) did not start: \(error)", state: "callback")
        }
    }

    /// A program on `PATH`.
    private static func program(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
