import Foundation
import HeedCore
public import HeedIntents
public import HeedPluginProtocol
public import HeedPlugins
public import Logging
public import HeedState

/// The person on the other side of a conversation: asked questions, told results.
///
/// `heed run` answers from `--answer` or the terminal; the listener answers by voice.
public protocol ConversationUser: Sendable {
    /// Asks a question and waits for the answer.
    ///
    /// - Parameters:
    ///   - question: what to say or show.
    ///   - expecting: what kind of answer the conversation can use.
    ///   - app: the app whose conversation this is; `nil` for Heed's own questions (authorization).
    /// - Returns: the words the user said or typed, or `nil` when no answer came.
    func ask(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String?

    /// Shows or says a response, a prompt's outcome or a failure.
    ///
    /// - Parameters:
    ///   - text: what to show or say.
    ///   - app: the app whose conversation this is, once known.
    func tell(_ text: String, app: PluginManifest?) async
}

/// What kind of answer a question wants; a voice front end makes a small grammar of it.
public enum ExpectedAnswer: Sendable, Hashable {
    /// Yes or no.
    case yesOrNo
    /// One of these options, by name or position ("the second one").
    case choice([String])
    /// A value for a parameter of an intent.
    case value(intent: String, parameter: String)
}

/// How a conversation ended.
public struct ConversationResult: Sendable, Hashable {
    /// The kind of ending.
    public struct Ending: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The plugin handled the intent.
        public static let success = Ending("success")
        /// The plugin is still working on it (it will notify).
        public static let inProgress = Ending("inProgress")
        /// The plugin, or its process, failed.
        public static let failure = Ending("failure")
        /// The app is not authorized (denied, restricted, or not yet decided).
        public static let unauthorized = Ending("unauthorized")
        /// No plugin handles the intent.
        public static let noHandler = Ending("noHandler")
        /// A control intent ("pause") found nothing going on that takes it.
        public static let noActivity = Ending("noActivity")
        /// Two plugins claim the app id or the intent; Heed dispatches to neither.
        public static let conflict = Ending("conflict")
        /// The user said cancel, declined, or did not answer.
        public static let cancelled = Ending("cancelled")
        /// A value is unsupported, or the turn limit was reached.
        public static let unresolved = Ending("unresolved")

        public var description: String { name }
    }

    /// How it ended.
    public var ending: Ending
    /// What the user was told last.
    public var message: String

    public init(ending: Ending, message: String) {
        self.ending = ending
        self.message = message
    }
}

/// Limits that keep a conversation short.
public struct ConversationLimits: Sendable, Hashable {
    /// Resolve, confirm and handle requests plus questions, at most.
    public var maximumTurns: Int

    /// Creates limits.
    public init(maximumTurns: Int = 12) { self.maximumTurns = maximumTurns }
}

