import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
import HeedSpeech
import Logging
import Synchronization
import Testing
import HeedTesting

/// Real PocketSphinx with the real en-us model on real recordings (Debian's pocketsphinx-testdata).
@Suite(
    "PocketSphinx recognizer (live)",
    .enabled(if: Fixtures.hasPocketSphinx, "needs Debian's pocketsphinx-en-us and pocketsphinx-testdata")
)
struct RecognizerTests {
    static let cards: [(file: String, text: String)] = [
        ("001", "ten of clubs"),
        ("002", "four queen of clubs"),
        ("003", "seven of clubs"),
        ("004", "five five"),
        ("005", "eight of spades four of clubs seven of hearts"),
    ]

    /// Seconds of audio given to the live pass at once, right after a whole-utterance decode (as
    /// the listener does when a pause did not end the utterance: it decoded it speculatively,
    /// and restarts the live pass over what it has), give what the same audio gives in 20 ms
    /// chunks. sphinxbase's live feature computation crashed on such a block (a long barista
    /// order in kitchen noise, heed listen, scripts/listen-noise.py).
    @Test func aLongBlockOfLiveAudioIsDecodedAsItsChunksAre() throws {
        let root = Fixtures.packageRoot
        let catalog = try IntentCatalog.load(
            intents: [root.appendingPathComponent("intents/examples/coffee.json")], grammars: [root.appendingPathComponent("grammars")])
        let grammar = try RecognitionSetup(catalog: catalog).grammar
        let librivox = Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-"
        let first = try AudioFile.read(librivox + "0870.wav")
        let samples = try ["0880", "0890", "0920"].flatMap { try AudioFile.read(librivox + $0 + ".wav").samples }
        #expect(samples.count > 16_000 * 12)
        var hypotheses: [String] = []
        for chunk in [samples.count, 320] {
            let recognizer = try PocketSphinxRecognizer(grammar: grammar, configuration: .default, logger: Logger(label: "test"))
            _ = try recognizer.recognize(first)
            try recognizer.startLiveDecoding()
            for start in stride(from: 0, to: samples.count, by: chunk) {
                try recognizer.decodeLive(Array(samples[start..<min(samples.count, start + chunk)]))
            }
            hypotheses.append(recognizer.liveHypothesis)
            recognizer.stopLiveDecoding()
        }
        #expect(!hypotheses[0].isEmpty)
        #expect(hypotheses[0] == hypotheses[1])
    }

    /// A fan switched on, then an order said over it (real speech, 12 dB): the live pass hears the
    /// fan alone as nothing but noise (pink noise is heard by the loop for other speech as one
    /// long "f", a hiss no phone of speech lasts so long) for as long as it has heard it, and the
    /// order as words. The listener ends an utterance of nothing but noise (docs/LISTEN.md).
    @Test(.enabled(if: Fixtures.corpora != nil, "needs the shared corpora (HEED_CORPORA or ../shared/corpora)"))
    func aFanIsNoiseToTheLivePassAndAnOrderOverItIsNot() throws {
        let catalog = try IntentCatalog.load(
            intents: [Fixtures.packageRoot.appendingPathComponent("intents/examples/coffee.json")],
            grammars: [Fixtures.packageRoot.appendingPathComponent("grammars")])
        let recognizer = try PocketSphinxRecognizer(
            grammar: try RecognitionSetup(catalog: catalog).grammar, configuration: .default, logger: Logger(label: "test"))
        let fan = NoiseMixer.pinkNoise(seconds: 30, seed: 11)
        let (_, order) = try ListenCommandTests.ordersInKitchenNoise(0..<1, snr: 12, lead: 2, after: 0, noise: fan)
        // As the listener starts an utterance: 0.3 s of the room before the fan (20 dB quieter).
        let stream = order.prefix(4_800).map { $0 / 10 } + order
        try recognizer.startLiveDecoding()
        var heard: [Double?] = []
        for start in stride(from: 0, to: stream.count, by: 320) {
            try recognizer.decodeLive(Array(stream[start..<min(stream.count, start + 320)]))
            heard.append(recognizer.liveQuietWithoutWords)
        }
        let words = recognizer.liveHypothesis
        recognizer.stopLiveDecoding()
        // In the first 2 s, before the order's first word, a second of nothing but noise.
        let fanAlone = heard.prefix(100).compactMap { $0 }.max() ?? 0
        #expect(fanAlone >= 1, "\(heard.prefix(100))")
        #expect(heard.last! == nil && !words.isEmpty, "\(words)")
    }

