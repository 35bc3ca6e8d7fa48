public import Foundation
import HeedClient
import HeedCore
import Glibc
public import HeedState
import HeedDBus
public import HeedRuntime
import Synchronization

/// Who is at the other end of a connection, as the kernel says: never what the client claims.
struct ClientIdentity: Sendable {
    /// The peer's process id, user id and group id (`SO_PEERCRED`).
    var credentials: PeerCredentials?
    /// The peer's executable (`/proc/PID/exe`), when it could be read.
    var executable: String?
    /// The client manifest naming that executable.
    var manifest: ClientManifest?

    /// Identifies the peer of a connected socket.
    /// - Parameters:
    ///   - descriptor: The connection.
    ///   - catalog: The client manifests.
    init(descriptor: Int32, catalog: ClientCatalog) {
        credentials = UnixSocket.peerCredentials(descriptor)
        executable = credentials.flatMap { Self.executable(of: $0.processID) }
        manifest = executable.flatMap { catalog.manifest(executable: URL(fileURLWithPath: $0)) }
    }

    /// The executable of a process: the target of `/proc/PID/exe`.
    static func executable(of processID: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(processID)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How the client is named in messages: its display name and app id, or its executable.
    var name: String {
        if let manifest { return "“\(manifest.displayName)” (\(manifest.appID))" }
        return "the program \(executable ?? "of process \(credentials.map { String($0.processID) } ?? "?")")"
    }
}

/// Whether a client may use speech recognition, with Apple's rules (reference 000): a manifest
/// with a usage description, and the user's decision or the administrator's restriction.
public struct ClientPermission: Sendable {
    /// The decisions and the administrator's policy.
    public let store: AuthorizationStore
    /// Where client manifests are searched, for messages.
    public let clientFolders: [URL]
    /// Puts a question to the user and returns the answer, or `nil` for none; `nil` when the
    /// service has nobody to ask.
    public let ask: (@Sendable (AuthorizationPrompt) -> Bool?)?
    /// One question at a time.
    private let questions = NSLock()

    /// Creates the permission check.
    /// - Parameters:
    ///   - store: The decisions and the policy.
    ///   - clientFolders: Where client manifests are searched.
    ///   - ask: Asks the user (on the service's terminal), or `nil` when nobody can be asked.
    public init(store: AuthorizationStore, clientFolders: [URL], ask: (@Sendable (AuthorizationPrompt) -> Bool?)? = nil) {
        self.store = store
        self.clientFolders = clientFolders
        self.ask = ask
    }

    /// Asks by desktop notification (two buttons, Allow and Don't Allow), when the session has a
    /// notification server that shows actions; `nil` otherwise. A question not clicked within
    /// `timeout` (or closed) is no answer: the client stays `notDetermined`.
    public static func notificationAsker(timeout: Duration = .seconds(60)) -> (@Sendable (AuthorizationPrompt) -> Bool?)? {
        guard let notifications = try? DesktopNotifications() else { return nil }
        return { prompt in
            try? notifications.ask(
                application: "Heed", title: "Speech recognition for “\(prompt.displayName)”", body: prompt.question,
                yes: "Allow", no: "Don't Allow", timeout: timeout) ?? nil
        }
    }

    /// Asks by voice through the hands-free listener (`heed serve --listen`): the question is
    /// shown and spoken, and answered "yes" or "no" when nobody is speaking a command. Use it
    /// only when the listener speaks (spoken responses on): a question nobody hears must not be
    /// answered by whatever the room says. No answer (silence, "cancel", a listener that stopped) leaves the
    /// client `notDetermined`.
    public static func voiceAsker(_ listener: Listener) -> @Sendable (AuthorizationPrompt) -> Bool? {
        { prompt in
            // The question is put from a connection's thread, which may wait; the listener
            // answers on its own.
            let answer = Mutex<Bool?>(nil)
            let answered = DispatchSemaphore(value: 0)
            listener.askYesOrNo(prompt.question) { heard in
                answer.withLock { $0 = heard }
                answered.signal()
            }
            answered.wait()
            return answer.withLock { $0 }
        }
    }

    /// A client's status, or why it has none.
    enum Answer {
        /// The client is known and may ask: its status, and a sentence unless it is authorized.
        case status(ServiceStatus, message: String?)
        /// The client cannot even ask: `unknownClient`, `noUsageDescription` or `unavailable`.
        case refused(ServiceStatus, message: String)
    }

    /// The speech-recognition status of a client.
    ///
    /// With `asking` (a `requestAuthorization`) and someone to ask, a `notDetermined` client's
    /// question is put to the user once, with its usage description, and the answer recorded.
    /// With nobody to ask it stays `notDetermined`, and the sentence says how the user decides.
    func status(of identity: ClientIdentity, asking: Bool = false) -> Answer {
        // The socket is the user's own (0600 in a 0700 folder); root can still connect.
        if let credentials = identity.credentials, credentials.userID != getuid() {
            return .refused(
                .unknownClient, message: "\(identity.name) runs as another user (uid \(credentials.userID)); this service serves only uid \(getuid())")
        }
        guard let manifest = identity.manifest else {
            let searched = clientFolders.map(\.path).joined(separator: ", ")
            return .refused(
                .unknownClient,
                message: "\(identity.name) is not a known client: Heed recognizes speech only for programs whose executable "
                    + "a client.json names (searched \(searched.isEmpty ? "no folder" : searched)); see docs/CLIENTS.md")
        }
        guard let usage = manifest.speechRecognitionUsageDescription else {
            return .refused(
                .noUsageDescription,
                message: "\(identity.name) cannot request speech recognition: its manifest \(manifest.file.path) has no "
                    + "'speechRecognitionUsageDescription'. Add a sentence that tells the user how it uses what they say, "
                    + "e.g. \"speechRecognitionUsageDescription\": \"Lets you mark an item as finished by saying Done.\"")
        }
        var status: AuthorizationStatus
        do {
            status = try store.status(of: manifest.appID, .speechRecognition)
            if status == .notDetermined, asking, let ask {
                questions.lock()
                defer { questions.unlock() }
                let prompt = AuthorizationPrompt(clientAppID: manifest.appID, displayName: manifest.displayName, usageDescription: usage)
                status = try store.request(.speechRecognition, for: manifest.appID, prompt: prompt, ask: ask)
            }
        } catch {
            return .refused(.unavailable, message: "cannot read the authorization state: \(error); Heed refuses every client until it can")
        }
        let appID = manifest.appID
        switch status {
        case .authorized:
            return .status(.authorized, message: nil)
        case .denied:
            return .status(
                .denied,
                message: "the user denied speech recognition to \(identity.name); `heed auth speech-recognition grant \(appID)` changes that")
        case .restricted:
            let file = store.policyFile?.path ?? "the policy file"
            return .status(
                .restricted,
                message: "speech recognition for \(identity.name) is restricted by the administrator's policy (\(file)); only they can change that")
        case .notDetermined:
            let reason = usage.trimmed
            return .status(
                .notDetermined,
                message: "\(identity.name) asks to use speech recognition (“\(reason)”), but "
                    + (ask == nil
                        ? "the service has nobody to ask: "
                        : asking ? "the user gave no answer: " : "it has not asked yet (requestAuthorization asks the user): ")
                    + "decide with `heed auth speech-recognition grant \(appID)` or `heed auth speech-recognition deny \(appID)`")
        }
    }
}
