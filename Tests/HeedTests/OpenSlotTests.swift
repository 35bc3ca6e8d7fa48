import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedRuntime
@testable import HeedSpeech
import HeedState
import Logging
import Testing
import HeedTesting

/// Vocabulary types too large to spell out in the grammar (``OpenSlot``): a phone loop in the first
/// pass, the closest terms in the second.
@Suite("Open slots")
struct OpenSlotTests {
    /// A small grammar: "play playlist {slot}", "put on [the] {slot} playlist", "pause", "stop that".
    /// The slots after "on" and after "the" end in the same state, as in a minimal grammar.
    static let graph: WordGraph = {
        let phones = ModelPhones.speech.map { OpenSlot.phoneWord($0, type: "playlistTitle") }
        var arcs = [
            WordGraph.Arc(from: 0, to: 1, word: "play"), WordGraph.Arc(from: 1, to: 2, word: "playlist"),
            WordGraph.Arc(from: 0, to: 4, word: "put"), WordGraph.Arc(from: 4, to: 5, word: "on"),
            WordGraph.Arc(from: 5, to: 6, word: "the"), WordGraph.Arc(from: 7, to: 3, word: "playlist"),
            WordGraph.Arc(from: 0, to: 3, word: "pause"), WordGraph.Arc(from: 0, to: 9, word: "stop"),
            WordGraph.Arc(from: 9, to: 3, word: "that"),
        ]
        for phone in phones {
            arcs += [
                WordGraph.Arc(from: 2, to: 8, word: phone), WordGraph.Arc(from: 8, to: 8, word: phone),
                WordGraph.Arc(from: 5, to: 7, word: phone), WordGraph.Arc(from: 6, to: 7, word: phone),
                WordGraph.Arc(from: 7, to: 7, word: phone),
            ]
        }
        return WordGraph(stateCount: 10, start: 0, finals: [3, 8], arcs: arcs)
    }()

    static let pronunciations = [
        "morning": "M AO R N IH NG", "jazz": "JH AE Z", "road": "R OW D", "trip": "T R IH P",
        "classics": "K L AE S IH K S", "rainy": "R EY N IY", "day": "D EY", "blues": "B L UW Z",
    ]

    static func search() -> OpenSlotSearch {
        OpenSlotSearch(
            slots: [OpenSlot(type: "playlistTitle", terms: [["morning", "jazz"], ["road", "trip", "classics"], ["rainy", "day", "blues"]])],
            graph: graph, pronunciation: { pronunciations[$0] })
    }

    static func heard(_ phones: String) -> [String] {
        phones.split(separator: " ").map { OpenSlot.phoneWord(String($0), type: "playlistTitle") }
    }

    @Test func pseudoWordsNameTheirTypeAndPhone() {
        #expect(OpenSlot.phoneWord("NG", type: "playlistTitle") == "{playlistTitle}ng")
        #expect(OpenSlot.parse("{playlistTitle}ng")?.type == "playlistTitle")
        #expect(OpenSlot.parse("{playlistTitle}ng")?.phone == "NG")
        #expect(OpenSlot.parse("playlist") == nil)
        #expect(OpenSlot.parse("{playlistTitle}") == nil)
    }

    @Test func phonesAreReadAsTheModelsIndices() {
        let index = { (phone: String) in UInt8(ModelPhones.speech.firstIndex(of: phone)!) }
        #expect(OpenSlotSearch.codes(ofPhones: "HH EH L OW") == ["HH", "EH", "L", "OW"].map(index))
        // Extra spaces, a phone the model lacks (SIL is no speech phone) and an empty pronunciation.
        #expect(OpenSlotSearch.codes(ofPhones: " T  SIL XYZZY AA ") == ["T", "AA"].map(index))
        #expect(OpenSlotSearch.codes(ofPhones: "").isEmpty)
        #expect(ModelPhones.speech.allSatisfy { OpenSlotSearch.code(ofPhone: $0.utf8) == index($0) })
    }

    @Test func theClosestTermComesFirstThoughPhonesWereMisheard() {
        let search = Self.search()
        let terms = search.slots["playlistTitle"]!
        // "road trip classics" with T heard as D, a vowel changed and the final S lost.
        let order = search.shortlist(terms, phones: "R OW D D R EH P K L AE S IH K".split(separator: " ").map(String.init))
        #expect(order.first == 1)
        #expect(search.shortlist(terms, phones: ["JH", "AE", "Z"]).first == 0)
    }