    /// A whole utterance is normalised by its own cepstral mean however the decoder was used before:
    /// after a live pass (running mean, as the listener's partial results and a hand-off's text are
    /// decoded) a recording gives what it gives to a fresh recognizer, to the last bit. sphinxbase
    /// switches a decoder to the running mean for good at its first live frame (`feat_cmn`).
    @Test func aWholeUtteranceIsNormalisedByItsOwnMeanAfterALivePass() throws {
        let grammar = Fixtures.testData + "/cards/cards.gram"
        let (fresh, used) = (try Fixtures.recognizer(grammar: grammar), try Fixtures.recognizer(grammar: grammar))
        let other = try AudioFile.read(Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-0880.wav")
        _ = try Fixtures.decodedLive(other, by: used)
        for card in Self.cards {
            let audio = try AudioFile.read(Fixtures.testData + "/cards/\(card.file).wav")
            let (first, after) = (try fresh.recognize(audio), try used.recognize(audio))
            #expect(first.text == after.text, "\(card.file)")
            #expect(first.confidenceFeatures == after.confidenceFeatures, "\(card.file)")
            #expect(first.confidence == after.confidence, "\(card.file)")
        }
        // And the running mean goes on from the live passes alone: the next live pass hears what it
        // would have heard had no whole utterance been decoded since the last one, even one whose
        // own mean is far from speech's (a loud hum).
        let hum = AudioBuffer(samples: (0..<16_000).map { Int16(12_000 * sin(Double($0) * 2 * .pi * 120 / 16_000)) })
        _ = try used.recognize(hum)
        let onlyLive = try Fixtures.recognizer(grammar: grammar)
        let card = try AudioFile.read(Fixtures.testData + "/cards/002.wav")
        var heard: [String] = []
        for recognizer in [used, onlyLive] {
            if recognizer === onlyLive { _ = try Fixtures.decodedLive(other, by: onlyLive) }
            try recognizer.startLiveDecoding()
            for start in stride(from: 0, to: card.samples.count, by: 320) {
                try recognizer.decodeLive(Array(card.samples[start..<min(card.samples.count, start + 320)]))
            }
            heard.append(recognizer.liveHypothesis)
            recognizer.stopLiveDecoding()
        }
        #expect(!heard[0].isEmpty && heard[0] == heard[1], "\(heard)")
    }

    @Test func recognizesAllFiveCardsRecordings() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.testData + "/cards/cards.gram")
        for card in Self.cards {
            let result = try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/\(card.file).wav"))
            #expect(result.text == card.text, "cards/\(card.file).wav")
            #expect(!result.rejected, "cards/\(card.file).wav")
        }
    }

    @Test func recognizesGoForwardFromRawAudio() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.testData + "/goforward.gram")
        let audio = try AudioFile.read(Fixtures.testData + "/goforward.raw", format: .raw(sampleRate: 16_000))
        let result = try recognizer.recognize(audio)
        #expect(result.text == "go forward ten meters")
        #expect(result.words.map(\.word) == ["go", "forward", "ten", "meters"])
        #expect(abs(result.durationSeconds - 2.786) < 0.01)
    }

    @Test func wordTimesAreOrderedAndInsideTheAudio() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.testData + "/cards/cards.gram")
        let result = try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/005.wav"))
        #expect(result.words.count == 9)
        for (word, next) in zip(result.words, result.words.dropFirst()) {
            #expect(word.start < word.end)
            #expect(word.end <= next.start)
        }
        #expect((result.words.last?.end ?? 0) <= result.durationSeconds)
        #expect(result.words.allSatisfy { (0...1).contains($0.confidence) })
    }

    @Test func alternativesAreDistinctSentencesOfTheGrammar() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.testData + "/cards/cards.gram")
        var sawAlternatives = false
        for card in Self.cards {
            let result = try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/\(card.file).wav"))
            let texts = result.alternatives.map(\.text)
            sawAlternatives = sawAlternatives || !texts.isEmpty
            #expect(Set(texts).count == texts.count)
            #expect(!texts.contains(result.text))
            #expect(texts.allSatisfy { recognizer.accepts($0) })
            #expect(result.alternatives.map(\.score) == result.alternatives.map(\.score).sorted(by: >))
        }
        #expect(sawAlternatives)
    }

    @Test func speechOutsideTheGrammarScoresLowAndIsRejected() throws {
        // Read sentences from a novel, decoded with the command grammar.
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("commands.gram"))
        let cards = try Fixtures.recognizer(grammar: Fixtures.testData + "/cards/cards.gram")
        let right = try Self.cards.map { try cards.recognize(try AudioFile.read(Fixtures.testData + "/cards/\($0.file).wav")).confidence }
        let folder = Fixtures.testData + "/librivox"
        let novel = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") }
        #expect(novel.count == 5)
        for file in novel {
            let result = try recognizer.recognize(try AudioFile.read(folder + "/" + file))
            #expect(result.rejected, "\(file) heard as \"\(result.text)\"")
            #expect(result.confidence < (right.min() ?? 0), "\(file)")
        }
    }

    @Test func acceptsExactlyTheGrammarsSentences() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.testData + "/goforward.gram")
        #expect(recognizer.accepts("go forward ten meters"))
        #expect(recognizer.accepts("go backward three"))
        #expect(recognizer.accepts("go backward three meter"))
        #expect(!recognizer.accepts("go sideways three"))
        #expect(!recognizer.accepts("go forward"))
    }

    @Test func loadsOnlyTheGrammarsWords() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("digits.gram"))
        let result = try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/004.wav"))
        #expect(!result.text.isEmpty)
        #expect(result.text.split(separator: " ").allSatisfy { ["zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"].contains(String($0)) })
    }

    @Test func namesGrammarWordsWithoutPronunciation() throws {
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("odd.gram").path
        try "#JSGF V1.0;\ngrammar odd;\npublic <a> = play zyrtecqx | stop blorfle;\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: RecognizerError.self) { try Fixtures.recognizer(grammar: path) }
        #expect(error?.code == .wordsMissing)
        let words = error?.message.components(separatedBy: "for: ").last?.components(separatedBy: ", ")
        #expect(Set(words ?? []) == ["zyrtecqx", "blorfle"])
        #expect(error?.message.hasPrefix(path + ": no pronunciation in ") == true)
    }

    @Test func reportsAGrammarThatDoesNotParse() throws {
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("broken.gram").path
        try "#JSGF V1.0;\ngrammar broken;\npublic <a> = (play | stop;\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: RecognizerError.self) { try Fixtures.recognizer(grammar: path) }
        #expect(error?.code == .grammarInvalid)
        #expect(error?.message.contains("does not parse as JSGF") == true)
        #expect(throws: RecognizerError.self) { try Grammar.file(folder.appendingPathComponent("none.gram").path) }
    }

    @Test func refusesAMissingModel() {
        let error = #expect(throws: RecognizerError.self) {
            try Fixtures.recognizer(grammar: Fixtures.grammar("commands.gram")) { $0.modelDirectory = "/nonexistent/model" }
        }
        #expect(error?.code == .decoderInitFailed)
    }

    /// The dictionary is read a line at a time (the whole file at once was the listener's peak):
    /// Windows line ends, tabs, comments, alternates and a last line without its end all read
    /// as the dictionary means them; a missing or unreadable dictionary is an error naming it.
    @Test func readsADictionaryLineByLine() throws {
        let folder = try TemporaryFolder.make()
        let dictionary = folder.appendingPathComponent("small.dict").path
        // "café" written decomposed (e + U+0301), as a dictionary made on another system may have it.
        try "play P L EY\r\npause\tP AO Z # the command\nstop S T AA P\nstop(2) S T AO P\ncafe\u{301} K AE F EY\nstart S T AA R T".write(toFile: dictionary, atomically: true, encoding: .utf8)
        #expect(try PocketSphinxRecognizer.wordsWithoutPronunciation(["pause", "stop", "start", "play", "resume"], dictionaryPath: dictionary) == ["resume"])
        #expect(try Pronunciations.phones(of: ["pause", "café", "stop"], dictionaryPath: dictionary) == ["pause": ["P", "AO", "Z"], "café": ["K", "AE", "F", "EY"], "stop": ["S", "T", "AA", "P"]])
        let grammar = folder.appendingPathComponent("small.gram").path
        try "#JSGF V1.0;\ngrammar small;\npublic <c> = play | pause | stop | start;\n".write(toFile: grammar, atomically: true, encoding: .utf8)
        let recognizer = try Fixtures.recognizer(grammar: grammar) { $0.dictionaryPath = dictionary }
        #expect(try recognizer.recognize(try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/pause.wav").path)).text == "pause")
        for path in ["/nonexistent/cmudict.dict", folder.path] {
            let error = #expect(throws: RecognizerError.self) { try PocketSphinxRecognizer.wordsWithoutPronunciation(["pause"], dictionaryPath: path) }
            #expect(error?.code == .decoderInitFailed)
            #expect(error?.message.contains(path) == true, "\(path)")
        }
    }

    /// What a dictionary file was read for is kept until the file changes: the same words are not
    /// read again (shown by changing a pronunciation in place, keeping the file's size, inode and
    /// time), new words are, and a file written anew is read anew. Words read at different times
    /// come back in the file's order (a word's alternates after it).
    @Test func aDictionaryIsReadAgainOnlyForNewWordsOrWhenItChanges() throws {
        let folder = try TemporaryFolder.make()
        let path = folder.appendingPathComponent("kept.dict").path
        try "pause P AO Z\nplay P L EY\nstop S T AA P\nstop(2) S T AO P\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Pronunciations.phones(of: ["stop"], dictionaryPath: path) == ["stop": ["S", "T", "AA", "P"]])
        var info = stat()
        #expect(stat(path, &info) == 0)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seek(toOffset: 0)
        try file.write(contentsOf: Data("pause P AA Z\nplay P L AY\nstop S T OW P\n".utf8))
        try file.close()
        var times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try Pronunciations.phones(of: ["stop", "play"], dictionaryPath: path) == ["stop": ["S", "T", "AA", "P"], "play": ["P", "L", "AY"]])
        #expect(try PocketSphinxRecognizer.wordsWithoutPronunciation(["play", "stop", "pause", "resume"], dictionaryPath: path) == ["resume"])
        #expect(try Pronunciations.phones(of: ["pause", "stop", "play"], dictionaryPath: path) == ["pause": ["P", "AA", "Z"], "stop": ["S", "T", "AA", "P"], "play": ["P", "L", "AY"]])
        try "pause P AW Z\nstop S T AA P\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Pronunciations.phones(of: ["pause", "stop", "play"], dictionaryPath: path) == ["pause": ["P", "AW", "Z"], "stop": ["S", "T", "AA", "P"]])
    }

    /// Lines are looked at as bytes before any is made a string: the words found in the whole
    /// en-us dictionary are those a plain reading of it finds, with the same first pronunciation.
    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func theWholeDictionaryReadsAsAPlainReadingOfIt() throws {
        let path = PocketSphinxRecognizer.Configuration.default.dictionaryPath
        var plain: [String: [String]] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let word = fields.first.map(String.init), !word.hasSuffix(")"), plain[word] == nil else { continue }
            plain[word] = fields.dropFirst().prefix(while: { $0 != "#" }).map(String.init)
        }
        var generator = SeededGenerator(seed: 18)
        let sample = Set(plain.keys.sorted().shuffled(using: &generator).prefix(20_000))
        let absent: Set<String> = ["zzyzxq", "playlistx", "qwertyuiop", "éclair", "naïve"]
        let found = try Pronunciations.phones(of: sample.union(absent), dictionaryPath: path)
        let wrong = sample.filter { found[$0] != plain[$0] }.sorted()
        #expect(wrong.isEmpty, "\(wrong.count) words read otherwise, among them \(wrong.prefix(5))")
        #expect(found.count == sample.count)
        #expect(try PocketSphinxRecognizer.wordsWithoutPronunciation(Array(absent.sorted()) + ["pause"], dictionaryPath: path) == absent.sorted())
    }

    @Test func refusesAudioAtAnotherRate() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("commands.gram"))
        #expect(throws: RecognizerError.self) { try recognizer.recognize(AudioBuffer(samples: [0, 0], sampleRate: 8000)) }
    }

    /// The phone loop decoded on a helper decoder beside the grammar pass gives the result the
    /// recognizer's own decoder gives after the alignment, to the last bit, recording after
    /// recording: commands and someone reading (issue 18: the wait for the result, not the result).
    /// After a live pass too: the alignment and the phone loop are whole utterances, each with its
    /// own cepstral mean, whichever decoder runs them.
    @Test func thePhoneLoopBesideTheGrammarPassGivesTheSameResult() throws {
        let grammar = Fixtures.testData + "/cards/cards.gram"
        let alone = try Fixtures.recognizer(grammar: grammar) { $0.phoneLoopHelpers = nil }
        let beside = try Fixtures.recognizer(grammar: grammar) { $0.phoneLoopHelpers = PhoneLoopHelpers(limit: 1) }
        let files = Self.cards.map { Fixtures.testData + "/cards/\($0.file).wav" }
            + [Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"]
        for file in files {
            let audio = try AudioFile.read(file)
            let own = try alone.recognize(audio)
            let helped = try beside.recognize(audio)
            #expect(!alone.phoneLoopRanBeside && beside.phoneLoopRanBeside, "\(file)")
            #expect(!own.text.isEmpty, "\(file)")
            #expect(own.text == helped.text, "\(file)")
            #expect(own.confidence == helped.confidence, "\(file)")
            #expect(own.confidenceFeatures == helped.confidenceFeatures, "\(file)")
            #expect(own.words.map(\.confidence) == helped.words.map(\.confidence), "\(file)")
        }
        let audio = try AudioFile.read(files[0])
        var results: [RecognitionResult] = []
        for recognizer in [alone, beside] {
            results.append(try Fixtures.decodedLive(audio, by: recognizer))
            #expect(recognizer.phoneLoopRanBeside == (recognizer === beside))
        }
        #expect(!results[0].text.isEmpty)
        #expect(results[0].text == results[1].text)
        #expect(results[0].confidenceFeatures == results[1].confidenceFeatures)
    }

    /// Recognizers on three threads share one helper: each utterance's phone loop runs on the
    /// helper when it is free and on the recognizer's own decoder when not, and every result is
    /// the one a recognizer alone gives. A helper handed to two utterances at once stops the test
    /// (the pool's debug check).
    @Test func recognizersOnSeveralThreadsShareTheHelpers() throws {
        let grammar = Fixtures.testData + "/cards/cards.gram"
        // Cards, and sentences of someone reading: seconds long, so that phone loops overlap.
        let files = Self.cards.map { Fixtures.testData + "/cards/\($0.file).wav" }
            + ["0870", "0880", "0890", "0920"].map { Fixtures.testData + "/librivox/sense_and_sensibility_01_austen_64kb-\($0).wav" }
        let audio = try files.map { try AudioFile.read($0) }
        let alone = try Fixtures.recognizer(grammar: grammar) { $0.phoneLoopHelpers = nil }
        let expected = try audio.map { try alone.recognize($0) }
        let pool = PhoneLoopHelpers(limit: 1)
        final class Reports: Sendable {
            let outcomes = Mutex<[(thread: Int, file: Int, result: RecognitionResult, beside: Bool)]>([])
            let failures = Mutex<[String]>([])
        }
        let reports = Reports()
        // Threads that start hearing together once each has its recognizer: Dispatch's workers,
        // shared with the suites running beside this one, may run three one after another, and
        // then the helper is always free.
        let threads = 3
        Concurrently.run(threads, prepare: { _ in Result { try Fixtures.recognizer(grammar: grammar) { $0.phoneLoopHelpers = pool } } }) {
            thread, recognizer in
            do {
                let recognizer = try recognizer.get()
                var generator = SeededGenerator(seed: UInt64(thread))
                for _ in 0..<2 {
                    // Each thread in its own order, so that different utterances meet.
                    for index in audio.indices.shuffled(using: &generator) {
                        let result = try recognizer.recognize(audio[index])
                        reports.outcomes.withLock { $0.append((thread, index, result, recognizer.phoneLoopRanBeside)) }
                    }
                }
            } catch {
                reports.failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(reports.failures.withLock { $0 } == [])
        let all = reports.outcomes.withLock { $0 }
        #expect(all.count == threads * 2 * files.count)
        for outcome in all {
            let want = expected[outcome.file]
            #expect(outcome.result.text == want.text, "\(files[outcome.file]) on thread \(outcome.thread)")
            #expect(outcome.result.confidence == want.confidence, "\(files[outcome.file]) on thread \(outcome.thread)")
            #expect(outcome.result.confidenceFeatures == want.confidenceFeatures, "\(files[outcome.file]) on thread \(outcome.thread)")
        }
        // The helper was used, and not by every utterance: three threads, one helper.
        let beside = all.filter(\.beside).count
        #expect(beside > 0)
        #expect(beside < all.count)
    }

    @Test func hearsNothingInSilence() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("commands.gram"))
        let result = try recognizer.recognize(AudioBuffer(samples: Array(repeating: 0, count: 16_000)))
        #expect(result.rejected)
        #expect(result.confidence < 0.3)
    }
}

