public import HeedAudio
public import HeedCore
public import HeedIntents
public import HeedPlugins
public import HeedSpeech
public import Logging
import Foundation
import Synchronization
public import HeedState

/// What a listener reports: its own events and the conversation's.
public enum ListenerOutput: Sendable {
    case listener(ListenerEvent)
    case conversation(ConversationEvent)
}

/// The hands-free loop: audio → endpointer → recognizer → intent → conversation → speech.
///
/// It runs on a thread of its own (``ThreadExecutor``): reading the microphone, decoding and
/// playing speech all block, and PocketSphinx must stay on one thread. Dialog turns come back
/// to it through ``VoiceUser``: each question is spoken, then answered by voice with a grammar
/// of only that turn's answers.
public actor Listener {
    /// How a command is started.
    public enum Activation: Sendable, Hashable {
        /// Every utterance is a possible command; rejection keeps out the rest.
        case always
        /// A wake phrase opens a command window (the rest of the utterance, or the next one).
        /// It is spotted with a grammar of the phrase followed by any command, then verified:
        /// the audio up to its end, recognized with a grammar of the phrase alone, must reach
        /// `threshold` (0–1) of confidence.
        case wakePhrase(String, threshold: Double)
        /// A press (``pushToTalk()``, SIGUSR1 in `heed listen`) opens a command window.
        case pushToTalk

        var name: String {
            switch self {
            case .always: "always"
            case .wakePhrase: "wakePhrase"
            case .pushToTalk: "pushToTalk"
            }
        }
    }

    /// How the listener behaves.
    public struct Configuration: Sendable {
        /// How a command starts.
        public var activation: Activation = .always
        /// Where utterances start and end.
        public var endpointing: Endpointer.Configuration = .standard
        /// Seconds after a wake phrase or a press in which a command may start.
        public var commandWindow: Double = 5
        /// Seconds a dialog turn waits for an answer to start.
        public var answerTimeout: Double = 8
        /// Seconds between partial results at most.
        public var partialInterval: Double = 0.25
        /// Stop after this many seconds of audio (`nil`: until stopped or the source ends).
        public var maximumSeconds: Double?
        /// The config's spoken-response service switch (`spokenResponses`).
        public var spokenResponses = false
        /// Noise suppression of each utterance before its whole decode: `on` always, `auto` when
        /// its estimated SNR is below ``DenoiseMode/autoBelowDecibels`` (as `heed eval` does for
        /// each recording), `off` never. The utterance is taken from a suppressor that has followed
        /// the whole stream (``HeedAudio/SuppressedStream``). The endpointer and the live pass hear
        /// the audio as captured: suppressing the captured stream itself broke the endpointer in
        /// steady noise (docs/MEASUREMENTS.md, "The listener in kitchen noise").
        public var denoise: DenoiseMode = .auto
        /// The suppressor's settings, for `on` and `auto`.
        public var denoiseSettings = NoiseSuppressor.Settings()
        /// The rejection threshold of always-on listening: every stretch of talk is a candidate.
        public var alwaysOnThreshold = ConfidenceModel.features.operatingPoint
        /// The rejection threshold inside a window that already bounds false accepts: after the
        /// wake phrase, after a press, and for the answer to Heed's own question.
        public var windowThreshold = ConfidenceModel.features.lenientPoint
        /// Seconds of quiet that end an utterance whose words so far only begin a sentence of the
        /// grammar ("set a timer for …"): people stop mid-command to think. No more than
        /// ``Endpointer/Configuration-swift.struct/endSilence`` turns the wait off.
        public var unfinishedEndSilence: Double = 1.5
        /// An utterance whose live pass has heard only silence and noise for this many seconds
        /// after speech started ends as noise: the room grew louder (a tap, a fan, a television
        /// switched on) and nobody spoke, and the endpointer learns the new level (docs/LISTEN.md,
        /// "A room that grows louder"). Longer than a first word takes to reach the live path. 0: never.
        public var noiseOnset: Double = 0.6
        /// Always-on: seconds after an unsure command (rejected at ``alwaysOnThreshold``, not at
        /// ``windowThreshold``) in which the next utterance, if it says the same command again (the
        /// same intent with the same values), is held to ``windowThreshold``. People say again what
        /// was not acted on; other talk seldom says one command twice running (docs/LISTEN.md,
        /// "Saying it again"). 0: never.
        public var repeatWindow: Double = 5
        /// Always-on: an unsure command (rejected at ``alwaysOnThreshold``, not at
        /// ``windowThreshold``) whose confidence is at least this is asked back ("Did you say …?")
        /// and acted on when the answer is yes; an answer that is no yes or no is heard as a
        /// command (docs/LISTEN.md, "Asking back"). Above 1: never.
        public var askBackThreshold = 0.7
        /// ``askBackThreshold`` for a command heard twice in noise (``HeedCore/RecognitionResult/inNoisePoint``),
        /// which is held to a lower point: its unsure band lies below that point. 0.6: the lowest
        /// floor with at most one question an hour of other talk mixed with kitchen noise at 12 and
        /// 6 dB, estimated offline; the listener asked 2 more at 12 dB in an hour of such talk
        /// (docs/MEASUREMENTS.md, "Asking back in noise"). Above 1: never.
        public var askBackInNoiseThreshold = 0.6
        /// Where the commands acted on are kept to adapt on (`--keep-heard`); `nil` keeps none.
        public var keptCommands: HeardRecordings?

        /// The defaults.
        public init() {}
    }

    private let executor = ThreadExecutor(name: "heed-listener")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let configuration: Configuration
    private let source: any AudioSource
    private let recognizer: any SpeechRecognizer
    private let synthesizer: any SpeechSynthesizer
    private let speaker: (any AudioSink)?
    private let catalog: IntentCatalog
    /// The command grammar and its parser, of the catalog without the contextual intents that
    /// are not active (``IntentCatalog/inContext(_:)``) and the registered vocabulary.
    private var setup: RecognitionSetup
    /// The contextual intents in the command grammar now.
    private var context: Set<String> = []
    private let vocabularyStore: VocabularyStore?
    /// The vocabulary file's version last read (or found unusable).
    private var vocabularyStamp: VocabularyChangeStamp
    private let commandGrammar: String
    private let dispatcher: Dispatcher?
    private let authorization: AuthorizationStore?
    private let emit: @Sendable (ListenerOutput) -> Void
    private let logger: Logger
    private var endpointer: Endpointer
    /// The captured stream through the noise suppressor, fed what the endpointer is fed, when
    /// the denoise mode is not off.
    private let suppressed: SuppressedStream?
    private let signals = Signals()
    private var presses = 0
    private var lastVocabularyCheck = 0.0
    /// The command grammar being built off the loop, if one is.
    private var build: GrammarBuild?
    private var streamEnded = false
    /// The last always-on utterance when it was an unsure command: what it asked, and where its
    /// speech ended (``Configuration/repeatWindow``).
    private var unsure: (match: IntentMatch, speechEnd: Double)?

    private final class Signals: Sendable {
        let stop = Atomic<Bool>(false)
        let presses = Atomic<Int>(0)
        /// The contextual intents active now, as the dispatcher last said; `nil` until it has.
        let context = Mutex<Set<String>?>(nil)
        /// What others ask of the loop, taken between utterances; `nil` once the loop has ended.
        let requests = Mutex<[Request]?>([])

        var hasRequests: Bool { requests.withLock { !($0?.isEmpty ?? true) } }

        /// Queues a request; `false` when the loop has ended.
        func queue(_ request: Request) -> Bool {
            requests.withLock { requests in
                guard requests != nil else { return false }
                requests?.append(request)
                return true
            }
        }
    }

    /// The time of each stage of a grammar rebuild, in milliseconds, by stage name.
    private struct StageTimes {
        var milliseconds: [String: Double] = [:]
        private var stageStarted = ContinuousClock.now

        /// Ends the stage `name`, which began at the last lap (or at creation).
        mutating func lap(_ name: String) {
            let now = ContinuousClock.now
            milliseconds[name] = (now - stageStarted).milliseconds
            stageStarted = now
        }
    }

    /// A command grammar built on a thread of its own while the loop listens (``refreshGrammar()``).
    private final class GrammarBuild: Sendable {
        struct Built: Sendable {
            let setup: RecognitionSetup
            let timings: [String: Double]
        }

        /// The contextual intents it is for.
        let context: Set<String>
        let vocabularyChanged: Bool
        /// The loop's position in the audio when it started.
        let time: Double
        /// The vocabulary file's version when it started, when the vocabulary is read anew.
        let stamp: VocabularyChangeStamp?
        private let result = Mutex<Result<Built, any Error>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(context: Set<String>, vocabularyChanged: Bool, time: Double, stamp: VocabularyChangeStamp?) {
            self.context = context
            self.vocabularyChanged = vocabularyChanged
            self.time = time
            self.stamp = stamp
        }

        /// The build's outcome, once it is done.
        var outcome: Result<Built, any Error>? { result.withLock { $0 } }

        func finish(_ outcome: Result<Built, any Error>) {
            result.withLock { $0 = outcome }
            done.signal()
        }

        /// Blocks until the build is done.
        func wait() {
            done.wait()
            done.signal()
        }
    }

    /// What the service asks of the loop (``askYesOrNo(_:)``, ``lend(_:)``).
    private enum Request: Sendable {
        case question(String, answer: @Sendable (Bool?) -> Void)
        case lend(MicrophoneLoan)

        /// Answers a request the loop will never take.
        func drop() {
            switch self {
            case .question(_, let answer): answer(nil)
            case .lend(let loan): loan.end()
            }
        }
    }

    /// Creates a listener.
    ///
    /// - Parameters:
    ///   - source: the microphone or a file; the listener owns it from now on.
    ///   - recognizer: a recognizer whose active grammar is the command grammar.
    ///   - synthesizer: speaks the responses.
    ///   - speaker: where spoken responses go; `nil` never speaks.
    ///   - catalog: the intents; the command grammar the recognizer has was compiled from them
    ///     without their contextual intents (`catalog.inContext([])`), and follows what is going on
    ///     from then on.
    ///   - setup: the command grammar (the recognizer's active one) and its parser, made from
    ///     `catalog.inContext([])` and the registered vocabulary.
    ///   - vocabularyStore: re-read when it changes, to rebuild the grammar without a restart.
    ///   - dispatcher: carries intents to plugins; `nil` only reports them (`--dry-run`).
    ///   - authorization: speech permissions (with a dispatcher).
    ///   - configuration: activation, endpointing and limits.
    ///   - logger: for diagnostics.
    ///   - emit: receives every event.
    public init(
        source: sending any AudioSource,
        recognizer: sending any SpeechRecognizer,
        synthesizer: any SpeechSynthesizer = EspeakSynthesizer(),
        speaker: sending (any AudioSink)?,
        catalog: IntentCatalog,
        setup: RecognitionSetup,
        vocabularyStore: VocabularyStore?,
        dispatcher: Dispatcher?,
        authorization: AuthorizationStore?,
        configuration: Configuration,
        logger: Logger,
        emit: @escaping @Sendable (ListenerOutput) -> Void
    ) {
        self.source = source
        self.recognizer = recognizer
        self.synthesizer = synthesizer
        self.commandGrammar = recognizer.activeGrammar
        self.speaker = speaker
        self.catalog = catalog
        self.setup = setup
        self.vocabularyStamp = setup.vocabulary.stamp
        self.vocabularyStore = vocabularyStore
        self.dispatcher = dispatcher
        self.authorization = authorization
        self.configuration = configuration
        self.logger = logger
        self.emit = emit
        self.endpointer = Endpointer(configuration: configuration.endpointing)
        let endpointing = configuration.endpointing
        let longest = endpointing.maximumUtterance + endpointing.preRoll + endpointing.minimumSpeechStart + endpointing.tentativeSilence
        self.suppressed = configuration.denoise == .off ? nil : SuppressedStream(settings: configuration.denoiseSettings, keeping: longest + 1)
    }

    /// Asks the loop to stop at the next chunk of audio (SIGINT, SIGTERM).
    public nonisolated func stop() { signals.stop.store(true, ordering: .relaxed) }

    /// A press of push-to-talk: the next utterance within the command window is a command.
    public nonisolated func pushToTalk() { signals.presses.add(1, ordering: .relaxed) }

    private var stopRequested: Bool { signals.stop.load(ordering: .relaxed) }

    /// Asks the user a yes-or-no question by voice, as soon as nobody is speaking a command:
    /// the question is shown (and spoken when spoken responses are on), then the answer heard
    /// with a grammar of only yes, no and cancel. `heed serve --listen` asks this way whether a
    /// client may use speech recognition.
    ///
    /// - Parameter answer: Called once, from the listener's thread, with the answer: `nil` for
    ///   none, "cancel", or a listener that is not listening.
    public nonisolated func askYesOrNo(_ question: String, answer: @escaping @Sendable (Bool?) -> Void) {
        if !signals.queue(.question(question, answer: answer)) { answer(nil) }
    }

    /// Lends the microphone to `loan`'s borrower as soon as nobody is speaking a command: the
    /// listener hands on what it captures, hears nothing itself, and listens again when the loan
    /// is given back. A listener that is not listening ends the loan at once.
    public nonisolated func lend(_ loan: MicrophoneLoan) {
        if !signals.queue(.lend(loan)) { loan.end() }
    }

    // MARK: The loop

    /// Listens until stopped, the source ends or ``Configuration/maximumSeconds`` of audio have passed.
    ///
    /// - Throws: ``AudioError`` when the audio source fails, ``RecognizerError`` when decoding fails.
    public func run() async throws {
        if case .wakePhrase(let phrase, _) = configuration.activation {
            try loadWakeGrammar(phrase, commands: setup.grammar)
        }
        await dispatcher?.prepare()
        if let dispatcher {
            let active = await dispatcher.refreshContext()
            signals.context.withLock { $0 = active }
        }
        send(.listening(mode: configuration.activation.name, source: source.name))
        // Set up: what start-up ran once need not stay mapped while the loop runs for days.
        Allocator.releaseFilePages()
        defer {
            // Nothing is taken from now on: what waits is answered.
            for request in signals.requests.withLock({ requests in defer { requests = nil }; return requests ?? [] }) { request.drop() }
            send(.stopped(time: endpointer.position))
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let dispatcher {
                    // What is going on changes the context grammar: note it for the loop, which
                    // rebuilds the grammar between utterances.
                    let signals = self.signals
                    group.addTask {
                        for await _ in dispatcher.activityChanges {
                            let active = await dispatcher.activeContextualIntents()
                            signals.context.withLock { $0 = active }
                        }
                    }
                }
                try await listen()
                group.cancelAll()
            }
        } catch {
            await dispatcher?.shutdown()
            throw error
        }
        await dispatcher?.shutdown()
    }

    /// The loop itself, until stopped or the source ends.
    private func listen() async throws {
        while !stopRequested && !streamEnded {
            try await takeRequests()
            if stopRequested || streamEnded { break }
            switch configuration.activation {
            case .always:
                if case .utterance(let utterance, let result?, let ended) = try nextUtterance(.command, timeout: nil) {
                    if let match = askable(result) {
                        try await askBack(about: result, match, utterance: utterance)
                    } else {
                        await act(on: result, utterance: utterance, ended: ended)
                    }
                }
            case .pushToTalk:
                guard try waitForPress() else { continue }
                if case .utterance(let utterance, let result?, let ended) = try nextUtterance(.command, timeout: configuration.commandWindow) {
                    await act(on: result, utterance: utterance, ended: ended)
                }
            case .wakePhrase:
                try await wakeThenCommand()
            }
            Allocator.releaseFilePages()
        }
    }

    /// What one wait for an utterance came to.
    private enum Heard {
        /// An utterance; its recognition unless it was only to be spotted for the wake phrase.
        case utterance(Endpointer.Utterance, RecognitionResult?, ended: ContinuousClock.Instant)
        /// No speech started in time.
        case timedOut
        /// The source ended or the loop was asked to stop.
        case over
    }

    private enum Purpose {
        case command, answer, wake
        /// The answer to asking back: yes, no, or a command of its own, heard with the answer
        /// grammar. What that grammar's live pass hears does not end the utterance: it would cut
        /// a command short, or end it as noise.
        case confirmation
        var decodes: Bool { self != .wake }
        var isAnswer: Bool { self == .answer || self == .confirmation }
        var endsOnWhatWasHeard: Bool { self != .confirmation }
    }

    /// The rejection threshold for what is heard for `purpose`: a command is always-on only when
    /// nothing opened a window for it.
    private func threshold(for purpose: Purpose) -> Double {
        if purpose == .command, configuration.activation == .always { return configuration.alwaysOnThreshold }
        return configuration.windowThreshold
    }

    /// Reads audio until an utterance ends, reporting speech start, partial results and the end.
    ///
    /// While the speaker pauses (``Endpointer/Event/likelyEnd(_:)``) the utterance is decoded
    /// already; if the pause turns out to be the end, that result is used, so the wait after the
    /// end-of-speech silence is only what is left of the decoding.
    private func nextUtterance(_ purpose: Purpose, timeout: Double?) throws -> Heard {
        let started = endpointer.position
        var speculative: (sampleCount: Int, result: RecognitionResult, denoised: Bool?)?
        // The words heard before the pause held open (one an utterance), and where the speech
        // after it begins, with its pre-roll: what may be a command of its own, said just after
        // someone else's talk.
        var held: [String]?
        var afterHeldPause: Int?
        var lastPartial = ""
        var lastPartialTime = -Double.infinity
        while true {
            if stopRequested { return .over }
            // A request waits for silence, and never cuts into a window or a dialog turn.
            if timeout == nil, !endpointer.inSpeech, signals.hasRequests { return .over }
            if let timeout, !endpointer.inSpeech, endpointer.position - started > timeout { return .timedOut }
            if !endpointer.inSpeech, !purpose.isAnswer, endpointer.position - lastVocabularyCheck >= 1 {
                lastVocabularyCheck = endpointer.position
                refreshGrammar()
            }
            var chunk: [Int16] = []
            if let maximum = configuration.maximumSeconds, endpointer.position >= maximum {
                streamEnded = true
            } else {
                chunk = try readChunk()
                streamEnded = chunk.isEmpty
            }
            let wasInSpeech = endpointer.inSpeech
            var events = streamEnded ? endpointer.finish() : endpointer.process(chunk)
            if purpose.decodes, wasInSpeech, endpointer.inSpeech, speculative == nil {
                try recognizer.decodeLive(chunk)
                // The hypothesis is read only when a partial may go out.
                if endpointer.position - lastPartialTime >= configuration.partialInterval, case let partial = recognizer.liveHypothesis,
                    partial != lastPartial
                {
                    lastPartial = partial
                    lastPartialTime = endpointer.position
                    send(.partial(time: endpointer.position, text: partial))
                }
                // A noisy room can hold the endpointer in speech long after the words: the
                // recognizer's own evidence ends the utterance then (docs/LISTEN.md).
                if purpose.endsOnWhatWasHeard, let quiet = recognizer.liveQuietAfterSentence, quiet >= endpointer.configuration.endSilence,
                    let ended = endpointer.endSpeech(heardQuietFor: quiet)
                {
                    events.append(ended)
                } else if purpose.endsOnWhatWasHeard, configuration.noiseOnset > 0, held == nil, let quiet = recognizer.liveQuietWithoutWords,
                    quiet >= configuration.noiseOnset + endpointer.configuration.preRoll, let ended = endpointer.endAsNoise()
                {
                    // The room grew louder and nobody spoke: the endpointer and the suppressor
                    // learn the new noise.
                    if case .speechEnded(let noise) = ended { suppressed?.relearn(noise.speechSamples) }
                    events.append(ended)
                }
            }
            for event in events {
                switch event {
                case .speechStarted(let time):
                    send(.speechStarted(time: time))
                    if purpose.decodes {
                        try recognizer.startLiveDecoding()
                        try recognizer.decodeLive(endpointer.currentSamples)
                    }
                case .likelyEnd(let utterance):
                    guard purpose.decodes else { continue }
                    let unfinished = recognizer.liveSentenceUnfinished
                    let words = unfinished ? recognizer.liveHypothesis.split(separator: " ").map(String.init) : []
                    let decoded = try hear(utterance)
                    let result = decoded.result
                    speculative = (utterance.samples.count, result, decoded.denoised)
                    // Mid-sentence, a pause is more likely one to think than the end, unless what
                    // was said so far already makes a command that would be taken. One pause an
                    // utterance: held talk would otherwise run on from pause to pause.
                    if unfinished, held == nil, result.judged(at: threshold(for: purpose)).rejected {
                        endpointer.holdOpen(forQuiet: configuration.unfinishedEndSilence)
                        held = words
                    }
                case .speechResumed:
                    guard purpose.decodes, speculative != nil else { continue }
                    speculative = nil
                    // After a held pause the live pass hears the new speech alone, and judges its
                    // words as going on from those before the pause or as beginning anew.
                    if held != nil, afterHeldPause == nil {
                        let preRoll = Int(endpointer.configuration.preRoll * Double(Endpointer.sampleRate))
                        afterHeldPause = max(0, endpointer.currentSamples.count - Endpointer.sampleRate / 100 - preRoll)
                    }
                    try recognizer.startLiveDecoding(after: held ?? [])
                    try recognizer.decodeLive(Array(endpointer.currentSamples.dropFirst(afterHeldPause ?? 0)))
                case .speechEnded(let utterance):
                    let ended = ContinuousClock.now
                    recognizer.stopLiveDecoding()
                    send(.speechEnded(time: utterance.speechEnd, ending: utterance.ending.rawValue))
                    guard utterance.ending != .tooShort, utterance.ending != .tooLong, utterance.ending != .noise else {
                        let reason = switch utterance.ending {
                        case .tooShort: "too short to be a command"
                        case .noise: "only noise: the room grew louder"
                        default: "too long to be a command"
                        }
                        send(.ignored(time: utterance.speechEnd, reason: reason))
                        // Talk came between: what follows is no longer a command said again.
                        if utterance.ending == .tooLong { unsure = nil }
                        speculative = nil
                        continue
                    }
                    guard purpose.decodes else { return .utterance(utterance, nil, ended: ended) }
                    var utterance = utterance
                    var result: RecognitionResult
                    var denoised: Bool?
                    if let speculative, speculative.sampleCount == utterance.samples.count {
                        result = speculative.result.judged(at: threshold(for: purpose))
                        denoised = speculative.denoised
                    } else {
                        let decoded = try hear(utterance)
                        result = decoded.result.judged(at: threshold(for: purpose))
                        denoised = decoded.denoised
                    }
                    // A pause was waited out and what came of it is no command: the words after the
                    // pause may be one of their own, said just after someone else's talk.
                    var afterPause = false
                    if result.rejected, let afterHeldPause {
                        let words = utterance.from(sample: afterHeldPause)
                        let decoded = try hear(words)
                        let heard = decoded.result.judged(at: threshold(for: purpose))
                        if !heard.rejected {
                            (utterance, result, denoised, afterPause) = (words, heard, decoded.denoised, true)
                        }
                    }
                    var repeated = false
                    if purpose == .command, configuration.activation == .always { (result, repeated) = judgedAsRepeat(result, of: utterance) }
                    sendFinal(result, of: utterance, denoised: denoised, repeated: repeated, afterPause: afterPause, ended: ended)
                    return .utterance(utterance, result, ended: ended)
                }
            }
            if streamEnded { return .over }
        }
    }

    /// An always-on result judged again as the second saying of an unsure command: held to the
    /// window's threshold when it asks for what the unsure utterance just before it asked for,
    /// within ``Configuration/repeatWindow``; whether it was. Keeps ``unsure`` current.
    private func judgedAsRepeat(_ result: RecognitionResult, of utterance: Endpointer.Utterance) -> (RecognitionResult, Bool) {
        let before = unsure
        unsure = nil
        let lenient = result.judged(at: configuration.windowThreshold)
        guard configuration.repeatWindow > 0, result.rejected, !lenient.rejected, let match = setup.parser.parse(result.text).first else {
            return (result, false)
        }
        if let before, before.match == match, utterance.speechStart - before.speechEnd <= configuration.repeatWindow {
            return (lenient, true)
        }
        unsure = (match, utterance.speechEnd)
        return (result, false)
    }

    /// The intent of an always-on result worth asking back about: unsure, and at least
    /// ``Configuration/askBackThreshold`` (``Configuration/askBackInNoiseThreshold`` heard twice in noise).
    private func askable(_ result: RecognitionResult) -> IntentMatch? {
        let floor = result.inNoisePoint == nil ? configuration.askBackThreshold : configuration.askBackInNoiseThreshold
        guard result.rejected, result.confidence >= floor, !result.judged(at: configuration.windowThreshold).rejected
        else { return nil }
        return setup.parser.parse(result.text).first
    }

    /// Asks whether an unsure always-on command was meant ("Did you say …?") and acts on it when
    /// the answer is yes. An answer that is no yes or no is heard as a command of its own, the
    /// asked one still unsure: saying it again is its repeat (``Configuration/repeatWindow``).
    private func askBack(about result: RecognitionResult, _ match: IntentMatch, utterance: Endpointer.Utterance) async throws {
        await say("Did you say \(result.text)?", app: nil)
        let grammar = DialogGrammar.grammar(for: .yesOrNo, catalog: catalog, vocabulary: [:], hasPronunciation: { _ in true })
        let previous = recognizer.activeGrammar
        let heard: Heard
        do {
            defer { try? recognizer.activateGrammar(named: previous) }
            try recognizer.loadGrammar(grammar, activate: true)
            heard = try nextUtterance(.confirmation, timeout: configuration.answerTimeout)
        }
        guard case .utterance(let answered, let answer?, let ended) = heard else {
            send(.askedBack(time: endpointer.position, text: result.text, answer: "none"))
            unsure = nil
            return
        }
        let reply = answer.rejected ? nil : YesOrNo(answer: answer.text)
        send(.askedBack(time: answered.speechEnd, text: result.text, answer: reply.map { "\($0)" } ?? "other"))
        switch reply {
        case .yes?:
            unsure = nil
            await act(on: result.judged(at: configuration.windowThreshold), utterance: utterance, ended: ended)
        case .no?, .cancelled?:
            unsure = nil
        case nil:
            if unsure?.match == match { unsure = (match, answered.speechStart) }
            let decoded = try hear(answered)
            let heardAsCommand = decoded.result.judged(at: configuration.alwaysOnThreshold)
            let (command, repeated) = judgedAsRepeat(heardAsCommand, of: answered)
            sendFinal(command, of: answered, denoised: decoded.denoised, repeated: repeated, ended: ended)
            await act(on: command, utterance: answered, ended: ended)
        }
    }

    /// An utterance as the whole decode hears it, and whether the noise suppressor took part
    /// (`nil`: suppression is off): as captured, or, when the mode says so for its SNR, twice, as
    /// captured and as the suppressor left it (``HeedCore/SpeechRecognizer/recognize(_:suppressed:)``).
    /// The suppressor is the one that has followed the stream, not one started on the utterance.
    private func hear(_ utterance: Endpointer.Utterance) throws -> (result: RecognitionResult, denoised: Bool?) {
        guard let suppressed else { return (try recognizer.recognize(utterance.audio), nil) }
        let heard = try configuration.denoise.hear(utterance.audio, with: recognizer) { Self.suppressed(utterance, by: suppressed) }
        return (heard.result, heard.denoised)
    }

    /// An utterance as the wake phrase is spotted in it: through the noise suppressor when the
    /// mode says so for its SNR, and whether it was (`nil`: suppression is off).
    private func decodable(_ utterance: Endpointer.Utterance) -> (audio: AudioBuffer, denoised: Bool?) {
        guard let suppressed else { return (utterance.audio, nil) }
        return configuration.denoise.process(utterance.audio) { Self.suppressed(utterance, by: suppressed) }
    }

    /// What the suppressor that follows the stream made of an utterance's samples.
    private static func suppressed(_ utterance: Endpointer.Utterance, by stream: SuppressedStream) -> AudioBuffer {
        let start = Int((utterance.start * Double(Endpointer.sampleRate)).rounded())
        return AudioBuffer(samples: stream.denoised(utterance.samples, from: start), sampleRate: Endpointer.sampleRate)
    }

    /// The next chunk of audio; empty at the end. Every chunk goes to the endpointer too.
    private func readChunk() throws(AudioError) -> [Int16] {
        let chunk = try source.read(maximumFrames: 1024)
        suppressed?.process(chunk)
        return chunk
    }

    /// Reads audio, keeping the noise floor current, until push-to-talk is pressed.
    private func waitForPress() throws -> Bool {
        while !stopRequested && !signals.hasRequests {
            let pressed = signals.presses.load(ordering: .relaxed)
            if pressed > presses {
                presses = pressed
                endpointer.reset()
                send(.activated(time: endpointer.position))
                return true
            }
            let chunk = try readChunk()
            if chunk.isEmpty {
                streamEnded = true
                return false
            }
            _ = endpointer.process(chunk)
            if let maximum = configuration.maximumSeconds, endpointer.position >= maximum {
                streamEnded = true
                return false
            }
        }
        return false
    }

    /// Loads the wake phrase's grammars (``WakePhraseSpotter``) next to the command grammar.
    private func loadWakeGrammar(_ phrase: String, commands grammar: Grammar) throws {
        try WakePhraseSpotter(phrase: phrase).load(into: recognizer, commands: grammar)
    }

    /// Waits for the wake phrase; then the rest of that utterance, or the next one within the
    /// command window, is the command.
    private func wakeThenCommand() async throws {
        guard case .wakePhrase(let phrase, let threshold) = configuration.activation,
            case .utterance(let utterance, _, let ended) = try nextUtterance(.wake, timeout: nil)
        else { return }
        let spotter = WakePhraseSpotter(phrase: phrase, threshold: threshold)
        // Spotted in what the whole decode of a command would hear: through the noise suppressor
        // when the mode says so.
        let heard = decodable(utterance)
        let spotting = try spotter.spot(heard.audio, with: recognizer, thenActivate: commandGrammar)
        let spotted = spotting.spotted
        let words = spotter.words
        guard spotting.woke, let phraseEnd = spotting.phraseEnd else {
            send(.ignored(time: utterance.speechEnd, reason: "no wake phrase", text: spotted.text, confidence: spotting.confidence))
            return
        }
        send(.wake(time: utterance.start + phraseEnd, phrase: phrase, confidence: spotting.confidence, denoised: heard.denoised))
        if spotted.words.count > words.count {
            // A command in the same breath: recognized on its own, from the end of the phrase.
            let commandStart = min(utterance.samples.count, Int(phraseEnd * Double(Endpointer.sampleRate)))
            let decoded = try hear(utterance.from(sample: commandStart))
            let result = decoded.result.judged(at: configuration.windowThreshold)
            sendFinal(result, of: utterance, denoised: decoded.denoised, ended: ended)
            await act(on: result, utterance: utterance, ended: ended)
            return
        }
        if case .utterance(let command, let result?, let commandEnded) = try nextUtterance(.command, timeout: configuration.commandWindow) {
            await act(on: result, utterance: command, ended: commandEnded)
        }
    }

    // MARK: Requests

    /// Carries out what others asked of the loop, in order.
    private func takeRequests() async throws {
        while let request = signals.requests.withLock({ requests -> Request? in
            guard requests?.isEmpty == false else { return nil }
            return requests?.removeFirst()
        }) {
            switch request {
            case .question(let question, let reply):
                reply(YesOrNo.decision(await answer(question, expecting: .yesOrNo, app: nil)))
            case .lend(let loan):
                try lendMicrophone(to: loan)
            }
        }
    }

    /// Hands what the microphone captures to `loan` until it is given back.
    private func lendMicrophone(to loan: MicrophoneLoan) throws {
        send(.microphoneLent(time: endpointer.position, to: loan.borrower))
        recognizer.stopLiveDecoding()
        defer {
            loan.end()
            // What the borrower heard is not the listener's: the next utterance starts afresh.
            endpointer.reset()
            send(.microphoneBack(time: endpointer.position))
        }
        while !stopRequested && !loan.isReturned {
            if let maximum = configuration.maximumSeconds, endpointer.position >= maximum {
                streamEnded = true
                return
            }
            let chunk: [Int16]
            do {
                chunk = try readChunk()
            } catch {
                loan.end(error)
                throw error
            }
            if chunk.isEmpty {
                streamEnded = true
                return
            }
            loan.deliver(chunk)
            // The clock goes on, and the noise floor stays current.
            _ = endpointer.process(chunk)
        }
    }

    // MARK: Commands

    /// Parses an accepted result and carries the intent through its conversation.
    private func act(on result: RecognitionResult, utterance: Endpointer.Utterance, ended: ContinuousClock.Instant) async {
        guard !result.rejected, !result.text.isEmpty else { return }
        guard let match = setup.parser.parse(result.text).first else {
            send(.ignored(time: utterance.speechEnd, reason: "no intent matches \"\(result.text)\""))
            return
        }
        // Kept once the command is carried out, so that writing it never delays the handle.
        defer { keep(result, utterance: utterance) }
        guard let dispatcher else {
            send(.intent(time: utterance.speechEnd, match))
            return
        }
        let emit = self.emit
        _ = await dispatcher.dispatch(match, vocabulary: setup.vocabulary, user: VoiceUser(listener: self)) { event in
            emit(.conversation(event))
            if case .handle(let step) = event {
                // The handle request went out `step.milliseconds` before its reply arrived.
                let sent = ContinuousClock.now - .microseconds(Int(step.milliseconds * 1000))
                emit(.listener(.latency(milliseconds: ["endOfSpeechToHandleSent": (sent - ended).milliseconds])))
            }
        }
    }

    /// Keeps an acted-on command with the words heard, when `--keep-heard` asked for it.
    private func keep(_ result: RecognitionResult, utterance: Endpointer.Utterance) {
        guard let kept = configuration.keptCommands else { return }
        do {
            try kept.keep(utterance.audio, words: result.text.split(separator: " ").map(String.init))
        } catch {
            logger.warning("cannot keep the command heard: \(error)")
        }
    }

    // MARK: Dialog turns

    /// Asks a question by voice: says it, then recognizes the answer with that turn's grammar.
    func answer(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String? {
        await say(question, app: app)
        // Options with a word the recognizer cannot say are left to their position
        // ("the second one"); the dictionary is read once for all of them.
        var unsayable: Set<String> = []
        if case .choice(let options) = expecting {
            let words = options.flatMap(TextNormalizer.words)
            unsayable = Set((try? recognizer.wordsWithoutPronunciation(words)) ?? words)
        }
        let grammar = DialogGrammar.grammar(
            for: expecting, catalog: catalog, vocabulary: setup.vocabulary.terms, openSlots: setup.grammar.openSlots,
            hasPronunciation: { !unsayable.contains($0) })
        // A question asked while this one waits (speech permission) switches grammars too:
        // the one in use before comes back at the end, this turn's before each listening.
        let previous = recognizer.activeGrammar
        do {
            try recognizer.loadGrammar(grammar)
        } catch {
            logger.warning("cannot listen for the answer: \(error)")
            return nil
        }
        defer { try? recognizer.activateGrammar(named: previous) }
        for attempt in 0..<2 {
            if attempt > 0 { await say("Sorry, I didn't catch that. \(question)", app: app) }
            do {
                try recognizer.activateGrammar(named: grammar.name)
            } catch {
                return nil
            }
            let heard: Heard
            do {
                heard = try nextUtterance(.answer, timeout: configuration.answerTimeout)
            } catch {
                logger.warning("listening for the answer failed: \(error)")
                return nil
            }
            switch heard {
            case .utterance(_, let result?, _) where !result.rejected && !result.text.isEmpty:
                return result.text
            case .utterance:
                continue
            case .timedOut, .over:
                return nil
            }
        }
        return nil
    }

    /// Shows a text and speaks it when the spoken-response service is on and the app may speak.
    ///
    /// Heed's own questions (`app` nil) need only the service. An app whose speech permission
    /// is undetermined is asked once, by voice. While Heed speaks, the microphone is not
    /// listened to: what it captured meanwhile is dropped.
    func say(_ text: String, app: PluginManifest?) async {
        let time = endpointer.position
        let status = await spokenResponseStatus(for: app)
        let mode = app?.spokenResponseMode ?? .spokenAudio
        var event = ListenerEvent.Speech(text: text, status: status.rawValue, mode: mode.rawValue, spoken: false)
        guard status == .granted, mode == .spokenAudio, let speaker else {
            send(.speech(time: time, event))
            return
        }
        do {
            let speech = try synthesizer.synthesize(text)
            try speaker.play(speech.samples, sampleRate: speech.sampleRate)
            let seconds = speech.duration
            try source.discard(seconds: seconds)
            recognizer.stopLiveDecoding()
            endpointer.reset()
            event.spoken = true
            event.milliseconds = ["speech": seconds * 1000]
        } catch {
            event.reason = "\(error)"
        }
        send(.speech(time: time, event))
    }

    private func spokenResponseStatus(for app: PluginManifest?) async -> SpokenResponseStatus {
        guard configuration.spokenResponses else { return .serviceDisabled }
        guard let app else { return .granted }
        guard let authorization else { return .undetermined }
        do {
            guard app.spokenResponseMode == .spokenAudio else {
                // An app that prefers not to speak is never asked about it.
                return try authorization.spokenResponseStatus(of: AuthorizationStore.authorizationAppID(for: app), serviceEnabled: true)
            }
            return try await authorization.requestSpeechPermission(for: app, serviceEnabled: true) { prompt in
                let answer = await self.answer(prompt.question, expecting: .yesOrNo, app: nil)
                return YesOrNo.decision(answer)
            }
        } catch {
            logger.info("speech permission for \(app.appID): \(error)")
            return .undetermined
        }
    }

    // MARK: Vocabulary and context

    /// Rebuilds the command grammar when the registered vocabulary changed on disk (a `vocabulary`
    /// event) or what is going on changed which contextual intents are active (a `context` event,
    /// its `text` the active contextual intents).
    ///
    /// The vocabulary and the grammar are read and built on a thread of their own (``GrammarBuild``)
    /// while the loop goes on listening with the old grammar; a later call loads the new one into
    /// the recognizer, between utterances. A source that is not paced (a file read as fast as
    /// possible) waits for the build instead, so that what it holds is heard as it would be live.
    ///
    /// The event's `milliseconds` time each stage: reading the store (`store`), the word
    /// automaton and the parser (`automaton`), the wake grammar, loading the grammar into the
    /// recognizer (`recognizer`), all of it (`rebuild`), and how much audio the loop heard
    /// meanwhile (`listened`, milliseconds of audio).
    private func refreshGrammar() {
        if let build {
            guard let outcome = build.outcome else { return }
            self.build = nil
            apply(outcome, of: build)
            return
        }
        let vocabularyChanged = vocabularyStore.map { $0.changeStamp() != vocabularyStamp } ?? false
        let newContext = signals.context.withLock { $0 } ?? context
        guard vocabularyChanged || newContext != context else { return }
        let store = vocabularyChanged ? vocabularyStore : nil
        let build = GrammarBuild(context: newContext, vocabularyChanged: vocabularyChanged, time: endpointer.position, stamp: store?.changeStamp())
        let current = setup
        let contextCatalog = newContext == context ? setup.catalog : catalog.inContext(newContext)
        let dictionaryPath = recognizer.dictionaryPath
        Thread.detachNewThread {
            var times = StageTimes()
            build.finish(
                Result {
                    let snapshot = try store?.snapshot() ?? current.vocabulary
                    times.lap("store")
                    let setup = try RecognitionSetup(catalog: contextCatalog, vocabulary: snapshot, dictionaryPath: dictionaryPath)
                    times.lap("automaton")
                    return GrammarBuild.Built(setup: setup, timings: times.milliseconds)
                })
        }
        self.build = build
        if !source.isPaced {
            build.wait()
            refreshGrammar()
        }
    }

    /// Loads a grammar built off the loop into the recognizer and reports it.
    private func apply(_ outcome: Result<GrammarBuild.Built, any Error>, of build: GrammarBuild) {
        var change = ListenerEvent.GrammarChange()
        var times = StageTimes()
        do {
            let built = try outcome.get()
            times.milliseconds = built.timings
            recognizer.addPronunciations(built.setup.vocabulary.additionalPronunciations)
            // The wake grammar first: should it fail, the command grammar is still the old one.
            if case .wakePhrase(let phrase, _) = configuration.activation {
                try loadWakeGrammar(phrase, commands: built.setup.grammar)
                times.lap("wakeGrammar")
            }
            try recognizer.loadGrammar(built.setup.grammar)
            times.lap("recognizer")
            setup = built.setup
            if build.vocabularyChanged {
                vocabularyStamp = built.setup.vocabulary.stamp
                change.text = "\(built.setup.vocabulary.terms.values.reduce(0) { $0 + $1.count }) terms"
                if build.context != context {
                    send(.context(time: build.time, ListenerEvent.GrammarChange(text: build.context.sorted().joined(separator: " "))))
                }
            } else {
                change.text = build.context.sorted().joined(separator: " ")
            }
        } catch {
            // A file that cannot be used is not read again until it changes.
            if let stamp = build.stamp { vocabularyStamp = stamp }
            change.reason = "the new grammar cannot be used; keeping the old one: \(error)"
        }
        context = build.context
        var timings = times.milliseconds
        timings["rebuild"] = timings.values.reduce(0, +)
        timings["listened"] = (endpointer.position - build.time) * 1000
        change.milliseconds = timings
        send(build.vocabularyChanged ? .vocabulary(time: build.time, change) : .context(time: build.time, change))
    }

    private func send(_ event: ListenerEvent) { emit(.listener(event)) }

    /// Reports a final result, with how long after the end of speech it was ready.
    /// - Parameter denoised: whether the decoded audio went through the noise suppressor (`nil`: suppression is off).
    private func sendFinal(
        _ result: RecognitionResult, of utterance: Endpointer.Utterance, denoised: Bool?, repeated: Bool = false, afterPause: Bool = false,
        ended: ContinuousClock.Instant
    ) {
        let final = ListenerEvent.FinalResult(
            text: result.text, confidence: result.confidence, rejected: result.rejected, alternatives: result.alternatives.map(\.text),
            milliseconds: ["decode": result.decodeSeconds * 1000, "afterEndOfSpeech": (ContinuousClock.now - ended).milliseconds],
            snrDecibels: SignalToNoise.estimate(utterance.samples, sampleRate: Endpointer.sampleRate).map { ($0 * 10).rounded() / 10 },
            denoised: denoised, repeated: repeated ? true : nil, afterPause: afterPause ? true : nil)
        send(.final(time: utterance.speechEnd, final))
    }
}

/// The user of a conversation heard through the microphone and answered through the speaker.
public struct VoiceUser: ConversationUser {
    let listener: Listener

    /// The user of `listener`'s microphone and speaker.
    public init(listener: Listener) { self.listener = listener }

    public func ask(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String? {
        await listener.answer(question, expecting: expecting, app: app)
    }

    public func tell(_ text: String, app: PluginManifest?) async {
        await listener.say(text, app: app)
    }
}