    @Test func theSecondPassAfterAWholeSentenceSaysOnlyTermsInTheSlot() {
        let search = Self.search()
        let second = search.secondPass(after: ["put", "on", "the"] + Self.heard("R EY N IY D EY B L UW Z") + ["playlist"], sentence: true)
        #expect(second.accepts(["put", "on", "the", "rainy", "day", "blues", "playlist"]))
        #expect(second.accepts(["put", "on", "rainy", "day", "blues", "playlist"]))
        #expect(second.accepts(["play", "playlist", "morning", "jazz"]))
        #expect(!second.accepts(["stop", "that"]))
        #expect(!second.accepts(["pause"]))
        #expect(!second.accepts(["put", "on", "the", "rainy", "day", "playlist"]))
        #expect(!second.accepts(["put", "on", "rainy", "day", "jazz", "playlist"]))
        #expect(!second.arcs.contains { OpenSlot.parse($0.word) != nil })
        // Only the states its sentences go through: the search visits every state at each frame.
        let used = Set(second.arcs.flatMap { [$0.from, $0.to] }).union([second.start])
        #expect(used == Set(0..<second.stateCount))
        #expect(second.finals.isSubset(of: used) && !second.finals.isEmpty)
        // The nine states of those sentences, and the terms' inner states once per slot end (the
        // three terms have five, the slots two ends): the slots after "on" and "the" share theirs.
        #expect(second.stateCount == 9 + 5 * 2)
    }

    @Test func theSecondPassAfterNoSentenceSearchesTheWholeGrammarAgain() {
        let second = Self.search().secondPass(after: ["play"] + Self.heard("P AO Z"), sentence: false)
        #expect(second.accepts(["pause"]))
        #expect(second.accepts(["play", "playlist", "road", "trip", "classics"]))
        #expect(second.accepts(["stop", "that"]))
        #expect(!second.accepts(["play", "playlist"]))
        // The terms stand only where the words heard before the slot lead, by any words after them.
        #expect(!second.accepts(["put", "on", "the", "morning", "jazz", "playlist"]))
        let afterPutOn = Self.search().secondPass(after: ["put", "on"] + Self.heard("DH AH M AO R N"), sentence: false)
        #expect(afterPutOn.accepts(["put", "on", "the", "morning", "jazz", "playlist"]))
        #expect(!afterPutOn.accepts(["play", "playlist", "morning", "jazz"]))
        #expect(afterPutOn.accepts(["pause"]))
        // Words the grammar does not begin with say nothing of where the slot is: every place.
        let elsewhere = Self.search().secondPass(after: ["stop", "on"] + Self.heard("M AO R N"), sentence: false)
        #expect(elsewhere.accepts(["put", "on", "the", "morning", "jazz", "playlist"]))
        #expect(elsewhere.accepts(["play", "playlist", "morning", "jazz"]))
        #expect(Set(second.arcs.flatMap { [$0.from, $0.to] }).union([second.start]) == Set(0..<second.stateCount))
    }

    @Test func sentencesWithTermsInTheSlotAreTheGrammars() {
        let search = Self.search()
        #expect(search.accepts(["play", "playlist", "road", "trip", "classics"]))
        #expect(search.accepts(["put", "on", "the", "morning", "jazz", "playlist"]))
        #expect(!search.accepts(["play", "playlist", "road", "trip"]))
        #expect(!search.accepts(["put", "on", "the", "morning", "jazz"]))
        #expect(!search.accepts(["play", "playlist", "morning", "jazz", "playlist"]))
    }

    @Test func theFirstPassPaysToGoIntoASlotAndNothingInside() {
        let probability = OpenSlotSearch.arcProbability(in: Self.graph)
        let phone = OpenSlot.phoneWord("AA", type: "playlistTitle")
        #expect(probability(WordGraph.Arc(from: 2, to: 8, word: phone)) == OpenSlotSearch.entryProbability)
        #expect(probability(WordGraph.Arc(from: 8, to: 8, word: phone)) == 1)
        #expect(probability(WordGraph.Arc(from: 0, to: 1, word: "play")) == 1)
    }

