public import Foundation
public import HeedCore
public import HeedPlugins

// MARK: - Statuses

/// Whether Heed may dispatch an app's intents, with SiriKit's `INSiriAuthorizationStatus` meanings.
public enum AuthorizationStatus: String, Sendable, Codable, CaseIterable {
    /// The user has not been asked yet. The first request asks them.
    case notDetermined
    /// The user said no. Heed does not ask again; `heed auth grant` changes it.
    case denied
    /// The administrator's policy forbids the app. The user cannot change it.
    case restricted
    /// The user said yes. Only authorized apps are dispatched to.
    case authorized
}

/// Whether an app's responses may be spoken aloud, with the meanings of Apple's per-app speech
/// permissions (`undetermined`, `denied`, `granted`).
public enum SpeechPermission: String, Sendable, Codable, CaseIterable {
    /// The user has not been asked yet.
    case undetermined
    /// The user said no.
    case denied
    /// The user said yes.
    case granted
}

/// Whether an app's responses are spoken: the service switch in the config first, then the
/// app's ``SpeechPermission`` (as `AVAudioApplication.MicrophoneInjectionPermission` does).
public enum SpokenResponseStatus: String, Sendable, Codable, CaseIterable {
    /// Spoken responses are off in the config (`"spokenResponses": false`, the default).
    case serviceDisabled
    /// The service is on; the app has not been asked.
    case undetermined
    /// The service is on; the user said no for this app.
    case denied
    /// The service is on and the user said yes for this app.
    case granted

    /// The status for a permission when the service is on.
    public init(_ permission: SpeechPermission) {
        switch permission {
        case .undetermined: self = .undetermined
        case .denied: self = .denied
        case .granted: self = .granted
        }
    }
}

/// One app's authorization as ``AuthorizationStore/records()`` lists it.
public struct AuthorizationRecord: Sendable, Hashable, Codable {
    /// The app id.
    public var appID: String
    /// The status that applies.
    public var status: AuthorizationStatus
    /// When the user decided; `nil` for a status that comes from the policy.
    public var decided: Date?
    /// Whether the status comes from the administrator's policy (it is then `restricted`).
    public var fromPolicy: Bool

    enum CodingKeys: String, CodingKey {
        case appID = "appId"
        case status, decided, fromPolicy
    }
}

/// One app's speech permission as ``AuthorizationStore/speechPermissionRecords()`` lists it.
public struct SpeechPermissionRecord: Sendable, Hashable, Codable {
    /// The app id.
    public var appID: String
    /// The recorded permission.
    public var permission: SpeechPermission
    /// When the user decided.
    public var decided: Date?

    enum CodingKeys: String, CodingKey {
        case appID = "appId"
        case permission, decided
    }
}

// MARK: - Errors

/// Why an authorization could not be requested or changed.
public struct AuthorizationError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable {
            case missingUsageDescription, restrictedByPolicy, notRecordable, invalidAppID
        }

        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// The plugin's manifest has no `usageDescription`, so it cannot ask the user.
        public static let missingUsageDescription = Code(.missingUsageDescription)
        /// The administrator's policy restricts the app; only they can change that.
        public static let restrictedByPolicy = Code(.restrictedByPolicy)
        /// Only `authorized` and `denied` (`granted` and `denied` for speech) can be recorded.
        public static let notRecordable = Code(.notRecordable)
        /// The app id is not in reverse-DNS form.
        public static let invalidAppID = Code(.invalidAppID)

        public var description: String { "\(storage)" }
    }

    /// What kind of problem this is.
    public var code: Code
    /// The app concerned.
    public var appID: String
    /// The whole message, ready to show.
    public var message: String
    /// The error that caused this one, if any.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, appID: String, _ message: String, underlyingError: (any Error & Sendable)? = nil) {
        self.code = code
        self.appID = appID
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String { message }

    static func missingUsageDescription(_ manifest: PluginManifest) -> AuthorizationError {
        let file = manifest.directory.appendingPathComponent(PluginManifest.fileName).path
        return AuthorizationError(
            .missingUsageDescription, appID: manifest.appID,
            """
            plugin “\(manifest.displayName)” (\(manifest.appID)) cannot request authorization: its manifest \(file) \
            has no 'usageDescription'. Add one that tells the user why it handles their voice requests, \
            e.g. "usageDescription": "Sets kitchen timers by voice."
            """)
    }
}