/// espeak-ng speech made at test time, resampled from 22050 Hz and recognized.
@Suite(
    "Synthesized commands (live)",
    .enabled(if: Fixtures.hasPocketSphinx && Fixtures.hasEspeak, "needs pocketsphinx-en-us and espeak-ng")
)
struct SynthesizedSpeechTests {
    @Test func recognizesSpokenCommands() throws {
        let recognizer = try Fixtures.recognizer(grammar: Fixtures.grammar("commands.gram"))
        let folder = try TemporaryFolder.make()
        let commands = ["start", "stop", "pause", "resume", "next", "previous", "cancel", "yes", "no", "volume up"]
        var right = 0
        for command in commands {
            let file = folder.appendingPathComponent("\(command).wav")
            try Fixtures.speak(command, to: file)
            let audio = try AudioFile.read(file.path)
            #expect(audio.sampleRate == 16_000)
            if try recognizer.recognize(audio).text == command { right += 1 }
        }
        // Measured: 10 of 10 (espeak-ng en-us); before the decoder dithered digital silence, 9.
        #expect(right >= 9)
    }
}

/// Word graphs loaded as finite-state grammars directly (no JSGF).
@Suite(
    "Word-graph grammars (live)",
    .enabled(if: Fixtures.hasPocketSphinx, "needs Debian's pocketsphinx-en-us and pocketsphinx-testdata")
)
struct WordGraphTests {
    /// A prefix tree of the sentences: a word graph without null arcs.
    static func trie(_ sentences: [String]) -> WordGraph {
        var arcs: [WordGraph.Arc] = []
        var children: [Int: [String: Int]] = [:]
        var finals: Set<Int> = []
        var count = 1
        for sentence in sentences {
            var state = 0
            for word in sentence.split(separator: " ").map(String.init) {
                if let next = children[state]?[word] {
                    state = next
                } else {
                    arcs.append(.init(from: state, to: count, word: word))
                    children[state, default: [:]][word] = count
                    state = count
                    count += 1
                }
            }
            finals.insert(state)
        }
        return WordGraph(stateCount: count, start: 0, finals: finals, arcs: arcs)
    }