    /// A type with ``OpenSlot/minimumTerms`` terms is a phone loop in the recognizer's grammar; one
    /// with fewer is spelled out; the parser knows every term either way.
    @Test func aLargeTypeIsAPhoneLoopInTheGrammar() throws {
        let catalog = try OpenSlotFixtures.catalog()
        let titles = try OpenSlotFixtures.titles(OpenSlot.minimumTerms)
        let large = try RecognitionSetup(catalog: catalog, vocabulary: VocabularySnapshot(terms: ["playlistTitle": titles]))
        #expect(large.grammar.openSlots.map(\.type) == ["playlistTitle"])
        let words = Set(try #require(large.grammar.wordGraph).arcs.map(\.word))
        #expect(words.contains(OpenSlot.phoneWord("AA", type: "playlistTitle")))
        #expect(!words.contains(titles[0].split(separator: " ").last.map(String.init)!))
        #expect(large.parser.parse("play playlist \(titles[0])").first?.parameters["playlist"] == .vocabulary(titles[0]))

        let small = try RecognitionSetup(catalog: catalog, vocabulary: VocabularySnapshot(terms: ["playlistTitle": Array(titles.prefix(OpenSlot.minimumTerms - 1))]))
        #expect(small.grammar.openSlots.isEmpty)
        #expect(!Set(try #require(small.grammar.wordGraph).arcs.map(\.word)).contains(OpenSlot.phoneWord("AA", type: "playlistTitle")))
    }

    /// The terms' words join the decoder only when a second pass says them, but every one is
    /// checked when the grammar loads: a word nothing pronounces is refused then, by name, and so
    /// is a pronunciation with a phone the model lacks; given a right one, the grammar loads.
    @Test(.enabled(if: Fixtures.hasPocketSphinx))
    func aTermsWordWithoutPronunciationIsRefusedWhenTheGrammarLoads() throws {
        let catalog = try OpenSlotFixtures.catalog()
        var titles = try OpenSlotFixtures.titles(OpenSlot.minimumTerms)
        titles[3] = "zqxjv sunrise"
        let unsaid = try RecognitionSetup(catalog: catalog, vocabulary: VocabularySnapshot(terms: ["playlistTitle": titles]))
        #expect(unsaid.grammar.openSlots.map(\.type) == ["playlistTitle"])
        let error = #expect(throws: RecognizerError.self) { try unsaid.makeRecognizer(configuration: .default, logger: Logger(label: "test")) }
        #expect(error?.code == .wordsMissing)
        #expect(error?.message.contains("zqxjv") == true, "\(String(describing: error))")
        let unknownPhone = try RecognitionSetup(
            catalog: catalog, vocabulary: VocabularySnapshot(terms: ["playlistTitle": titles], additionalPronunciations: ["zqxjv": ["Z IH QQ S"]]))
        let phoneError = #expect(throws: RecognizerError.self) { try unknownPhone.makeRecognizer(configuration: .default, logger: Logger(label: "test")) }
        #expect(phoneError?.message.contains("a phone the model does not have") == true, "\(String(describing: phoneError))")
        let said = try RecognitionSetup(
            catalog: catalog, vocabulary: VocabularySnapshot(terms: ["playlistTitle": titles], additionalPronunciations: ["zqxjv": ["Z IH K S"]]))
        let recognizer = try said.makeRecognizer(configuration: .default, logger: Logger(label: "test"))
        #expect(recognizer.accepts("play the zqxjv sunrise playlist"))
    }

    /// The answer to "Which playlist?" has the same open slot as the commands.
    @Test func aDialogTurnAboutALargeTypeHasAnOpenSlot() throws {
        let titles = try OpenSlotFixtures.titles(OpenSlot.minimumTerms)
        let grammar = DialogGrammar.grammar(
            for: .value(intent: "playMedia", parameter: "playlist"), catalog: try OpenSlotFixtures.catalog(),
            vocabulary: ["playlistTitle": titles, "listItem": titles], hasPronunciation: { _ in true })
        #expect(grammar.openSlots.map(\.type) == ["playlistTitle"])
        #expect(try #require(grammar.wordGraph).arcs.contains { $0.word == OpenSlot.phoneWord("AA", type: "playlistTitle") })
    }

    /// Real PocketSphinx: a title among 1,200 is heard in a synthesized command, and recordings of
    /// people saying other commands are heard as they are without the titles (the loop must not
    /// swallow them: with a free loop "pause" became "play" and phones, and nothing).
    @Test(.enabled(if: Fixtures.hasPocketSphinx && Fixtures.hasEspeak))
    func aTitleAmongManyIsHeardAndOtherCommandsAreNotSwallowed() throws {
        let catalog = try OpenSlotFixtures.catalog()
        var titles = try OpenSlotFixtures.titles(1_200)
        titles[700] = "Road Trip Classics"
        let snapshot = VocabularySnapshot(terms: ["playlistTitle": titles])
        let setup = try RecognitionSetup(catalog: catalog, vocabulary: snapshot)
        #expect(!setup.grammar.openSlots.isEmpty)
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.maximumAlternatives = 0
        let recognizer = try setup.makeRecognizer(configuration: configuration, logger: Logger(label: "test"))
        #expect(recognizer.accepts("put on the road trip classics playlist"))
        #expect(!recognizer.accepts("put on the road trip playlist"))

        let wav = try TemporaryFolder.make().appendingPathComponent("title.wav")
        try Fixtures.speak("put on the road trip classics playlist", to: wav)
        let result = try recognizer.recognize(try AudioFile.read(wav.path))
        #expect(result.text == "put on the road trip classics playlist")
        #expect(setup.parser.parse(result.text).first?.parameters["playlist"] == .vocabulary("Road Trip Classics"))

        // The wake grammar (the phrase, then a command in the same breath) keeps the open slot.
        try WakePhraseSpotter(phrase: "hey heed").load(into: recognizer, commands: setup.grammar)
        try recognizer.activateGrammar(named: "wake")
        #expect(recognizer.accepts("hey heed put on the road trip classics playlist"))
        try recognizer.activateGrammar(named: "intents")

        let plain = try RecognitionSetup(catalog: catalog).makeRecognizer(configuration: configuration, logger: Logger(label: "test"))
        for name in ["pause.wav", "set_a_timer_for_5_minutes.wav"] {
            let audio = try AudioFile.read(Fixtures.packageRoot.appendingPathComponent("examples/audio/\(name)").path)
            let withTitles = try recognizer.recognize(audio)
            #expect(!withTitles.text.isEmpty)
            #expect(withTitles.text == (try plain.recognize(audio)).text, "\(name)")
        }
        // Heard again, the title's second pass replaces the one the first hearing left.
        #expect(try recognizer.recognize(try AudioFile.read(wav.path)).text == "put on the road trip classics playlist")
        #expect(try recognizer.recognize(try AudioFile.read(wav.path)).text == "put on the road trip classics playlist")
    }
}

enum OpenSlotFixtures {
    static func catalog() throws -> IntentCatalog {
        try IntentCatalog.load(
            intents: [Fixtures.packageRoot.appendingPathComponent("intents")],
            grammars: [Fixtures.packageRoot.appendingPathComponent("grammars")]
        ).inContext([])
    }

