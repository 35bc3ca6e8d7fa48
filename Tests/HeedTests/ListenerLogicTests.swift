import HeedAudio
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
        speaker: RecordingSpeaker? = nil, synthesizer: ScriptedSynthesizer = .init(), spokenResponses: Bool = false,
        repeatWindow: Double = Listener.Configuration().repeatWindow, unfinishedSeconds: Double = 0,
        answers: [Line] = [], askBackThreshold: Double = Listener.Configuration().askBackThreshold, inNoisePoint: Double? = nil
    ) throws -> Listener {
        let catalog = try Speech.catalog()
        let setup = RecognitionSetup(unchecked: catalog.inContext([]))
        let recognizer = ScriptedRecognizer(
            grammar: setup.grammar, script: [ScriptedRecognizer.anyGrammar: script, "answer:yesOrNo": answers], log: recognizerLog)
        recognizer.unfinishedSeconds = unfinishedSeconds
        var configuration = Listener.Configuration()
        // A point in noise: every utterance is suppressed, heard twice and held to it.
        if let inNoisePoint {
            recognizer.inNoisePoint = inNoisePoint
            configuration.denoise = .on
        }
        configuration.activation = activation
        configuration.spokenResponses = spokenResponses
        configuration.repeatWindow = repeatWindow
        configuration.askBackThreshold = askBackThreshold
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

    @Test func aPauseMidSentenceDoesNotEndTheCommand() async throws {
        // "set a timer for" … 1 s … "ten minutes": while the live words only begin a sentence (the
        // first 2 s of the utterance here) and what the pause's decode makes of them is not taken
        // (0.3), the pause is held open; the same audio whose words are whole at the pause is two
        // utterances, and so is one whose words so far make a command that is taken.
        let audio = TestAudio.utterance(after: 0, seed: 1) + TestAudio.roomNoise(seconds: 1) + TestAudio.utterance(before: 0, seed: 2)
        for (unfinished, atThePause, held) in [(2.0, 0.3, true), (0, 0.3, false), (2.0, 0.95, false)] {
            let log = ListenerLog()
            let listener = try Self.listener(
                audio, script: [Line("set a timer for pizza", confidence: atThePause), Line("set a timer for ten minutes", confidence: 0.95)],
                log: log, unfinishedSeconds: unfinished)
            try await listener.run()
            let finals = log.listenerEvents.filter { $0.event == "final" }
            #expect(finals.count == (held ? 1 : 2), "unfinished for \(unfinished) s, \(atThePause) at the pause")
            if held { #expect(finals.first?.text == "set a timer for ten minutes") }
        }
    }

    @Test func aCommandJustAfterSomeoneElsesTalkIsHeardOnItsOwn() async throws {
        // Talk that stops mid-sentence ("set a timer for pizza" at the pause, not taken) is held
        // open, the command 1 s later runs into it, and the whole is no command (0.1): the words
        // after the pause are decoded on their own and taken when they are a command. When they
        // are not, the whole is what is reported.
        let audio = TestAudio.utterance(after: 0, seed: 1) + TestAudio.roomNoise(seconds: 1) + TestAudio.utterance(before: 0, seed: 2)
        for (afterThePause, taken) in [(0.95, true), (0.3, false)] {
            let log = ListenerLog()
            let listener = try Self.listener(
                audio,
                script: [
                    Line("set a timer for pizza", confidence: 0.3), Line("set a timer for pizza set a timer", confidence: 0.1),
                    Line("set a timer for ten minutes", confidence: afterThePause),
                ],
                log: log, unfinishedSeconds: 2.0)
            try await listener.run()
            let finals = log.listenerEvents.filter { $0.event == "final" }
            #expect(finals.count == 1)
            #expect(finals.first?.text == (taken ? "set a timer for ten minutes" : "set a timer for pizza set a timer"))
            #expect(finals.first?.afterPause == (taken ? true : nil))
            #expect(finals.first?.rejected == !taken)
            #expect(log.listenerEvents.contains { $0.intent != nil } == taken)
        }
    }

    @Test func onlyOnePauseAnUtteranceIsHeld() async throws {
        // Unfinished words before each of two 1 s pauses, the decode at each not taken: the first
        // pause is waited out, the second ends the utterance, and what follows it is the next one.
        // (Held talk would otherwise run on from pause to pause.)
        let pause = TestAudio.roomNoise(seconds: 1)
        let audio = TestAudio.utterance(after: 0, seed: 1) + pause + TestAudio.utterance(before: 0, after: 0, seed: 2) + pause
            + TestAudio.utterance(before: 0, seed: 3)
        let log = ListenerLog()
        let listener = try Self.listener(
            audio, script: [Line("set a timer for pizza", confidence: 0.3), Line("set a timer for", confidence: 0.3)], log: log,
            unfinishedSeconds: 2.0)
        try await listener.run()
        let endings = log.listenerEvents.compactMap { event -> String? in
            if case .speechEnded(_, let ending) = event { ending } else { nil }
        }
        #expect(endings.count == 2, "\(endings)")
        #expect(endings.first == "complete")
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

    // MARK: Requests from the service (heed serve --listen)

    /// A loan of the microphone waits for silence, hands the borrower what is said, hears none
    /// of it, and ends when given back; the next utterance is the listener's again.
    @Test func aLentMicrophoneHandsOnWhatIsSaidAndComesBack() async throws {
        let log = ListenerLog()
        let rate = AudioBuffer.recognitionSampleRate
        let loan = MicrophoneLoan(device: "samples", borrower: "org.example.notes")
        let box = Mutex<Listener?>(nil)
        let received = Mutex<[Int16]>([])
        // The first utterance is 0.8–2.0 s; lent at 0.25 s, given back at 3 s.
        let audio = TestAudio.utterance(seed: 1) + TestAudio.utterance(seed: 2)
        let listener = try Self.listener(
            audio, script: [Line("pause", confidence: 0.95)], log: log,
            actions: [
                (rate / 4, { box.withLock { $0?.lend(loan) } }),
                (rate * 3, {
                    received.withLock { $0 = (try? loan.read(maximumFrames: .max)) ?? [] }
                    loan.giveBack()
                }),
            ])
        box.withLock { $0 = listener }
        try await listener.run()
        let events = log.listenerEvents
        let lent = try #require(events.firstIndex { $0.event == "microphoneLent" })
        let back = try #require(events.firstIndex { $0.event == "microphoneBack" })
        #expect(events[lent].text == "org.example.notes")
        #expect(lent < back)
        #expect(!events[lent...back].contains { $0.event == "speechStarted" })
        // The borrower got the first utterance, whole.
        #expect(received.withLock { $0.count } >= rate * 2)
        let finals = events.filter { $0.event == "final" }
        #expect(finals.map(\.text) == ["pause"])
        #expect(events.firstIndex { $0.event == "final" }.map { $0 > back } == true)
        // After the loop, a loan finds nobody to lend: it ends at once.
        let late = MicrophoneLoan(device: "samples", borrower: "org.example.late")
        listener.lend(late)
        #expect(throws: AudioError.self) { try late.read(maximumFrames: 10) }
    }

    /// A question from the service is asked between utterances and answered by voice with the
    /// yes-or-no grammar; one asked after the loop ends gets no answer.
    @Test func aQuestionFromTheServiceIsAnsweredByVoice() async throws {
        let log = ListenerLog()
        let recognizerLog = ScriptedRecognizer.Log()
        let rate = AudioBuffer.recognitionSampleRate
        let box = Mutex<Listener?>(nil)
        let answer = Mutex<Bool??>(nil)
        let listener = try Self.listener(
            TestAudio.roomNoise(seconds: 0.5) + TestAudio.utterance(seed: 1), script: [Line("yes", confidence: 0.9)], log: log,
            recognizerLog: recognizerLog,
            actions: [(rate / 4, { box.withLock { $0?.askYesOrNo("May Notes use speech recognition?") { heard in answer.withLock { $0 = heard } } } })])
        box.withLock { $0 = listener }
        try await listener.run()
        #expect(answer.withLock { $0 } == .some(true))
        #expect(log.listenerEvents.contains { $0.event == "speech" && $0.text == "May Notes use speech recognition?" })
        // The answer was heard with the turn's grammar, not the commands'.
        #expect(recognizerLog.all.contains { $0.hasPrefix("recognize") && !$0.hasSuffix("intents") })
        // No intent came of it.
        #expect(!log.listenerEvents.contains { $0.intent != nil })
        let late = Mutex<Bool??>(nil)
        listener.askYesOrNo("Again?") { heard in late.withLock { $0 = heard } }
        #expect(late.withLock { $0 } == .some(nil))
    }
}
