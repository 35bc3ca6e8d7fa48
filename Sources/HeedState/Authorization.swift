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

// MARK: - Kinds of permission

/// A decision a user makes about an app or a client program, for one kind of permission.
public protocol PermissionDecision: RawRepresentable, CaseIterable, Sendable, Hashable, Encodable where RawValue == String {
    /// The value before anyone decided: the first request asks.
    static var undecided: Self { get }
    /// The value a yes or a no records.
    static func answer(_ yes: Bool) -> Self
}

extension AuthorizationStatus: PermissionDecision {
    public static var undecided: Self { .notDetermined }
    public static func answer(_ yes: Bool) -> Self { yes ? .authorized : .denied }
}

extension SpeechPermission: PermissionDecision {
    public static var undecided: Self { .undetermined }
    public static func answer(_ yes: Bool) -> Self { yes ? .granted : .denied }
}

/// One kind of permission the store keeps, per app id: Siri's authorization of an app's
/// plugin (``siri``), a client's speech recognition (``speechRecognition``), an app's spoken
/// responses (``spokenResponses``). Each is one table of the state file.
public struct Permission<Decision: PermissionDecision>: Sendable, Hashable {
    /// The table's name in the state file.
    public let name: String
    let table: any WritableKeyPath<AuthorizationState, [String: AuthorizationState.Decision<Decision>]> & Sendable
    /// What the administrator's policy makes a listed app; `nil`: the policy does not apply.
    let restricted: Decision?
    /// Whether listings show apps the policy restricts that nobody decided for.
    let listsPolicy: Bool
    /// The JSON key of a decision's value in the state file.
    let valueKey: String
}

extension Permission where Decision == AuthorizationStatus {
    /// Whether Heed may dispatch an app's intents to its plugin (SiriKit's authorization).
    public static var siri: Self { Self(name: "apps", table: \.apps, restricted: .restricted, listsPolicy: true, valueKey: "status") }
    /// Whether a client program may use speech recognition through `heed serve` (reference 000).
    public static var speechRecognition: Self {
        Self(name: "speechRecognition", table: \.speechRecognition, restricted: .restricted, listsPolicy: false, valueKey: "status")
    }
}

extension Permission where Decision == SpeechPermission {
    /// Whether an app's responses may be spoken aloud; the policy does not restrict it.
    public static var spokenResponses: Self { Self(name: "speech", table: \.speech, restricted: nil, listsPolicy: false, valueKey: "permission") }
}