// MARK: - Policy

/// The administrator's policy file: the apps that are `restricted`.
///
/// ```json
/// { "restricted": ["com.example.recorder", "org.heed.media"] }
/// ```
///
/// The only key is `restricted`, a list of app ids in reverse-DNS form. A missing file restricts
/// nothing; a file that is there but unreadable (even because a folder on its path cannot be
/// entered, or its path is too long) or malformed is an error, and the dispatcher refuses every
/// app while it lasts (Heed does not guess what an administrator meant).
public struct AuthorizationPolicy: Sendable, Hashable {
    /// The restricted app ids.
    public var restricted: Set<String>
    /// The file read, or `nil` when there was none.
    public var file: URL?

    /// Creates a policy in code.
    public init(restricted: Set<String> = [], file: URL? = nil) {
        self.restricted = restricted
        self.file = file
    }

    /// Reads a policy file.
    /// - Parameter url: The file; `nil` or a missing file gives an empty policy.
    /// - Returns: The policy.
    /// - Throws: ``SourceError`` located in the file.
    public static func load(from url: URL?) throws -> AuthorizationPolicy {
        guard let url else { return AuthorizationPolicy() }
        let location = SourceLocation(path: url.path, line: 1, column: 1)
        // Only a file that is not there means "no policy". A policy Heed cannot read (a folder it
        // may not enter, a name too long, a directory) fails closed: guessing would fail open.
        var information = stat()
        guard stat(url.path, &information) == 0 else {
            let code = errno
            if code == ENOENT { return AuthorizationPolicy() }
            throw SourceError(
                .unreadableFile,
                "cannot read the administrator's policy file: \(String(cString: strerror(code))); "
                    + "Heed dispatches to no app until it can",
                at: location)
        }
        guard information.st_mode & S_IFMT != S_IFDIR else {
            throw SourceError(
                .unreadableFile, "the administrator's policy file is a directory; Heed dispatches to no app until it is a file",
                at: location)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SourceError(
                .unreadableFile,
                "cannot read the administrator's policy file: \(error.localizedDescription); Heed dispatches to no app until it can",
                at: location, underlyingError: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SourceError(.jsonSyntax, "the policy file is not UTF-8 text", at: SourceLocation(path: url.path, line: 1, column: 1))
        }
        return try parse(SourceText(path: url.path, text: text), file: url)
    }

    /// Parses policy file text.
    /// - Parameters:
    ///   - source: The text and its path.
    ///   - file: The file, remembered for messages.
    /// - Returns: The policy.
    /// - Throws: ``SourceError`` located at the offending spot.
    public static func parse(_ source: SourceText, file: URL? = nil) throws -> AuthorizationPolicy {
        let reader = JSONSchemaReader(source: source)
        let object = try reader.object(LocatedJSONParser.parse(source), "the policy", allowedKeys: ["restricted"])
        var restricted: Set<String> = []
        for node in try object.optionalArray("restricted") {
            let appID = try reader.string(node, "an app id")
            guard PluginManifest.isReverseDNS(appID) else {
                throw reader.error("'\(appID)' is not an app id in reverse-DNS form such as 'org.example.timer'", at: node.location)
            }
            restricted.insert(appID)
        }
        return AuthorizationPolicy(restricted: restricted, file: file)
    }
}

// MARK: - The state file

/// `authorization.json` in the state folder.
///
/// ```json
/// {
///   "apps": { "org.heed.timer": { "decided": "2025-05-01T09:30:00Z", "status": "authorized" } },
///   "speech": { "org.heed.timer": { "decided": "2025-05-01T09:31:00Z", "permission": "granted" } },
///   "speechRecognition": { "org.heed.example-client": { "decided": "2025-05-01T09:32:00Z", "status": "authorized" } },
///   "version": 1
/// }
/// ```
struct AuthorizationState: StateFileContent, Equatable {
    struct Decision<Value: RawRepresentable & Equatable & Encodable>: Equatable, Encodable where Value.RawValue == String {
        var value: Value
        var decided: Date
        /// The JSON key of `value`: `status` or `permission`.
        let key: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(decided, forKey: AnyKey("decided"))
            try container.encode(value, forKey: AnyKey(key))
        }
    }

