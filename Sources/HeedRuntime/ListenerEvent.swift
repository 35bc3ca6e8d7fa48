public import HeedIntents

/// One thing the listener noticed or did, as `heed listen --json` prints it (one object a line,
/// its kind in `event`, `time` the seconds of audio since listening started).
public enum ListenerEvent: Sendable, Encodable {
    /// Listening started (`time` 0): `mode` the activation, `text` the audio source.
    case listening(mode: String, source: String)
    case speechStarted(time: Double)
    /// What the live search has heard so far (`isFinal` false).
    case partial(time: Double, text: String)
    /// The endpointer ended an utterance: `mode` how (``HeedAudio/Endpointer/Utterance/Ending``).
    case speechEnded(time: Double, ending: String)
    /// The utterance's result (`isFinal` true).
    case final(time: Double, FinalResult)
    /// An utterance that is not acted on, and why (with what was heard, when it was heard).
    case ignored(time: Double, reason: String, text: String? = nil, confidence: Double? = nil)
    /// The wake phrase was heard, and how surely; `denoised` as for ``FinalResult/denoised``: whether
    /// the utterance it was spotted in went through the noise suppressor (`nil`: suppression is off).
    case wake(time: Double, phrase: String, confidence: Double, denoised: Bool? = nil)
    /// Push-to-talk was pressed.
    case activated(time: Double)
    /// The intent parsed (`--dry-run`: nothing is dispatched).
    case intent(time: Double, IntentMatch)
    /// `endOfSpeechToHandleSent`: from the end of speech to the plugin's handle request.
    case latency(milliseconds: [String: Double])
    /// A text shown and, when it may be, spoken.
    case speech(time: Double, Speech)
    /// The registered vocabulary changed and the grammar was rebuilt (`text`: how many terms).
    case vocabulary(time: Double, GrammarChange)
    /// What is going on changed which contextual intents are in the grammar (`text` lists them).
    case context(time: Double, GrammarChange)
    /// An unsure always-on command (`text`) was asked back ("Did you say …?"), and how it was
    /// answered: `yes` (it is acted on), `no`, `cancelled`, `none` (no answer in time) or `other`
    /// (not a yes or no: heard as a command of its own).
    case askedBack(time: Double, text: String, answer: String)
    /// The microphone is lent to a hand-off of `heed serve` (`text`: the client's app id):
    /// nothing is heard as a command until it comes back.
    case microphoneLent(time: Double, to: String)
    /// The hand-off gave the microphone back; listening goes on.
    case microphoneBack(time: Double)
    case stopped(time: Double)

    /// A final result.
    public struct FinalResult: Sendable {
        public var text: String
        public var confidence: Double
        public var rejected: Bool
        /// Other sentences of the grammar the recognizer found likely, best first.
        public var alternatives: [String]
        /// `decode` (CPU) and `afterEndOfSpeech` (from the moment the endpointer declared the
        /// end, after the silence window, to this result).
        public var milliseconds: [String: Double]
        /// The utterance's estimated signal-to-noise ratio in dB (``HeedAudio/SignalToNoise``),
        /// when it is long enough to tell.
        public var snrDecibels: Double?
        /// Whether the utterance went through the noise suppressor before its decode (always with
        /// `--denoise on`; with `auto` when its SNR is below ``HeedAudio/DenoiseMode/autoBelowDecibels``);
        /// `nil` when suppression is off.
        public var denoised: Bool?
        /// `true` when the result was accepted because it repeats the utterance before it: the
        /// same intent with the same values, unsure both times (``Listener/Configuration/repeatWindow``).
        public var repeated: Bool?
        /// `true` when the utterance ran on through a pause the listener waited out
        /// (``Listener/Configuration/unfinishedEndSilence``), the whole was no command, and the
        /// words after the pause were one: this result is theirs alone.
        public var afterPause: Bool?

        public init(
            text: String, confidence: Double, rejected: Bool, alternatives: [String], milliseconds: [String: Double], snrDecibels: Double?,
            denoised: Bool? = nil, repeated: Bool? = nil, afterPause: Bool? = nil
        ) {
            self.text = text
            self.confidence = confidence
            self.rejected = rejected
            self.alternatives = alternatives
            self.milliseconds = milliseconds
            self.snrDecibels = snrDecibels
            self.denoised = denoised
            self.repeated = repeated
            self.afterPause = afterPause
        }
    }

    /// A text for the user: whether it was spoken aloud, the spoken-response `status` and the
    /// app's preferred `mode` (`spokenAudio`, `none`) that decided it; `reason` when speaking
    /// failed; `milliseconds.speech` the length of what was said.
    public struct Speech: Sendable {
        public var text: String
        public var status: String
        public var mode: String
        public var spoken: Bool
        public var reason: String?
        public var milliseconds: [String: Double]?