/// One app's decision for one kind of permission, as ``AuthorizationStore/records(_:)`` lists it.
public struct PermissionRecord<Decision: PermissionDecision>: Sendable, Hashable {
    /// The app id.
    public var appID: String
    /// The decision that applies.
    public var value: Decision
    /// When the user decided; `nil` for a value that comes from the policy.
    public var decided: Date?
    /// Whether the value comes from the administrator's policy (it is then restricted).
    public var fromPolicy: Bool
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
            try container.encode(decided.iso8601Text, forKey: AnyKey("decided"))
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
            guard let decided = Date(iso8601: decidedText) else {
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

    // MARK: Decisions, by kind

    /// The policy and the recorded decisions, read once, to answer many questions from one read.
    public struct Snapshot {
        /// The administrator's policy.
        public let policy: AuthorizationPolicy
        let state: AuthorizationState

        /// An app's decision of one kind: restricted when the policy lists the app (for kinds
        /// the policy applies to), else the recorded decision, else undecided.
        public func status<Decision>(of appID: String, _ permission: Permission<Decision>) -> Decision {
            if let restricted = permission.restricted, policy.restricted.contains(appID) { return restricted }
            return state[keyPath: permission.table][appID]?.value ?? .undecided
        }

        /// The Siri authorization that applies to a plugin: restricted when the policy lists its
        /// own app id, else its ``AuthorizationStore/authorizationAppID(for:)``'s.
        public func status(of manifest: PluginManifest) -> AuthorizationStatus {
            if manifest.extensionOf != nil, policy.restricted.contains(manifest.appID) { return .restricted }
            return status(of: AuthorizationStore.authorizationAppID(for: manifest), .siri)
        }

        /// Every app with a recorded decision of this kind (for Siri's, also every app the
        /// policy restricts), sorted by app id; a restricted app shows as restricted even if the
        /// user decided before.
        public func records<Decision>(_ permission: Permission<Decision>) -> [PermissionRecord<Decision>] {
            let table = state[keyPath: permission.table]
            var appIDs = Set(table.keys)
            if permission.listsPolicy { appIDs.formUnion(policy.restricted) }
            return appIDs.sorted().map { appID in
                if let restricted = permission.restricted, policy.restricted.contains(appID) {
                    return PermissionRecord(appID: appID, value: restricted, decided: nil, fromPolicy: true)
                }
                let decision = table[appID]
                return PermissionRecord(appID: appID, value: decision?.value ?? .undecided, decided: decision?.decided, fromPolicy: false)
            }
        }
    }

    /// Reads the policy and the state file once.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt or unreadable.
    public func snapshot() throws -> Snapshot {
        Snapshot(policy: try policy(), state: try file.read())
    }

    /// The state file, with the policy only for a kind the policy applies to (a broken policy
    /// file does not stop spoken responses).
    private func snapshot<Decision>(for permission: Permission<Decision>) throws -> Snapshot {
        permission.restricted == nil ? Snapshot(policy: AuthorizationPolicy(), state: try file.read()) : try snapshot()
    }

    /// An app's decision of one kind.
    /// - Parameters:
    ///   - appID: The app id (for a plugin, its ``authorizationAppID(for:)``; for a client, its
    ///     `client.json`'s).
    ///   - permission: The kind.
    /// - Returns: As ``Snapshot/status(of:_:)``.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func status<Decision>(of appID: String, _ permission: Permission<Decision>) throws -> Decision {
        try snapshot(for: permission).status(of: appID, permission)
    }