    static let currentVersion = 1

    var apps: [String: Decision<AuthorizationStatus>] = [:]
    var speech: [String: Decision<SpeechPermission>] = [:]
    /// Clients of `heed serve` that may use speech recognition (reference 000), by client app id.
    var speechRecognition: [String: Decision<AuthorizationStatus>] = [:]

    init() {}

    init(from root: JSONNode, reader: JSONSchemaReader) throws {
        let object = try reader.object(root, "the authorization state", allowedKeys: ["version", "apps", "speech", "speechRecognition"])
        if let node = object["version"] {
            let version = try reader.number(node, "'version'")
            guard version == Double(Self.currentVersion) else {
                throw reader.error("version \(version) is not one this Heed reads (it reads version \(Self.currentVersion))", at: node.location)
            }
        }
        apps = try Self.decisions(object["apps"], "'apps'", key: "status", allowed: [.authorized, .denied], reader: reader)
        speech = try Self.decisions(object["speech"], "'speech'", key: "permission", allowed: [.granted, .denied], reader: reader)
        speechRecognition = try Self.decisions(
            object["speechRecognition"], "'speechRecognition'", key: "status", allowed: [.authorized, .denied], reader: reader)
    }

    private static func decisions<Value>(
        _ node: JSONNode?, _ what: String, key: String, allowed: [Value], reader: JSONSchemaReader
    ) throws -> [String: Decision<Value>] {
        guard let node else { return [:] }
        guard case .object(let members) = node.kind else {
            throw reader.error("expected \(what) (an object of app ids), found \(node.kindName)", at: node.location)
        }
        var result: [String: Decision<Value>] = [:]
        for member in members {
            guard PluginManifest.isReverseDNS(member.key) else {
                throw reader.error("'\(member.key)' is not an app id in reverse-DNS form", at: member.keyLocation)
            }
            let entry = try reader.object(member.value, "the record of \(member.key)", allowedKeys: [key, "decided"])
            let valueNode = try entry.required(key)
            let text = try reader.string(valueNode, "'\(key)'")
            let names = allowed.map { "'\($0.rawValue)'" }.joined(separator: " or ")
            guard let value = Value(rawValue: text), allowed.contains(value) else {
                throw reader.error("'\(key)' must be \(names), found '\(text)'", at: valueNode.location)
            }
            let decidedNode = try entry.required("decided")
            let decidedText = try reader.string(decidedNode, "'decided' (an ISO 8601 date)")
            guard let decided = try? Date(decidedText, strategy: .iso8601) else {
                throw reader.error("'decided' must be an ISO 8601 date such as 2025-05-01T09:30:00Z, found '\(decidedText)'", at: decidedNode.location)
            }
            result[member.key] = Decision(value: value, decided: decided, key: key)
        }
        return result
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        try container.encode(Self.currentVersion, forKey: AnyKey("version"))
        try container.encode(apps, forKey: AnyKey("apps"))
        try container.encode(speech, forKey: AnyKey("speech"))
        if !speechRecognition.isEmpty { try container.encode(speechRecognition, forKey: AnyKey("speechRecognition")) }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

// MARK: - The store

/// The user's authorization decisions and speech permissions, with the administrator's policy
/// on top.
///
/// Decisions live in `authorization.json` in the state folder (see ``HeedConfiguration``); every
/// change is a locked, atomic read-modify-write, so the CLI and a running listener can change it
/// at the same time. The policy file is read on each call, so an administrator's change applies
/// at once.
public struct AuthorizationStore: Sendable {
    /// The folder holding `authorization.json`.
    public let stateDirectory: URL
    /// The administrator's policy file, or `nil` for none.
    public let policyFile: URL?

    /// The name of the state file inside the state folder.
    public static let fileName = "authorization.json"

    let file: StateFile<AuthorizationState>

    /// Creates a store.
    /// - Parameters:
    ///   - stateDirectory: The folder for `authorization.json`; created (mode 0700) on the first write.
    ///   - policyFile: The administrator's policy file; `nil` or a missing file restricts nothing.
    public init(stateDirectory: URL, policyFile: URL?) {
        self.stateDirectory = stateDirectory
        self.policyFile = policyFile
        self.file = StateFile(url: stateDirectory.appendingPathComponent(Self.fileName))
    }

    /// The state file's path.
    public var stateFile: URL { file.url }

    /// The app id whose authorization and speech permission apply to a plugin: the app it
    /// extends (`extensionOf`), or its own. An extension shares its parent's status, and
    /// granting an extension grants the parent, as one Siri grant covers an app and its extensions.
    /// - Parameter manifest: The plugin's manifest.
    /// - Returns: `manifest.extensionOf ?? manifest.appID`.
    public static func authorizationAppID(for manifest: PluginManifest) -> String {
        manifest.extensionOf ?? manifest.appID
    }

    /// The administrator's policy.
    /// - Throws: ``SourceError`` when the policy file is unreadable or malformed.
    public func policy() throws -> AuthorizationPolicy {
        try AuthorizationPolicy.load(from: policyFile)
    }

    // MARK: Authorization

    /// The policy and the recorded decisions, read once, to answer many questions from one read.
    public struct Snapshot {
        /// The administrator's policy.
        public let policy: AuthorizationPolicy
        let state: AuthorizationState

        /// An app's authorization status: `restricted` when the policy lists the app, else the
        /// recorded decision, else `notDetermined`.
        public func status(of appID: String) -> AuthorizationStatus {
            if policy.restricted.contains(appID) { return .restricted }
            return state.apps[appID]?.value ?? .notDetermined
        }

        /// The status that applies to a plugin: `restricted` when the policy lists its own app id,
        /// else its ``authorizationAppID(for:)``'s.
        public func status(of manifest: PluginManifest) -> AuthorizationStatus {
            if manifest.extensionOf != nil, policy.restricted.contains(manifest.appID) { return .restricted }
            return status(of: AuthorizationStore.authorizationAppID(for: manifest))
        }

        /// Every app with a recorded decision or a policy restriction, sorted by app id; a
        /// restricted app shows as restricted even if the user decided before.
        public var records: [AuthorizationRecord] {
            Set(state.apps.keys).union(policy.restricted).sorted().map { appID in
                if policy.restricted.contains(appID) {
                    return AuthorizationRecord(appID: appID, status: .restricted, decided: nil, fromPolicy: true)
                }
                let decision = state.apps[appID]
                return AuthorizationRecord(
                    appID: appID, status: decision?.value ?? .notDetermined, decided: decision?.decided, fromPolicy: false)
            }
        }

        /// A client's speech-recognition status: `restricted` when the policy lists its app id,
        /// else the recorded decision, else `notDetermined`.
        public func speechRecognitionStatus(of appID: String) -> AuthorizationStatus {
            if policy.restricted.contains(appID) { return .restricted }
            return state.speechRecognition[appID]?.value ?? .notDetermined
        }

        /// Every client with a recorded speech-recognition decision or a policy restriction
        /// that has one, sorted by app id.
        public var speechRecognitionRecords: [AuthorizationRecord] {
            state.speechRecognition.keys.sorted().map { appID in
                if policy.restricted.contains(appID) {
                    return AuthorizationRecord(appID: appID, status: .restricted, decided: nil, fromPolicy: true)
                }
                let decision = state.speechRecognition[appID]
                return AuthorizationRecord(appID: appID, status: decision?.value ?? .notDetermined, decided: decision?.decided, fromPolicy: false)
            }
        }

        /// An app's speech permission, or `undetermined`.
        public func speechPermission(of appID: String) -> SpeechPermission {
            state.speech[appID]?.value ?? .undetermined
        }

        /// Every app with a recorded speech permission, sorted by app id.
        public var speechPermissionRecords: [SpeechPermissionRecord] {
            state.speech.sorted { $0.key < $1.key }.map {
                SpeechPermissionRecord(appID: $0.key, permission: $0.value.value, decided: $0.value.decided)
            }
        }
    }

    /// Reads the policy and the state file once.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt or unreadable.
    public func snapshot() throws -> Snapshot {
        Snapshot(policy: try policy(), state: try file.read())
    }

    /// An app's authorization status.
    /// - Parameter appID: The app id (for a plugin, its ``authorizationAppID(for:)``).
    /// - Returns: `restricted` when the policy lists the app, else the recorded decision, else `notDetermined`.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func status(of appID: String) throws -> AuthorizationStatus {
        try snapshot().status(of: appID)
    }

    /// The authorization status that applies to a plugin: its parent app's when it is an extension,
    /// except that a policy restricting the extension's own app id restricts it whatever the
    /// parent's status: restricted wins everywhere.
    /// - Parameter manifest: The plugin's manifest.
    /// - Returns: `restricted` when the policy lists the plugin's own app id, else the status of
    ///   ``authorizationAppID(for:)``.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func status(of manifest: PluginManifest) throws -> AuthorizationStatus {
        try snapshot().status(of: manifest)
    }