    /// `count` two-word titles of dictionary words, the same every run.
    static func titles(_ count: Int) throws -> [String] {
        let dictionary = try String(contentsOfFile: PocketSphinxRecognizer.Configuration.default.dictionaryPath, encoding: .utf8)
        let words = dictionary.split(separator: "\n").compactMap { line -> String? in
            let word = line.prefix { $0 != " " }
            guard word.count >= 4, word.allSatisfy({ $0.isLetter && $0.isLowercase }) else { return nil }
            return String(word)
        }
        return (0..<count).map { index in "\(words[(index * 7919) % words.count]) \(words[(index * 104_729 + 13) % words.count])" }
    }
}

/// `heed grammar show --stats` counts what the recognizer searches: with 1,000 titles, a phone
/// loop instead of the titles.
@Suite("Open slots: heed grammar show --stats")
struct OpenSlotStatsTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Fixtures.heedBinary.path) && Fixtures.hasPocketSphinx))
    func statsNameTheOpenSlotAndLeaveOutItsTerms() throws {
        let data = try TemporaryFolder.make()
        let titles = data.appendingPathComponent("titles.txt")
        try (try OpenSlotFixtures.titles(OpenSlot.minimumTerms)).joined(separator: "\n").write(to: titles, atomically: true, encoding: .utf8)
        let plugins = Fixtures.packageRoot.appendingPathComponent("plugins").path
        func stats() throws -> [[String: Any]] {
            let result = try Fixtures.run(
                Fixtures.heedBinary, ["grammar", "show", "--stats", "--json", "--data-dir", data.path, "--plugins", plugins], in: Fixtures.packageRoot)
            #expect(result.status == 0, "\(result.error)")
            let json = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
            return (json as? [[String: Any]]) ?? ((json as? [String: Any])?["grammars"] as? [[String: Any]]) ?? []
        }
        let before = try stats()
        let imported = try Fixtures.run(
            Fixtures.heedBinary,
            ["vocab", "import", "--data-dir", data.path, "--plugins", plugins, "--app", "org.heed.media", "--type", "playlistTitle", titles.path],
            in: Fixtures.packageRoot)
        #expect(imported.status == 0, "\(imported.error)")
        let after = try stats()
        #expect(!before.isEmpty && before.count == after.count)
        for (without, with) in zip(before, after) {
            #expect((without["openSlots"] as? [String]) == [])
            #expect((with["openSlots"] as? [String]) == ["playlistTitle"])
            // 1,000 titles of two words would add some 1,500 words; the loop adds 39, and the words
            // of playMedia's templates join (without a title they lead nowhere and are left out).
            #expect(((with["words"] as? Int) ?? .max) - ((without["words"] as? Int) ?? 0) < 100)
        }
    }
}
