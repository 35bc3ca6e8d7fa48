import HeedCore
import HeedIntents
import HeedRuntime
import HeedState
import HeedTesting
import Logging
import Synchronization
import Testing

/// The listener's loop above recognition, with a scripted recognizer: which threshold judges an
/// utterance, what a press opens, what is decoded at all. No PocketSphinx, no espeak-ng; the
/// same loop on the real engines is in ListenerTests and, through ALSA, ListenCommandTests.
@Suite struct ListenerLogicTests {
    typealias Line = ScriptedRecognizer.Line

    static func listener(
        _ samples: [Int16], script: [Line], activation: Listener.Activation = .always, log: ListenerLog,
        recognizerLog: ScriptedRecognizer.Log = .init(), actions: [(offset: Int, action: @Sendable () -> Void)] = [],
        speaker: RecordingSpeaker? = nil, synthesizer: ScriptedSynthesizer = .init(), spokenResponses: Bool = false
    ) throws -> Listener {
        let catalog = try Speech.catalog()
        let setup = RecognitionSetup(unchecked: catalog.inContext([]))
        let recognizer = ScriptedRecognizer(grammar: setup.grammar, script: [ScriptedRecognizer.anyGrammar: script], log: recognizerLog)
        var configuration = Listener.Configuration()
        configuration.activation = activation
        configuration.spokenResponses = spokenResponses
        return Listener(
            source: SamplesSource(samples, actions: actions), recognizer: recognizer, synthesizer: synthesizer, speaker: speaker, catalog: catalog,
            setup: setup, vocabularyStore: nil, dispatcher: nil, authorization: nil, configuration: configuration,
            logger: Logger(label: "test"), emit: { log.append($0) })
    }

    @Test func alwaysOnJudgesEveryUtteranceAtTheOperatingPoint() async throws {
        let log = ListenerLog()
        let recognizerLog = ScriptedRecognizer.Log()
        let audio = TestAudio.utterance(seed: 1) + TestAudio.utterance(seed: 2)
        let listener = try Self.listener(
            audio, script: [Line("set a timer for ten minutes", confidence: 0.95), Line("pause", confidence: 0.5)], log: log,
            recognizerLog: recognizerLog)
        try await listener.run()
        let finals = log.listenerEvents.filter { $0.event == "final" }
        try #require(finals.count == 2)
        #expect(finals[0].text == "set a timer for ten minutes")
        #expect(finals[0].rejected == false)
        // 0.5 is below the hands-free operating point (0.87): heard, and not acted on.
        #expect(finals[1].text == "pause")
        #expect(finals[1].rejected == true)
        let intents = log.listenerEvents.compactMap(\.intent)
        #expect(intents.map(\.intent) == ["setTimer"])
        #expect(intents.first?.parameters["duration"] == .duration(seconds: 600))
        // Each utterance was decoded live (partials) and recognized whole with the command grammar.
        #expect(recognizerLog.all.filter { $0 == "live intents" }.count >= 2)
        #expect(recognizerLog.all.contains("recognize intents"))
        #expect(log.listenerEvents.contains { $0.event == "partial" && $0.text == "set" })
    }

    @Test func aPressOpensAWindowJudgedAtTheLenientPoint() async throws {
        let log = ListenerLog()
        let box = Mutex<Listener?>(nil)
        let rate = AudioBuffer.recognitionSampleRate
        // An utterance before any press is not decoded; after the press at 3.5 s, the same
        // confidence that always-on listening rejects is a command.
        let audio = TestAudio.utterance(seed: 1) + TestAudio.roomNoise(seconds: 0.5) + TestAudio.utterance(seed: 2)
        let listener = try Self.listener(
            audio, script: [Line("pause", confidence: 0.5)], activation: .pushToTalk, log: log,
            actions: [(rate * 7 / 2, { box.withLock { $0?.pushToTalk() } })])
        box.withLock { $0 = listener }
        try await listener.run()
        let events = log.listenerEvents
        let activated = try #require(events.firstIndex { $0.event == "activated" })
        #expect(!events[..<activated].contains { $0.event == "final" || $0.event == "speechStarted" })
        let final = try #require(events.first { $0.event == "final" })
        #expect(final.text == "pause")
        #expect(final.rejected == false)
        #expect(events.contains { $0.intent != nil })
    }

    @Test func nothingHeardIsNotACommand() async throws {
        let log = ListenerLog()
        let listener = try Self.listener(TestAudio.utterance(), script: [], log: log)
        try await listener.run()
        let final = try #require(log.listenerEvents.first { $0.event == "final" })
        #expect(final.text == "")
        #expect(final.rejected == true)
        #expect(!log.listenerEvents.contains { $0.intent != nil })
    }

    @Test func aResponseIsSpokenWhenTheServiceIsOnAndOnlyShownWhenItIsOff() async throws {
        for on in [true, false] {
            let log = ListenerLog()
            let synthesizer = ScriptedSynthesizer(secondsPerWord: 0.25)
            let speaker = RecordingSpeaker()
            let listener = try Self.listener(
                TestAudio.roomNoise(seconds: 3), script: [], log: log, speaker: speaker, synthesizer: synthesizer, spokenResponses: on)
            await VoiceUser(listener: listener).tell("Timer set for ten minutes.", app: nil)
            guard case .speech(_, let speech)? = log.listenerEvents.last else {
                Issue.record("no speech event: \(log.listenerEvents.map(\.name))")
                continue
            }
            #expect(speech.text == "Timer set for ten minutes.")
            #expect(speech.spoken == on)
            #expect(speech.status == (on ? "granted" : "serviceDisabled"))
            #expect(synthesizer.spoken == (on ? ["Timer set for ten minutes."] : []))
            // Five words of a quarter second each, played once, and as long as the event says.
            #expect(speaker.recordings.map(\.duration) == (on ? [1.25] : []))
            #expect(speech.milliseconds?["speech"] == (on ? 1250 : nil))
        }
    }
}