    /// Every app with a recorded decision or a policy restriction, sorted by app id.
    /// - Returns: The records; a restricted app shows as restricted even if the user decided before.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func records() throws -> [AuthorizationRecord] {
        try snapshot().records
    }

    /// Records the user's decision for an app (and so for its extensions).
    /// - Parameters:
    ///   - status: `authorized` or `denied`.
    ///   - appID: The app id in reverse-DNS form.
    /// - Throws: ``AuthorizationError`` for another status (`notRecordable`), a malformed app id
    ///   (`invalidAppID`) or an app the policy restricts (`restrictedByPolicy`); ``SourceError``
    ///   when the state or policy file is corrupt (nothing is written); ``StateFileError``.
    public func record(_ status: AuthorizationStatus, for appID: String) throws {
        try record(status, for: appID, in: \.apps)
    }

    /// Records a decision in one of the state file's tables of ``AuthorizationStatus``.
    private func record(
        _ status: AuthorizationStatus, for appID: String, in table: WritableKeyPath<AuthorizationState, [String: AuthorizationState.Decision<AuthorizationStatus>]>
    ) throws {
        guard status == .authorized || status == .denied else {
            throw AuthorizationError(
                .notRecordable, appID: appID,
                "only 'authorized' or 'denied' can be recorded, not '\(status.rawValue)': reset returns an app to "
                    + "notDetermined, and restricted comes from the administrator's policy")
        }
        try checkChangeable(appID)
        let now = Date()
        try file.update { state in
            state[keyPath: table][appID] = .init(value: status, decided: now, key: "status")
        }
    }

    /// Forgets the user's decision, so the app is `notDetermined` and the next request asks again.
    /// - Parameter appID: The app id.
    /// - Throws: ``AuthorizationError`` (`invalidAppID`, `restrictedByPolicy`), ``SourceError``,
    ///   ``StateFileError``.
    public func reset(_ appID: String) throws {
        try reset(appID, in: \.apps)
    }

    private func reset(
        _ appID: String, in table: WritableKeyPath<AuthorizationState, [String: AuthorizationState.Decision<AuthorizationStatus>]>
    ) throws {
        try checkChangeable(appID)
        guard try file.read()[keyPath: table][appID] != nil else { return }
        try file.update { state in state[keyPath: table][appID] = nil }
    }

    /// Records the user's decision for a plugin's app: its parent's for an extension. A policy that
    /// restricts the plugin's own app id refuses it as it refuses the parent's.
    /// - Parameters:
    ///   - status: `authorized` or `denied`.
    ///   - manifest: The plugin's manifest.
    /// - Throws: As ``record(_:for:)-(_,String)``.
    public func record(_ status: AuthorizationStatus, for manifest: PluginManifest) throws {
        try checkChangeable(manifest.appID)
        try record(status, for: Self.authorizationAppID(for: manifest))
    }

    /// Forgets the decision for a plugin's app (its parent's for an extension); refused like
    /// ``record(_:for:)-(_,PluginManifest)`` for a restricted plugin.
    /// - Parameter manifest: The plugin's manifest.
    /// - Throws: As ``reset(_:)``.
    public func reset(_ manifest: PluginManifest) throws {
        try checkChangeable(manifest.appID)
        try reset(Self.authorizationAppID(for: manifest))
    }

    private func checkChangeable(_ appID: String) throws {
        try Self.validate(appID)
        let policy = try policy()
        if policy.restricted.contains(appID) {
            let file = policy.file?.path ?? "the policy"
            throw AuthorizationError(
                .restrictedByPolicy, appID: appID,
                "\(appID) is restricted by the administrator's policy (\(file)); only they can change that")
        }
    }

    static func validate(_ appID: String) throws {
        guard PluginManifest.isReverseDNS(appID) else {
            throw AuthorizationError(
                .invalidAppID, appID: appID, "'\(appID)' is not an app id: expected reverse-DNS form such as 'org.heed.timer'")
        }
    }

    // MARK: Requesting

    /// Asks the user to authorize a plugin's app, once.
    ///
    /// - `authorized`, `denied` and `restricted` are returned at once; the user is not asked.
    /// - `notDetermined`: a manifest without `usageDescription` cannot ask and is refused.
    ///   Otherwise `ask` is called with the question; `true` records `authorized`, `false`
    ///   records `denied`, and `nil` (no answer: no terminal, cancelled, timed out) records
    ///   nothing and returns `notDetermined`. When another process recorded a decision while the
    ///   user was being asked, that decision stands and is returned.
    ///
    /// An extension's request is for its parent app (``authorizationAppID(for:)``).
    /// - Parameters:
    ///   - manifest: The plugin's manifest.
    ///   - ask: Puts the question to the user and returns their answer, or `nil` for none.
    /// - Returns: The status now.
    /// - Throws: ``AuthorizationError`` (`missingUsageDescription`), ``SourceError`` for a corrupt
    ///   state or policy file, ``StateFileError``, or what `ask` throws.
    public func requestAuthorization(
        for manifest: PluginManifest,
        ask: (AuthorizationPrompt) async throws -> Bool?
    ) async throws -> AuthorizationStatus {
        let appID = Self.authorizationAppID(for: manifest)
        let current = try status(of: manifest)
        guard current == .notDetermined else { return current }
        guard let usage = manifest.usageDescription else { throw AuthorizationError.missingUsageDescription(manifest) }
        let prompt = AuthorizationPrompt(manifest: manifest, usageDescription: usage, kind: .authorization)
        guard let answer = try await ask(prompt) else { return .notDetermined }
        try Self.validate(appID)
        let decided = try recordFirstAnswer(answer, for: appID, in: \.apps)
        // The policy may have changed while the user was thinking.
        return try status(of: manifest) == .restricted ? .restricted : decided
    }

    // MARK: Speech recognition

    /// A client's permission to use speech recognition through `heed serve` (reference 000).
    /// - Parameter appID: The client's app id (from its `client.json`).
    /// - Returns: `restricted` when the administrator's policy lists the app id, else the
    ///   recorded decision, else `notDetermined`.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func speechRecognitionStatus(of appID: String) throws -> AuthorizationStatus {
        try snapshot().speechRecognitionStatus(of: appID)
    }

    /// Records the user's speech-recognition decision for a client.
    /// - Parameters:
    ///   - status: `authorized` or `denied`.
    ///   - appID: The client's app id.
    /// - Throws: As ``record(_:for:)-(_,String)``: `notRecordable`, `invalidAppID`, `restrictedByPolicy`.
    public func recordSpeechRecognition(_ status: AuthorizationStatus, for appID: String) throws {
        try record(status, for: appID, in: \.speechRecognition)
    }

    /// Forgets a client's speech-recognition decision: it is `notDetermined` again.
    /// - Parameter appID: The client's app id.
    /// - Throws: As ``reset(_:)``.
    public func resetSpeechRecognition(_ appID: String) throws {
        try reset(appID, in: \.speechRecognition)
    }

    /// Asks the user, once, whether a client program may use speech recognition, as
    /// `SFSpeechRecognizer.requestAuthorization` does.
    ///
    /// A decided status (`authorized`, `denied`, `restricted`) is returned at once. For
    /// `notDetermined`, `ask` gets the question with the client's usage description: `true`
    /// records `authorized`, `false` `denied`, `nil` (nobody to ask) records nothing. A decision
    /// recorded meanwhile by another process stands.
    /// - Parameters:
    ///   - appID: The client's app id.
    ///   - displayName: The client's name, for the question.
    ///   - usageDescription: The client's `speechRecognitionUsageDescription`.
    ///   - ask: Puts the question and returns the answer; called on the caller's thread.
    /// - Returns: The status now.
    /// - Throws: ``AuthorizationError`` (`invalidAppID`), ``SourceError``, ``StateFileError``.
    public func requestSpeechRecognition(
        appID: String, displayName: String, usageDescription: String, ask: (AuthorizationPrompt) throws -> Bool?
    ) throws -> AuthorizationStatus {
        try Self.validate(appID)
        let current = try speechRecognitionStatus(of: appID)
        guard current == .notDetermined else { return current }
        let prompt = AuthorizationPrompt(clientAppID: appID, displayName: displayName, usageDescription: usageDescription)
        guard let answer = try ask(prompt) else { return .notDetermined }
        let decided = try recordFirstAnswer(answer, for: appID, in: \.speechRecognition)
        // The policy may have changed while the user was thinking.
        return try speechRecognitionStatus(of: appID) == .restricted ? .restricted : decided
    }

    /// Records the user's answer for `appID` in `table` — unless an answer was recorded meanwhile
    /// (another process asked too), which then stands — and returns the status in force.
    private func recordFirstAnswer(
        _ answer: Bool, for appID: String, in table: WritableKeyPath<AuthorizationState, [String: AuthorizationState.Decision<AuthorizationStatus>]>
    ) throws -> AuthorizationStatus {
        let now = Date()
        return try file.update { state -> AuthorizationStatus in
            if let earlier = state[keyPath: table][appID] { return earlier.value }
            let status: AuthorizationStatus = answer ? .authorized : .denied
            state[keyPath: table][appID] = .init(value: status, decided: now, key: "status")
            return status
        }
    }

    // MARK: Speech permission

    /// An app's speech permission for spoken responses.
    /// - Parameter appID: The app id (for a plugin, its ``authorizationAppID(for:)``).
    /// - Returns: The recorded permission, or `undetermined`.
    /// - Throws: ``SourceError`` when the state file is corrupt.
    public func speechPermission(of appID: String) throws -> SpeechPermission {
        try file.read().speech[appID]?.value ?? .undetermined
    }

    /// Whether an app's responses are spoken, given the config's service switch.
    /// - Parameters:
    ///   - appID: The app id.
    ///   - serviceEnabled: The config's `spokenResponses`.
    /// - Returns: `serviceDisabled` when the service is off, else the app's permission.
    /// - Throws: ``SourceError`` when the state file is corrupt.
    public func spokenResponseStatus(of appID: String, serviceEnabled: Bool) throws -> SpokenResponseStatus {
        guard serviceEnabled else { return .serviceDisabled }
        return SpokenResponseStatus(try speechPermission(of: appID))
    }

    /// Every app with a recorded speech permission, sorted by app id.
    /// - Throws: ``SourceError`` when the state file is corrupt.
    public func speechPermissionRecords() throws -> [SpeechPermissionRecord] {
        try Snapshot(policy: AuthorizationPolicy(), state: file.read()).speechPermissionRecords
    }

    /// Records the user's speech permission for an app.
    /// - Parameters:
    ///   - permission: `granted` or `denied`.
    ///   - appID: The app id in reverse-DNS form.
    /// - Throws: ``AuthorizationError`` (`notRecordable`, `invalidAppID`), ``SourceError``, ``StateFileError``.
    public func recordSpeechPermission(_ permission: SpeechPermission, for appID: String) throws {
        guard permission != .undetermined else {
            throw AuthorizationError(
                .notRecordable, appID: appID, "only 'granted' or 'denied' can be recorded; reset returns an app to undetermined")
        }
        try Self.validate(appID)
        let now = Date()
        try file.update { state in state.speech[appID] = .init(value: permission, decided: now, key: "permission") }
    }

    /// Forgets an app's speech permission, so it is `undetermined` again.
    /// - Parameter appID: The app id.
    /// - Throws: ``AuthorizationError`` (`invalidAppID`), ``SourceError``, ``StateFileError``.
    public func resetSpeechPermission(_ appID: String) throws {
        try Self.validate(appID)
        guard try file.read().speech[appID] != nil else { return }
        try file.update { state in state.speech[appID] = nil }
    }

    /// Asks the user, once, whether a plugin's responses may be spoken.
    ///
    /// When the service is off, `serviceDisabled` is returned and nobody is asked. `granted` and
    /// `denied` are returned at once. `undetermined` asks as ``requestAuthorization(for:ask:)``
    /// does, with the same rules for a missing usage description and a `nil` answer.
    /// - Parameters:
    ///   - manifest: The plugin's manifest.
    ///   - serviceEnabled: The config's `spokenResponses`.
    ///   - ask: Puts the question to the user and returns their answer, or `nil` for none.
    /// - Returns: The status now.
    /// - Throws: ``AuthorizationError`` (`missingUsageDescription`), ``SourceError``, ``StateFileError``,
    ///   or what `ask` throws.
    public func requestSpeechPermission(
        for manifest: PluginManifest,
        serviceEnabled: Bool,
        ask: (AuthorizationPrompt) async throws -> Bool?
    ) async throws -> SpokenResponseStatus {
        guard serviceEnabled else { return .serviceDisabled }
        let appID = Self.authorizationAppID(for: manifest)
        let current = try speechPermission(of: appID)
        guard current == .undetermined else { return SpokenResponseStatus(current) }
        guard let usage = manifest.usageDescription else { throw AuthorizationError.missingUsageDescription(manifest) }
        let prompt = AuthorizationPrompt(manifest: manifest, usageDescription: usage, kind: .speech)
        guard let answer = try await ask(prompt) else { return .undetermined }
        try Self.validate(appID)
        let now = Date()
        return SpokenResponseStatus(
            try file.update { state -> SpeechPermission in
                if let earlier = state.speech[appID] { return earlier.value }
                let permission: SpeechPermission = answer ? .granted : .denied
                state.speech[appID] = .init(value: permission, decided: now, key: "permission")
                return permission
            })
    }
}