    static func recognizer(_ graph: WordGraph) throws -> PocketSphinxRecognizer {
        try PocketSphinxRecognizer(grammar: Grammar(name: "graph", wordGraph: graph), logger: Logger(label: "test"))
    }

    @Test func recognizesTheCardsFromAWordGraph() throws {
        let ranks = ["ace", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king"]
        let suits = ["clubs", "hearts", "diamonds", "spades"]
        let cards = ranks.flatMap { rank in suits.map { "\(rank) of \($0)" } }
        let recognizer = try Self.recognizer(Self.trie(cards + ranks.map { "\($0) \($0)" }))
        #expect(try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/001.wav")).text == "ten of clubs")
        #expect(try recognizer.recognize(try AudioFile.read(Fixtures.testData + "/cards/004.wav")).text == "five five")
        #expect(recognizer.accepts("king of hearts"))
        #expect(!recognizer.accepts("king of"))
    }

    @Test func recognizesATimerCommandAmongHundredsOfSentences() throws {
        let numbers = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "fifteen", "twenty", "thirty", "forty five"]
        let sentences = numbers.flatMap { number in
            ["seconds", "minutes", "hours"].flatMap { unit in
                ["set a timer for \(number) \(unit)", "start a \(number) \(unit) timer", "set a pasta timer for \(number) \(unit)"]
            }
        }
        let recognizer = try Self.recognizer(Self.trie(sentences))
        let result = try recognizer.recognize(try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/set_a_timer_for_5_minutes.wav").path))
        #expect(result.text == "set a timer for five minutes")
    }
}

/// espeak-ng speech of every shipped domain through the intents' grammar and parser.
@Suite(
    "Synthesized commands through intents (live)",
    .enabled(if: Fixtures.hasPocketSphinx && Fixtures.hasEspeak, "needs pocketsphinx-en-us and espeak-ng")
)
struct SynthesizedIntentTests {
    static let commands: [(text: String, intent: String)] = [
        ("set a timer for ten minutes", "setTimer"),
        ("cancel the timer", "cancelTimer"),
        ("how much time is left", "timeRemaining"),
        ("pause the music", "pauseMedia"),
        ("next track", "nextTrack"),
        ("set the volume to forty", "setVolume"),
        ("start a run workout", "startWorkout"),
        ("end the workout", "endWorkout"),
        ("pause the workout", "pauseWorkout"),
        ("add milk to my shopping list", "addToList"),
        ("stop", "stop"),
        ("resume", "resume"),
    ]

    @Test func everyDomainIsHeard() throws {
        let catalog = try Speech.catalog()
        let recognizer = try Fixtures.shippedIntentsRecognizer()
        let folder = try TemporaryFolder.make()
        var right = 0
        for (index, command) in Self.commands.enumerated() {
            #expect(catalog.parse(command.text).first?.intent == command.intent, "\(command.text) does not parse")
            let file = folder.appendingPathComponent("\(index).wav")
            try Fixtures.speak(command.text, to: file)
            let result = try recognizer.recognize(try AudioFile.read(file.path))
            if catalog.parse(result.text).first?.intent == command.intent { right += 1 }
        }
        // Measured: 12 of 12 (espeak-ng en-us). Before the decoder dithered digital silence,
        // 4 of them got no hypothesis at all.
        #expect(right >= 11)
    }
}