        public init(text: String, status: String, mode: String, spoken: Bool, reason: String? = nil, milliseconds: [String: Double]? = nil) {
            self.text = text
            self.status = status
            self.mode = mode
            self.spoken = spoken
            self.reason = reason
            self.milliseconds = milliseconds
        }
    }

    /// A grammar rebuilt while listening: `text` what changed, or `reason` why the new grammar
    /// cannot be used; `milliseconds` each stage (`store`, `automaton` with the parser,
    /// `wakeGrammar`, `recognizer`, `rebuild`).
    public struct GrammarChange: Sendable {
        public var text: String?
        public var reason: String?
        public var milliseconds: [String: Double]?

        public init(text: String? = nil, reason: String? = nil, milliseconds: [String: Double]? = nil) {
            self.text = text
            self.reason = reason
            self.milliseconds = milliseconds
        }
    }

    /// The kind, as the JSON's `event`.
    public var name: String {
        switch self {
        case .listening: "listening"
        case .speechStarted: "speechStarted"
        case .partial: "partial"
        case .speechEnded: "speechEnded"
        case .final: "final"
        case .ignored: "ignored"
        case .wake: "wake"
        case .activated: "activated"
        case .intent: "intent"
        case .latency: "latency"
        case .speech: "speech"
        case .vocabulary: "vocabulary"
        case .context: "context"
        case .askedBack: "askedBack"
        case .microphoneLent: "microphoneLent"
        case .microphoneBack: "microphoneBack"
        case .stopped: "stopped"
        }
    }

    /// Seconds of audio since listening started; `nil` for `latency`.
    public var time: Double? {
        switch self {
        case .listening: 0
        case .latency: nil
        case .speechStarted(let time), .partial(let time, _), .speechEnded(let time, _), .final(let time, _), .ignored(let time, _, _, _),
            .wake(let time, _, _, _), .activated(let time), .intent(let time, _), .speech(let time, _), .vocabulary(let time, _),
            .context(let time, _), .askedBack(let time, _, _), .microphoneLent(let time, _), .microphoneBack(let time), .stopped(let time):
            time
        }
    }

    private enum Key: String, CodingKey {
        case event, time, text, isFinal, confidence, rejected, alternatives, mode, reason, spoken, status, intent, milliseconds, snrDecibels
        case denoised, repeated, afterPause, answer
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: .event)
        try container.encodeIfPresent(time, forKey: .time)
        switch self {
        case .listening(let mode, let source):
            try container.encode(mode, forKey: .mode)
            try container.encode(source, forKey: .text)
        case .speechStarted, .activated, .microphoneBack, .stopped:
            break
        case .askedBack(_, let text, let answer):
            try container.encode(text, forKey: .text)
            try container.encode(answer, forKey: .answer)
        case .microphoneLent(_, let appID):
            try container.encode(appID, forKey: .text)
        case .partial(_, let text):
            try container.encode(text, forKey: .text)
            try container.encode(false, forKey: .isFinal)
        case .speechEnded(_, let ending):
            try container.encode(ending, forKey: .mode)
        case .final(_, let result):
            try container.encode(result.text, forKey: .text)
            try container.encode(true, forKey: .isFinal)
            try container.encode(result.confidence, forKey: .confidence)
            try container.encode(result.rejected, forKey: .rejected)
            try container.encode(result.alternatives, forKey: .alternatives)
            try container.encode(result.milliseconds, forKey: .milliseconds)
            try container.encodeIfPresent(result.snrDecibels, forKey: .snrDecibels)
            try container.encodeIfPresent(result.denoised, forKey: .denoised)
            try container.encodeIfPresent(result.repeated, forKey: .repeated)
            try container.encodeIfPresent(result.afterPause, forKey: .afterPause)
        case .ignored(_, let reason, let text, let confidence):
            try container.encode(reason, forKey: .reason)
            try container.encodeIfPresent(text, forKey: .text)
            try container.encodeIfPresent(confidence, forKey: .confidence)
        case .wake(_, let phrase, let confidence, let denoised):
            try container.encode(phrase, forKey: .text)
            try container.encode(confidence, forKey: .confidence)
            try container.encodeIfPresent(denoised, forKey: .denoised)
        case .intent(_, let match):
            try container.encode(match, forKey: .intent)
        case .latency(let milliseconds):
            try container.encode(milliseconds, forKey: .milliseconds)
        case .speech(_, let speech):
            try container.encode(speech.text, forKey: .text)
            try container.encode(speech.status, forKey: .status)
            try container.encode(speech.mode, forKey: .mode)
            try container.encode(speech.spoken, forKey: .spoken)
            try container.encodeIfPresent(speech.reason, forKey: .reason)
            try container.encodeIfPresent(speech.milliseconds, forKey: .milliseconds)
        case .vocabulary(_, let change), .context(_, let change):
            try container.encodeIfPresent(change.text, forKey: .text)
            try container.encodeIfPresent(change.reason, forKey: .reason)
            try container.encodeIfPresent(change.milliseconds, forKey: .milliseconds)
        }
    }
}