    /// The Siri authorization that applies to a plugin: its parent app's when it is an
    /// extension, except that a policy restricting the extension's own app id restricts it
    /// whatever the parent's status: restricted wins everywhere.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func status(of manifest: PluginManifest) throws -> AuthorizationStatus {
        try snapshot().status(of: manifest)
    }

    /// Every app with a decision of this kind, as ``Snapshot/records(_:)``.
    /// - Throws: ``SourceError`` when the state or policy file is corrupt.
    public func records<Decision>(_ permission: Permission<Decision>) throws -> [PermissionRecord<Decision>] {
        try snapshot(for: permission).records(permission)
    }

    /// Records the user's decision of one kind for an app (for Siri's, and so for its extensions).
    /// - Parameters:
    ///   - value: A yes or a no (`authorized`/`denied`, `granted`/`denied`).
    ///   - appID: The app id in reverse-DNS form.
    ///   - permission: The kind.
    /// - Throws: ``AuthorizationError`` for another value (`notRecordable`), a malformed app id
    ///   (`invalidAppID`) or an app the policy restricts (`restrictedByPolicy`); ``SourceError``
    ///   when the state or policy file is corrupt (nothing is written); ``StateFileError``.
    public func record<Decision>(_ value: Decision, for appID: String, _ permission: Permission<Decision>) throws {
        guard value == .answer(true) || value == .answer(false) else {
            let policy = permission.restricted.map { ", and \($0.rawValue) comes from the administrator's policy" } ?? ""
            throw AuthorizationError(
                .notRecordable, appID: appID,
                "only '\(Decision.answer(true).rawValue)' or '\(Decision.answer(false).rawValue)' can be recorded, not '\(value.rawValue)': "
                    + "reset returns an app to \(Decision.undecided.rawValue)\(policy)")
        }
        try checkChangeable(appID, permission)
        let now = Date()
        try file.update { state in
            state[keyPath: permission.table][appID] = .init(value: value, decided: now, key: permission.valueKey)
        }
    }

    /// Forgets the user's decision of one kind, so the app is undecided and the next request asks again.
    /// - Throws: ``AuthorizationError`` (`invalidAppID`, `restrictedByPolicy`), ``SourceError``,
    ///   ``StateFileError``.
    public func reset<Decision>(_ appID: String, _ permission: Permission<Decision>) throws {
        try checkChangeable(appID, permission)
        guard try file.read()[keyPath: permission.table][appID] != nil else { return }
        try file.update { state in state[keyPath: permission.table][appID] = nil }
    }

    /// Records the user's Siri decision for a plugin's app: its parent's for an extension. A
    /// policy that restricts the plugin's own app id refuses it as it refuses the parent's.
    /// - Throws: As ``record(_:for:_:)``.
    public func record(_ status: AuthorizationStatus, for manifest: PluginManifest) throws {
        try checkChangeable(manifest.appID, .siri)
        try record(status, for: Self.authorizationAppID(for: manifest), .siri)
    }

    /// Forgets the Siri decision for a plugin's app (its parent's for an extension); refused
    /// like ``record(_:for:)`` for a restricted plugin.
    /// - Throws: As ``reset(_:_:)``.
    public func reset(_ manifest: PluginManifest) throws {
        try checkChangeable(manifest.appID, .siri)
        try reset(Self.authorizationAppID(for: manifest), .siri)
    }

    private func checkChangeable<Decision>(_ appID: String, _ permission: Permission<Decision>) throws {
        try Self.validate(appID)
        guard permission.restricted != nil else { return }
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

    /// Asks the user, once, for a decision of one kind, as `SFSpeechRecognizer.requestAuthorization`
    /// and SiriKit's `requestSiriAuthorization` do.
    ///
    /// A decided value (yes, no, restricted) is returned at once. Undecided: `ask` gets the
    /// question; `true` and `false` are recorded, and `nil` (nobody to ask, cancelled, timed out)
    /// records nothing and returns undecided. A decision recorded meanwhile by another process
    /// stands; a policy that restricted the app meanwhile wins.
    /// - Parameters:
    ///   - permission: The kind.
    ///   - appID: The app id whose decision it is.
    ///   - prompt: The question (its ``AuthorizationPrompt/question``).
    ///   - ask: Puts the question and returns the answer; called on the caller's thread.
    /// - Returns: The decision now.
    /// - Throws: ``AuthorizationError`` (`invalidAppID`), ``SourceError``, ``StateFileError``, or
    ///   what `ask` throws.
    public func request<Decision>(
        _ permission: Permission<Decision>, for appID: String, prompt: AuthorizationPrompt, ask: (AuthorizationPrompt) throws -> Bool?
    ) throws -> Decision {
        if let decided = try decided(appID, permission) { return decided }
        guard let answer = try ask(prompt) else { return .undecided }
        return try settle(answer, for: appID, permission)
    }

    /// ``request(_:for:prompt:ask:)-(_,_,_,(AuthorizationPrompt)→Bool?)`` with a question answered
    /// asynchronously (by voice).
    public func request<Decision>(
        _ permission: Permission<Decision>, for appID: String, prompt: AuthorizationPrompt, ask: (AuthorizationPrompt) async throws -> Bool?
    ) async throws -> Decision {
        if let decided = try decided(appID, permission) { return decided }
        guard let answer = try await ask(prompt) else { return .undecided }
        return try settle(answer, for: appID, permission)
    }

    /// The decision when there is one; `nil` when the user is to be asked.
    private func decided<Decision>(_ appID: String, _ permission: Permission<Decision>) throws -> Decision? {
        try Self.validate(appID)
        let current = try status(of: appID, permission)
        return current == .undecided ? nil : current
    }

    /// Records the user's answer — unless an answer was recorded meanwhile (another process
    /// asked too), which then stands — and returns the decision in force.
    private func settle<Decision>(_ answer: Bool, for appID: String, _ permission: Permission<Decision>) throws -> Decision {
        let now = Date()
        let decided = try file.update { state -> Decision in
            if let earlier = state[keyPath: permission.table][appID] { return earlier.value }
            let value = Decision.answer(answer)
            state[keyPath: permission.table][appID] = .init(value: value, decided: now, key: permission.valueKey)
            return value
        }
        // The policy may have changed while the user was thinking.
        if let restricted = permission.restricted, try status(of: appID, permission) == restricted { return restricted }
        return decided
    }

    /// Asks the user, once, to authorize a plugin's app (SiriKit's authorization).
    ///
    /// As ``request(_:for:prompt:ask:)-(_,_,_,(AuthorizationPrompt)→Bool?)``, for the plugin's
    /// ``authorizationAppID(for:)``; a manifest without `usageDescription` cannot ask and is
    /// refused, and a policy that restricts the plugin's own app id wins.
    /// - Throws: ``AuthorizationError`` (`missingUsageDescription`), ``SourceError`` for a corrupt
    ///   state or policy file, ``StateFileError``, or what `ask` throws.
    public func requestAuthorization(
        for manifest: PluginManifest,
        ask: (AuthorizationPrompt) async throws -> Bool?
    ) async throws -> AuthorizationStatus {
        let current = try status(of: manifest)
        guard current == .notDetermined else { return current }
        guard let usage = manifest.usageDescription else { throw AuthorizationError.missingUsageDescription(manifest) }
        let prompt = AuthorizationPrompt(manifest: manifest, usageDescription: usage, kind: .authorization)
        let decided = try await request(.siri, for: Self.authorizationAppID(for: manifest), prompt: prompt, ask: ask)
        return try status(of: manifest) == .restricted ? .restricted : decided
    }

    // MARK: Spoken responses

    /// Whether an app's responses are spoken, given the config's service switch.
    /// - Returns: `serviceDisabled` when the service is off, else the app's permission.
    /// - Throws: ``SourceError`` when the state file is corrupt.
    public func spokenResponseStatus(of appID: String, serviceEnabled: Bool) throws -> SpokenResponseStatus {
        guard serviceEnabled else { return .serviceDisabled }
        return SpokenResponseStatus(try status(of: appID, .spokenResponses))
    }

    /// Asks the user, once, whether a plugin's responses may be spoken.
    ///
    /// When the service is off, `serviceDisabled` is returned and nobody is asked; otherwise as
    /// ``requestAuthorization(for:ask:)``, with the same rules for a missing usage description.
    /// - Throws: ``AuthorizationError`` (`missingUsageDescription`), ``SourceError``,
    ///   ``StateFileError``, or what `ask` throws.
    public func requestSpeechPermission(
        for manifest: PluginManifest,
        serviceEnabled: Bool,
        ask: (AuthorizationPrompt) async throws -> Bool?
    ) async throws -> SpokenResponseStatus {
        guard serviceEnabled else { return .serviceDisabled }
        let appID = Self.authorizationAppID(for: manifest)
        let current = try status(of: appID, .spokenResponses)
        guard current == .undetermined else { return SpokenResponseStatus(current) }
        guard let usage = manifest.usageDescription else { throw AuthorizationError.missingUsageDescription(manifest) }
        let prompt = AuthorizationPrompt(manifest: manifest, usageDescription: usage, kind: .speech)
        return SpokenResponseStatus(try await request(.spokenResponses, for: appID, prompt: prompt, ask: ask))
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
    public init(clientAppID: String, displayName: String, usageDescription: String) {
        self.kind = .speechRecognition
        self.appID = clientAppID
        self.pluginAppID = clientAppID
        self.displayName = displayName
        self.usageDescription = usageDescription
    }

    /// The whole question, e.g. “Timers” wants to use Heed to handle your voice requests.
    /// Sets kitchen timers by voice and tells you when they end. Allow?
    public var question: String {
        let trimmed = usageDescription.trimmed
        let reason = trimmed.last.map { ".!?".contains($0) } == true ? trimmed : trimmed + "."
        switch kind {
        case .authorization: return "“\(displayName)” wants to use Heed to handle your voice requests. \(reason) Allow?"
        case .speech: return "“\(displayName)” wants Heed to speak its responses aloud. \(reason) Allow?"
        case .speechRecognition: return "“\(displayName)” (\(appID)) wants to use speech recognition. \(reason) Allow?"
        }
    }
}