/// Carries parsed intents through SiriKit's conversation with the plugin of the app that
/// handles them: the authorization gate, resolve each parameter in declared order, confirm,
/// the user's confirmation where the intent asks for it, then handle.
public actor Dispatcher {
    private let catalog: IntentCatalog
    private let manifests: [PluginManifest]
    private let duplicates: [PluginManifest]
    private let authorization: AuthorizationStore
    private let vocabularyStore: VocabularyStore?
    private let limits: ConversationLimits
    private let pluginLimits: PluginLimits
    private let logger: Logger
    private var hosts: [String: PluginHost] = [:]
    /// What each app reported going on, last time it said (asked, or unasked).
    private var activities: [String: [PluginActivity]] = [:]
    private var activityWatchers: [String: Task<Void, Never>] = [:]
    private let activityContinuation: AsyncStream<[AppActivity]>.Continuation
    /// Everything going on, each time an app reports a change (the listener's context grammar
    /// follows it).
    public nonisolated let activityChanges: AsyncStream<[AppActivity]>

    /// Creates a dispatcher.
    ///
    /// - Parameters:
    ///   - catalog: the intent definitions (parameters in order, prompts, responses).
    ///   - manifests: the installed plugins.
    ///   - duplicates: plugins left out because another claims their app id
    ///     (``PluginCatalog/Discovery/duplicates``), so that a command for that app is refused with
    ///     both named rather than reported as having no app.
    ///   - authorization: the users' decisions and the admin policy.
    ///   - vocabularyStore: where the strings plugins register for their vocabulary types
    ///     (``PluginMessage/vocabulary(type:terms:)``) are kept; `nil` ignores them.
    ///   - limits: the turn limit.
    ///   - pluginLimits: time and size limits of plugin operations.
    ///   - logger: receives plugins' standard error and Heed's own diagnostics.
    public init(
        catalog: IntentCatalog,
        manifests: [PluginManifest],
        duplicates: [PluginManifest] = [],
        authorization: AuthorizationStore,
        vocabularyStore: VocabularyStore? = nil,
        limits: ConversationLimits = .init(),
        pluginLimits: PluginLimits = .standard,
        logger: Logger
    ) {
        self.catalog = catalog
        self.manifests = manifests
        self.duplicates = duplicates
        self.authorization = authorization
        self.vocabularyStore = vocabularyStore
        self.limits = limits
        self.pluginLimits = pluginLimits
        self.logger = logger
        (activityChanges, activityContinuation) = AsyncStream.makeStream(of: [AppActivity].self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The plugin that handles an intent routed by intent: the one that lists it.
    public func handler(for intent: String) -> PluginManifest? {
        manifests.sorted { $0.appID < $1.appID }.first { $0.intents.contains(intent) }
    }

    /// Everything going on now, as last reported by each app.
    public var currentActivities: [AppActivity] {
        activities.sorted { $0.key < $1.key }.flatMap { appID, list in list.map { AppActivity(appID: appID, activity: $0) } }
    }

    /// Asks the plugin of every authorized app that handles `intent` what is going on, all at once.
    /// A plugin that fails to answer counts as having nothing going on. Only authorized apps are
    /// asked: Heed starts no plugin the user has not allowed.
    public func refreshActivities(handling intent: String) async -> [AppActivity] {
        let asked = await refreshActivities(of: manifests.filter { $0.intents.contains(intent) })
        return currentActivities.filter { asked.contains($0.appID) }
    }

    /// Asks these apps' plugins what is going on, all at once, leaving out apps that are not
    /// authorized. Returns the apps asked.
    @discardableResult
    private func refreshActivities(of candidates: [PluginManifest]) async -> Set<String> {
        let asked = candidates.filter { (try? authorization.status(of: $0)) == .authorized }
        let hostsByApp = asked.map { ($0.appID, host(for: $0)) }
        let replies = await withTaskGroup(of: (String, PluginReply<[PluginActivity]>).self) { group in
            for (appID, host) in hostsByApp { group.addTask { (appID, await host.activities()) } }
            var replies: [(String, PluginReply<[PluginActivity]>)] = []
            for await reply in group { replies.append(reply) }
            return replies
        }
        for (appID, reply) in replies {
            switch reply.result {
            case .success(let list): record(Self.valid(list), from: appID)
            case .failure(let failure):
                logger.info("no activities", metadata: ["plugin": "\(appID)", "reason": "\(failure.reason)"])
                record([], from: appID)
            }
        }
        return Set(asked.map(\.appID))
    }

    /// The contextual intents that are active now: those that an app with something going on
    /// handles — for a control intent, only when one of its activities takes the control.
    public func activeContextualIntents() -> Set<String> {
        var active = Set<String>()
        for name in catalog.contextualIntents {
            let routing = catalog.intent(named: name)?.activityRouting
            for manifest in manifests where manifest.intents.contains(name) {
                let going = activities[manifest.appID] ?? []
                if going.contains(where: { activity in routing.map { ActivityRouter.fits(activity, routing: $0, target: nil) } ?? true }) {
                    active.insert(name)
                }
            }
        }
        return active
    }

    /// Asks every app that handles a contextual intent what is going on (``refreshActivities(handling:)``)
    /// and returns the contextual intents active now.
    public func refreshContext() async -> Set<String> {
        let contextual = catalog.contextualIntents
        await refreshActivities(of: manifests.filter { !contextual.isDisjoint(with: $0.intents) })
        return activeContextualIntents()
    }

    /// At most 64 activities with distinct, non-empty ids of at most 256 bytes; the rest of a
    /// plugin's list is dropped.
    static func valid(_ list: [PluginActivity]) -> [PluginActivity] {
        var seen = Set<String>()
        return Array(list.filter { !$0.id.isEmpty && $0.id.utf8.count <= 256 && seen.insert($0.id).inserted }.prefix(64))
    }

    /// Keeps the strings a plugin registered for one of its vocabulary types, when the app is
    /// authorized and declares the type; the store checks their count and length.
    private func register(_ terms: [String], type: String, from manifest: PluginManifest) {
        guard let vocabularyStore else { return }
        let metadata: Logger.Metadata = ["plugin": "\(manifest.appID)", "type": "\(DisplayText.sanitized(type))"]
        guard (try? authorization.status(of: manifest)) == .authorized else {
            logger.info("vocabulary of an app that is not authorized ignored", metadata: metadata)
            return
        }
        do {
            let current = (try? vocabularyStore.terms(type: type, app: manifest.appID)) ?? []
            guard current != terms else { return }
            try vocabularyStore.set(terms, type: type, app: manifest.appID)
        } catch {
            logger.warning("vocabulary refused: \(DisplayText.sanitized("\(error)"))", metadata: metadata)
        }
    }

    private func record(_ list: [PluginActivity], from appID: String) {
        guard activities[appID] ?? [] != list else { return }
        activities[appID] = list.isEmpty ? nil : list
        activityContinuation.yield(currentActivities)
    }

    /// Why an intent goes to no plugin although plugins claim it: two plugins claim the app id of a
    /// plugin that handles it, or two apps claim the intent. `nil` when at most one plugin does.
    public func conflict(for intent: String) -> String? {
        // Several apps may take a control intent; what is going on picks one.
        if catalog.intent(named: intent)?.activityRouting != nil { return nil }
        let duplicated = duplicates.filter { $0.intents.contains(intent) }
        if let appID = duplicated.first?.appID {
            let folders = duplicates.filter { $0.appID == appID }.map(\.directory.path)
            return "Two plugins claim the app id \(appID) (\(Self.list(folders, conjunction: "and"))); "
                + "Heed dispatches to neither until one is removed."
        }
        let claimants = manifests.filter { $0.intents.contains(intent) }
        guard claimants.count > 1 else { return nil }
        let names = claimants.map { "\($0.appID) (\($0.directory.path))" }
        return "\(Self.list(names, conjunction: "and")) all handle \(intent); Heed dispatches it to none until only one does."
    }

    /// Runs the conversation for one parsed intent.
    ///
    /// - Parameters:
    ///   - match: the intent and the parameter values that were spoken.
    ///   - vocabulary: the registered vocabulary, for the answers to questions (the one the
    ///     command was heard with).
    ///   - user: answers questions and hears responses.
    ///   - events: receives each step with its timing.
    /// - Returns: how the conversation ended; plugin crashes and time-outs end it as failures.
    public func dispatch(
        _ match: IntentMatch,
        vocabulary: VocabularySnapshot = .empty,
        user: some ConversationUser,
        events: @escaping @Sendable (ConversationEvent) -> Void = { _ in }
    ) async -> ConversationResult {
        var conversation = Conversation(match: match, catalog: catalog, vocabulary: vocabulary, limits: limits, user: user, events: events)
        events(.intent(match.intent, parameters: conversation.parameters))
        let result = await run(&conversation)
        events(.end(result))
        return result
    }

    private func run<User: ConversationUser>(_ conversation: inout Conversation<User>) async -> ConversationResult {
        guard let definition = catalog.intent(named: conversation.match.intent) else {
            return await conversation.end(.noHandler, "Heed has no intent named \(conversation.match.intent).")
        }
        let manifest: PluginManifest
        if let routing = definition.activityRouting {
            switch await route(definition, routing, &conversation) {
            case .success(let chosen): manifest = chosen
            case .failure(let ending): return ending.result
            }
        } else {
            if let conflict = conflict(for: definition.name) { return await conversation.end(.conflict, conflict) }
            guard let handler = handler(for: definition.name) else {
                return await conversation.end(.noHandler, "No installed app handles \(definition.name).")
            }
            manifest = handler
        }
        if let refusal = await authorize(manifest, &conversation) { return refusal }
        conversation.app = manifest
        let host = host(for: manifest)

        for parameter in definition.parameters {
            if let ending = await resolve(parameter, of: definition, with: host, &conversation) { return ending }
        }

        if conversation.turnsExhausted { return await conversation.end(.unresolved, "That took too many turns; please start again.") }
        let confirmIntent = conversation.pluginIntent
        let confirmation = await conversation.timed { await host.confirm(confirmIntent) }
        func reportConfirm(_ outcome: String, _ text: String? = nil) {
            conversation.events(.confirm(.init(app: manifest.appID, outcome: outcome, text: text, milliseconds: confirmation.milliseconds)))
        }
        switch confirmation.reply.result {
        case .failure(let failure):
            reportConfirm("failure", failure.reason)
            return await conversation.end(.failure, failure.reason)
        case .success(.failure(let reason)):
            reportConfirm("failure", reason)
            return await conversation.end(.failure, reason)
        case .success(.ready):
            reportConfirm("ready")
        }
        if definition.requiresConfirmation {
            let question = "Do you want to \(Self.phrase(for: definition))?"
            switch await conversation.askYesOrNo(question) {
            case .yes: break
            case .no: return await conversation.end(.cancelled, "Okay, I won't.")
            case .cancelled: return await conversation.end(.cancelled, "Cancelled.")
            }
        }

        let handleIntent = conversation.pluginIntent
        let handled = await conversation.timed { await host.handle(handleIntent) }
        switch handled.reply.result {
        case .failure(let failure):
            conversation.events(.handle(.init(app: manifest.appID, outcome: "failure", text: failure.reason, milliseconds: handled.milliseconds)))
            return await conversation.end(.failure, failure.reason)
        case .success(let outcome):
            conversation.events(
                .handle(.init(app: manifest.appID, outcome: outcome.status.rawValue, text: outcome.response, milliseconds: handled.milliseconds)))
            let fallback = definition.response(outcome.status == .failure ? "failure" : "success", values: conversation.typedValues(of: definition))
            let message = outcome.response ?? fallback ?? (outcome.status == .failure ? "That didn't work." : "Done.")
            switch outcome.status {
            case .success: return await conversation.end(.success, message)
            case .inProgress: return await conversation.end(.inProgress, message)
            case .failure: return await conversation.end(.failure, message)
            }
        }
    }

    /// A conversation's end, as an error so that a step can return it in a `Result`.
    struct Ended: Error { var result: ConversationResult }

    /// Picks the app of a control intent by what is going on (``ActivityRouter``), asking the user
    /// when nothing decides, and puts the activity's id in the intent's `activity` parameter.
    private func route<User: ConversationUser>(
        _ definition: IntentDefinition, _ routing: ActivityRouting, _ conversation: inout Conversation<User>
    ) async -> Result<PluginManifest, Ended> {
        let going = await refreshActivities(handling: definition.name)
        let target = routing.target.flatMap { conversation.parameters[$0]?.spokenText }
        let chosen: AppActivity
        switch ActivityRouter.choose(among: going, for: routing, target: target) {
        case .none:
            let message = definition.response("noActivity", values: conversation.typedValues(of: definition))
                ?? ActivityRouter.nothingFits(routing)
            conversation.events(.route(.noActivity))
            return .failure(Ended(result: await conversation.end(.noActivity, message)))
        case .one(let activity):
            chosen = activity
        case .ask(let candidates):
            let names = ActivityRouter.optionNames(candidates) { appID in
                manifests.first { $0.appID == appID }?.displayName ?? appID
            }
            conversation.events(.route(.disambiguation(names)))
            var picked: Int?
            while picked == nil {
                guard !conversation.turnsExhausted else {
                    return .failure(Ended(result: await conversation.end(.unresolved, "That took too many turns; please start again.")))
                }
                guard let answer = await conversation.ask("Which one: \(Self.list(names, conjunction: "or"))?", expecting: .choice(names)) else {
                    return .failure(Ended(result: await conversation.end(.cancelled, "Cancelled.")))
                }
                picked = Self.choice(answer, among: names)
                if picked == nil { await conversation.tell("Sorry, I didn't get which one.") }
            }
            chosen = candidates[picked!]
        }
        guard let manifest = manifests.first(where: { $0.appID == chosen.appID }) else {
            return .failure(Ended(result: await conversation.end(.noHandler, "No installed app handles \(definition.name).")))
        }
        conversation.events(.route(.chosen(app: chosen.appID, title: chosen.activity.title)))
        conversation.parameters["activity"] = .string(chosen.activity.id)
        return .success(manifest)
    }

    /// The authorization gate. Returns the ending when the app may not be dispatched to.
    private func authorize<User: ConversationUser>(_ manifest: PluginManifest, _ conversation: inout Conversation<User>) async -> ConversationResult? {
        let started = ContinuousClock.now
        let user = conversation.user
        let events = conversation.events
        let status: AuthorizationStatus
        do {
            status = try await authorization.requestAuthorization(for: manifest) { prompt in
                events(.prompt(prompt.question))
                let answer = await user.ask(prompt.question, expecting: .yesOrNo, app: nil)
                events(.answer(answer))
                return YesOrNo.decision(answer)
            }
        } catch {
            conversation.events(
                .authorization(app: manifest.appID, status: "refused", reason: "\(error)", milliseconds: (ContinuousClock.now - started).milliseconds))
            return await conversation.end(.unauthorized, "\(error)")
        }
        conversation.events(.authorization(app: manifest.appID, status: status.rawValue, milliseconds: (ContinuousClock.now - started).milliseconds))
        guard status == .authorized else {
            let name = manifest.displayName
            let message: String
            switch status {
            case .denied: message = "\(name) is not allowed to use Heed. Allow it with: heed auth grant \(AuthorizationStore.authorizationAppID(for: manifest))"
            case .restricted: message = "\(name) is restricted by the administrator's policy."
            default: message = "\(name) has not been allowed to use Heed yet."
            }
            return await conversation.end(.unauthorized, message)
        }
        return nil
    }

    /// Resolves one parameter until it settles. Returns the ending when the conversation stops.
    private func resolve<User: ConversationUser>(
        _ parameter: ParameterDefinition,
        of definition: IntentDefinition,
        with host: PluginHost,
        _ conversation: inout Conversation<User>
    ) async -> ConversationResult? {
        var userChoice = false
        while !conversation.turnsExhausted {
            let intent = conversation.pluginIntent
            let choice = userChoice
            let reply = await conversation.timed {
                await host.resolve(intent: intent, parameter: parameter.name, userChoice: choice)
            }
            let events = conversation.events
            func report(_ outcome: String, _ values: [PluginValue]? = nil, reason: String? = nil) {
                events(.resolve(.init(parameter: parameter.name, outcome: outcome, values: values, reason: reason, milliseconds: reply.milliseconds)))
            }
            let outcome: ResolveOutcome
            switch reply.reply.result {
            case .failure(let failure):
                report("failure", reason: failure.reason)
                return await conversation.end(.failure, failure.reason)
            case .success(let value):
                outcome = value
            }
            userChoice = false
            if let problem = Self.problem(with: outcome, for: parameter) {
                let reason = "\(conversation.app?.displayName ?? "The app") \(problem)"
                report("failure", reason: reason)
                logger.warning("plugin reply refused", metadata: ["plugin": "\(conversation.app?.appID ?? "")", "reason": "\(problem)"])
                return await conversation.end(.failure, reason)
            }
            switch outcome {
            case .success(let value):
                report("success", [value])
                conversation.parameters[parameter.name] = value
                return nil
            case .notRequired:
                report("notRequired")
                conversation.parameters[parameter.name] = nil
                return nil
            case .unsupported(let reason):
                report("unsupported", reason: reason)
                return await conversation.end(.unresolved, reason)
            case .needsValue:
                report("needsValue")
                let question = parameter.prompt ?? "What \(parameter.name)?"
                guard let answer = await conversation.ask(question, expecting: .value(intent: definition.name, parameter: parameter.name)) else {
                    return await conversation.end(.cancelled, "Cancelled.")
                }
                guard let value = catalog.answerCatalog(intent: definition.name, parameter: parameter.name)?
                    .parser(vocabulary: conversation.vocabulary.terms).parse(answer).first?.parameters[parameter.name]
                else {
                    await conversation.tell("Sorry, I didn't get that.")
                    continue
                }
                conversation.parameters[parameter.name] = PluginValue(value)
            case .disambiguation(let options):
                report("disambiguation", options)
                let names = options.map(\.spokenText)
                let question = "Which one: \(Self.list(names, conjunction: "or"))?"
                guard let answer = await conversation.ask(question, expecting: .choice(names)) else {
                    return await conversation.end(.cancelled, "Cancelled.")
                }
                guard let index = Self.choice(answer, among: names) else {
                    await conversation.tell("Sorry, I didn't get which one.")
                    continue
                }
                conversation.parameters[parameter.name] = options[index]
                userChoice = true
            case .confirmationRequired(let value):
                report("confirmationRequired", [value])
                switch await conversation.askYesOrNo("Did you mean \(value.spokenText)?") {
                case .yes:
                    conversation.parameters[parameter.name] = value
                    userChoice = true
                case .no:
                    conversation.parameters[parameter.name] = nil
                case .cancelled:
                    return await conversation.end(.cancelled, "Cancelled.")
                }
            }
        }
        return await conversation.end(.unresolved, "That took too many turns; please start again.")
    }

    /// What is wrong with a plugin's resolution of a parameter, as the end of a sentence about the
    /// app; `nil` when every value fits the parameter's type. A plugin's reply is data from another
    /// process: an object where a duration belongs, `1e19` for an integer or an empty list to choose
    /// from ends the conversation as the plugin's failure, never as a trap in Heed.
    static func problem(with outcome: ResolveOutcome, for parameter: ParameterDefinition) -> String? {
        let values: [PluginValue]
        switch outcome {
        case .success(let value), .confirmationRequired(let value): values = [value]
        case .disambiguation(let options):
            guard !options.isEmpty else { return "gave an empty list to choose a \(parameter.name) from." }
            values = options
        case .needsValue, .notRequired, .unsupported: return nil
        }
        for value in values where parameter.type.typedValue(value) == nil {
            return "resolved \(parameter.name) to \(DisplayText.sanitized(String(value.description.prefix(80)))), which is not \(parameter.type.article)."
        }
        return nil
    }

    private func host(for manifest: PluginManifest) -> PluginHost {
        if let host = hosts[manifest.appID] { return host }
        let host = PluginHost(
            manifest: manifest, executableURL: manifest.executableURL(), limits: pluginLimits,
            stateDirectory: authorization.stateDirectory.appendingPathComponent("plugins", isDirectory: true)
                .appendingPathComponent(manifest.appID, isDirectory: true),
            logger: logger)
        hosts[manifest.appID] = host
        let appID = manifest.appID
        activityWatchers[appID] = Task { [weak self] in
            for await report in host.reports {
                switch report {
                case .activities(let reported): await self?.record(Self.valid(reported), from: appID)
                case .vocabulary(let type, let terms): await self?.register(terms, type: type, from: manifest)
                default: break
                }
            }
        }
        return host
    }

    /// Starts the plugin processes of the apps that are authorized now, so the first command
    /// to each does not wait for its process to start (a listener calls this once).
    public func prepare() async {
        for manifest in manifests {
            guard (try? authorization.status(of: manifest)) == .authorized else { continue }
            if let failure = await host(for: manifest).start() {
                logger.warning("\(manifest.appID) did not start: \(failure)")
            }
        }
    }

    /// Delivers what running plugins announce on their own (a timer that ended), for a while.
    ///
    /// - Parameters:
    ///   - duration: how long to listen.
    ///   - receive: called with each notification, from whichever plugin sent it.
    public func notifications(for duration: Duration, _ receive: @escaping @Sendable (PluginNotification) -> Void) async {
        let streams = hosts.values.map(\.notifications)
        await withTaskGroup(of: Void.self) { group in
            for stream in streams {
                group.addTask {
                    for await notification in stream { receive(notification) }
                }
            }
            group.addTask { try? await Task.sleep(for: duration) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Stops every plugin process.
    public func shutdown() async {
        for host in hosts.values { await host.shutdown() }
        for watcher in activityWatchers.values { watcher.cancel() }
        hosts = [:]
        activityWatchers = [:]
        activityContinuation.finish()
    }

    /// The index of the option the answer names: by its words, or by position ("the second one").
    static func choice(_ answer: String, among options: [String]) -> Int? {
        // "the pizza timer" picks "pizza timer"; "the run workout" picks "the run workout".
        func key(_ text: String) -> String {
            var words = TextNormalizer.words(text)
            if let first = words.first, ["the", "my", "that"].contains(first), words.count > 1 { words.removeFirst() }
            return words.joined(separator: " ")
        }
        let words = key(answer)
        if let exact = options.firstIndex(where: { key($0) == words }) { return exact }
        guard !options.isEmpty else { return nil }
        switch ParameterType.ordinal.value(fromSpoken: answer) {
        case .ordinal(.position(let position)) where (1...options.count).contains(position): return position - 1
        case .ordinal(.last): return options.isEmpty ? nil : options.count - 1
        default: return nil
        }
    }

    static func list(_ items: [String], conjunction: String) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// "cancel the workout" for `cancelWorkout`: the intent's description, lower-cased, as a question.
    private static func phrase(for definition: IntentDefinition) -> String {
        var text = definition.description.trimmed
        if text.hasSuffix(".") { text.removeLast() }
        guard let first = text.first else { return definition.name }
        return first.lowercased() + text.dropFirst()
    }
}

/// The state of one conversation: the parameters so far and the turns used.
struct Conversation<User: ConversationUser> {
    let match: IntentMatch
    let catalog: IntentCatalog
    /// The registered vocabulary, for the answers to questions.
    let vocabulary: VocabularySnapshot
    let limits: ConversationLimits
    let user: User
    let events: @Sendable (ConversationEvent) -> Void
    var parameters: [String: PluginValue]
    /// The app handling the intent, once it is authorized.
    var app: PluginManifest?
    private var turns = 0

    init(
        match: IntentMatch, catalog: IntentCatalog, vocabulary: VocabularySnapshot, limits: ConversationLimits, user: User,
        events: @escaping @Sendable (ConversationEvent) -> Void
    ) {
        self.match = match
        self.catalog = catalog
        self.vocabulary = vocabulary
        self.limits = limits
        self.user = user
        self.events = events
        self.parameters = match.parameters.mapValues(PluginValue.init)
    }

    var pluginIntent: PluginIntent { PluginIntent(name: match.intent, parameters: parameters) }

    var turnsExhausted: Bool { turns >= limits.maximumTurns }

    /// Runs one plugin operation, counting the turn and timing it.
    mutating func timed<Outcome>(_ operation: () async -> PluginReply<Outcome>) async -> (reply: PluginReply<Outcome>, milliseconds: Double) {
        turns += 1
        let reply = await operation()
        return (reply, reply.duration.milliseconds)
    }

    /// Asks a question; `nil` when the user gave no answer or said cancel.
    mutating func ask(_ question: String, expecting: ExpectedAnswer) async -> String? {
        turns += 1
        events(.prompt(question))
        let answer = await user.ask(question, expecting: expecting, app: app)
        events(.answer(answer))
        guard let answer, !YesOrNo.isCancel(answer) else { return nil }
        return answer
    }

    mutating func askYesOrNo(_ question: String) async -> YesOrNo {
        while !turnsExhausted {
            guard let answer = await ask(question, expecting: .yesOrNo) else { return .cancelled }
            if let decision = YesOrNo(answer: answer) { return decision }
            await tell("Please answer yes or no.")
        }
        return .cancelled
    }

    /// Ends the conversation: tells the user and returns the result.
    func end(_ ending: ConversationResult.Ending, _ message: String) async -> ConversationResult {
        events(.response(message))
        await user.tell(message, app: app)
        return ConversationResult(ending: ending, message: message)
    }

    /// Tells the user something in the middle of the conversation.
    func tell(_ text: String) async {
        await user.tell(text, app: app)
    }

    /// The parameters as typed values, for the intent's response texts.
    func typedValues(of definition: IntentDefinition) -> [String: ParameterValue] {
        var values: [String: ParameterValue] = [:]
        for parameter in definition.parameters {
            guard let value = parameters[parameter.name] else { continue }
            values[parameter.name] = parameter.type.typedValue(value) ?? .phrase(value.spokenText)
        }
        return values
    }
}

/// A yes/no answer, or cancel.
enum YesOrNo: Equatable {
    case yes, no, cancelled

    init?(answer: String) {
        if Self.isCancel(answer) {
            self = .cancelled
        } else if case .boolean(let value) = ParameterType.boolean.value(fromSpoken: answer) {
            self = value ? .yes : .no
        } else {
            return nil
        }
    }

    /// A permission question's answer: `true` for yes, `false` for no, `nil` for no answer or
    /// "cancel" (the question stays undecided).
    static func decision(_ answer: String?) -> Bool? {
        switch answer.flatMap(YesOrNo.init(answer:)) {
        case .yes?: true
        case .no?: false
        case .cancelled?, nil: nil
        }
    }

    /// The phrases that end a conversation at any turn.
    static let cancelPhrases = ["cancel", "never mind", "nevermind", "stop", "forget it"]

    /// "cancel", "never mind", "stop" end a conversation at any turn.
    static func isCancel(_ answer: String) -> Bool {
        cancelPhrases.contains(TextNormalizer.words(answer).joined(separator: " "))
    }
}

extension PluginValue {
    /// A typed parameter value on the wire: numbers as numbers, durations in seconds,
    /// ordinals as positions or "last", text as strings.
    init(_ value: ParameterValue) {
        switch value {
        case .integer(let number): self = .number(Double(number))
        case .number(let number): self = .number(number)
        case .boolean(let flag): self = .bool(flag)
        case .duration(let seconds): self = .number(Double(seconds))
        case .ordinal(.position(let position)): self = .number(Double(position))
        case .ordinal(.last): self = .string("last")
        case .enumeration(let text), .vocabulary(let text), .phrase(let text): self = .string(text)
        }
    }

    /// The value as words to read to the user.
    var spokenText: String {
        switch self {
        case .string(let text): text
        case .number: description
        case .bool(let flag): flag ? "yes" : "no"
        case .null: "nothing"
        case .array(let items): items.map(\.spokenText).joined(separator: ", ")
        case .object: description
        }
    }
}

extension ParameterType {
    /// The typed value a wire value stands for when it fits this type: whole numbers for integers
    /// (at most 10^15 in size), finite numbers, seconds from 0 to 10^12 for durations, positions
    /// from 1 or `"last"` for ordinals, strings for the text types; `nil` for anything else.
    func typedValue(_ value: PluginValue) -> ParameterValue? {
        switch (self, value) {
        case (.integer, .number(let number)):
            guard number.rounded() == number, abs(number) <= 1e15 else { return nil }
            return .integer(Int(number))
        case (.number, .number(let number)):
            return number.isFinite ? .number(number) : nil
        case (.boolean, .bool(let flag)):
            return .boolean(flag)
        case (.duration, .number(let seconds)):
            guard seconds.isFinite, (0...1e12).contains(seconds) else { return nil }
            return .duration(seconds: Int(seconds.rounded()))
        case (.ordinal, .number(let position)):
            guard position.rounded() == position, (1...1e15).contains(position) else { return nil }
            return .ordinal(.position(Int(position)))
        case (.ordinal, .string("last")):
            return .ordinal(.last)
        case (.enumeration, .string(let text)):
            return .enumeration(text)
        case (.vocabulary, .string(let text)):
            return .vocabulary(text)
        case (.phrase, .string(let text)):
            return .phrase(text)
        default:
            return nil
        }
    }

    /// The type with its article, for messages: "a duration", "an integer".
    var article: String {
        switch self {
        case .integer: "an integer"
        case .ordinal: "an ordinal"
        case .enumeration: "one of its cases"
        case .vocabulary: "a text"
        case .phrase: "a text"
        default: "a \(name)"
        }
    }
}