// MARK: - The question

/// The question put to the user when an app asks for authorization or speech permission.
public struct AuthorizationPrompt: Sendable, Hashable {
    /// What is asked for.
    public enum Kind: String, Sendable, Hashable {
        /// Handling the user's voice requests (``AuthorizationStatus``).
        case authorization
        /// Speaking responses aloud (``SpeechPermission``).
        case speech
        /// A client program using speech recognition through `heed serve` (reference 000).
        case speechRecognition
    }

    /// What is asked for.
    public var kind: Kind
    /// The app whose status the answer sets (the parent app for an extension).
    public var appID: String
    /// The plugin that asks.
    public var pluginAppID: String
    /// The name users see.
    public var displayName: String
    /// The manifest's `usageDescription`.
    public var usageDescription: String

    init(manifest: PluginManifest, usageDescription: String, kind: Kind) {
        self.kind = kind
        self.appID = AuthorizationStore.authorizationAppID(for: manifest)
        self.pluginAppID = manifest.appID
        self.displayName = manifest.displayName
        self.usageDescription = usageDescription
    }

    /// A client program's speech-recognition question.
    init(clientAppID: String, displayName: String, usageDescription: String) {
        self.kind = .speechRecognition
        self.appID = clientAppID
        self.pluginAppID = clientAppID
        self.displayName = displayName
        self.usageDescription = usageDescription
    }

    /// The whole question, e.g. “Timers” wants to use Heed to handle your voice requests.
    /// Sets kitchen timers by voice and tells you when they end. Allow?
    public var question: String {
        let trimmed = usageDescription.trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = trimmed.last.map { ".!?".contains($0) } == true ? trimmed : trimmed + "."
        switch kind {
        case .authorization: return "“\(displayName)” wants to use Heed to handle your voice requests. \(reason) Allow?"
        case .speech: return "“\(displayName)” wants Heed to speak its responses aloud. \(reason) Allow?"
        case .speechRecognition: return "“\(displayName)” (\(appID)) wants to use speech recognition. \(reason) Allow?"
        }
    }
}
