import Foundation
import HeedAudio
import HeedCore
import HeedIntents
@testable import HeedRuntime
@testable import HeedSpeech
import Logging
import HeedTesting
import Testing

/// The loop of phones beside the intents' sentences that takes other talk.
@Suite("Other-speech loop")
struct OtherSpeechLoopTests {
    @Test func theLoopIsOneFinalStateEnteredFromTheStart() {
        let graph = WordGraph(phrases: [["pause"], ["pause", "it"]])
        let loop = OtherSpeechLoop(phones: ["AH", "S"], entryProbability: 0.5, phoneProbability: 0.03)
        let extended = loop.beside(graph)
        let state = graph.stateCount
        #expect(extended.stateCount == graph.stateCount + 1)
        #expect(extended.finals == graph.finals.union([state]))
        #expect(Array(extended.arcs.prefix(graph.arcs.count)) == graph.arcs)
        let added = Array(extended.arcs.dropFirst(graph.arcs.count))
        #expect(Set(added.map(\.word)) == ["{heed_other_speech}ah", "{heed_other_speech}s"])
        #expect(added.filter { $0.from == graph.start }.allSatisfy { $0.to == state })
        #expect(added.filter { $0.from != graph.start }.allSatisfy { $0.from == state && $0.to == state })
        #expect(added.count == 4)
        // Entering costs the entry probability, each further phone its own; sentences are untouched.
        #expect(added.map { loop.probability(of: $0, start: graph.start) }.sorted { ($0 ?? 0) < ($1 ?? 0) } == [0.03, 0.03, 0.5, 0.5])
        #expect(graph.arcs.allSatisfy { loop.probability(of: $0, start: graph.start) == nil })
        #expect(OtherSpeechLoop.isWord("{heed_other_speech}ah"))
        #expect(!OtherSpeechLoop.isWord("{playlistTitle}ah") && !OtherSpeechLoop.isWord("pause"))
    }

    @Test func theWakeGrammarKeepsItsCommandsLoop() throws {
        var commands = Grammar(name: "intents", wordGraph: WordGraph(phrases: [["pause"]]))
        for hears in [true, false] {
            commands.hearsOtherSpeech = hears
            let recognizer = ScriptedRecognizer(grammar: commands, script: [:])
            try WakePhraseSpotter(phrase: "hey heed").load(into: recognizer, commands: commands)
            #expect(recognizer.grammar(named: WakePhraseSpotter.wakeGrammar)?.hearsOtherSpeech == hears)
            #expect(recognizer.grammar(named: WakePhraseSpotter.phraseGrammar)?.hearsOtherSpeech == false)
        }
    }

    /// Real clips of other speech that the shipped intents heard as commands at the lenient point
    /// (0.2) before the loop, measured with `scripts/rejection-eval.py` (docs/MEASUREMENTS.md,
    /// "A loop for other speech"): Speech Commands "on" heard as "pause" (0.66) and "down" as "keep
    /// going" (0.58), an FSDD "five" heard as "pause it" (0.82).
    private static let otherSpeech = [
        "speech_commands_v001_sample/wav/on/439c84f4_nohash_1.wav",
        "speech_commands_v001_sample/wav/down/439c84f4_nohash_1.wav",
        "fsdd_digits/wav/jackson/5_jackson_0.wav",
    ]

    private static func intentsRecognizer(loop: OtherSpeechLoop?) throws -> PocketSphinxRecognizer {
        try Fixtures.shippedIntentsRecognizer { configuration in
            configuration.rejectionThreshold = ConfidenceModel.features.lenientPoint
            configuration.otherSpeechLoop = loop
        }
    }

    @Test(.enabled(if: Fixtures.corpora != nil && Fixtures.hasPocketSphinx, "needs the shared corpora (HEED_CORPORA or ../shared/corpora) and pocketsphinx-en-us"))
    func shortWordsHeardAsCommandsGoToTheLoop() throws {
        let corpora = Fixtures.corpora ?? ""
        let withLoop = try Self.intentsRecognizer(loop: .standard)
        let without = try Self.intentsRecognizer(loop: nil)
        var heardWithout = 0
        for clip in Self.otherSpeech {
            let audio = try AudioFile.read(corpora + "/" + clip)
            let result = try withLoop.recognize(audio)
            #expect(result.text.isEmpty && result.rejected && result.confidence == 0, "\(clip): heard \(result.text)")
            if !(try without.recognize(audio)).rejected { heardWithout += 1 }
        }
        // Without the loop the same clips are commands (all three measured).
        #expect(heardWithout >= 2)
        // The bundled commands still come through the grammar.
        for (file, text) in [("pause.wav", "pause"), ("set_a_timer_for_5_minutes.wav", "set a timer for five minutes")] {
            let result = try withLoop.recognize(try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/" + file).path))
            #expect(result.text.hasPrefix(text) && !result.rejected, "\(file): heard \(result.text) (\(result.confidence))")
        }
    }

    @Test(.enabled(if: Fixtures.corpora != nil && Fixtures.hasPocketSphinx, "needs the shared corpora (HEED_CORPORA or ../shared/corpora) and pocketsphinx-en-us"))
    func theCommandLineCanTurnTheLoopOff() throws {
        let clip = (Fixtures.corpora ?? "") + "/" + Self.otherSpeech[2]
        let intents = Fixtures.packageRoot.appendingPathComponent("intents").path
        func heard(_ options: [String]) throws -> String {
            let run = try Fixtures.run(Fixtures.heedBinary, ["recognize", "--intents", intents, "--json"] + options + [clip])
            let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            return report?["text"] as? String ?? "(no report: \(run.error))"
        }
        #expect(try heard([]) == "")
        #expect(try heard(["--no-other-speech-loop"]) == "pause it")
    }
}
