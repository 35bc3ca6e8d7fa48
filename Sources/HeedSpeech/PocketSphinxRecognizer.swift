public import HeedCore
public import Logging
import Foundation

extension Grammar {
    /// Reads a grammar from a `.gram` file.
    ///
    /// - Throws: ``RecognizerError`` `.grammarInvalid` when the file cannot be read.
    public static func file(_ path: String) throws(RecognizerError) -> Grammar {
        do {
            return Grammar(name: path, jsgf: try String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw RecognizerError(.grammarInvalid, "\(path): cannot read the grammar: \(error.localizedDescription)")
        }
    }
}

/// A grammar-constrained recognizer on PocketSphinx with the en-us acoustic model.
///
/// It decodes with a finite-state grammar search and, over the same audio, a free loop
/// of context-independent phones. The phone loop is the best any sequence of sounds
/// can score, so the gap between the two per frame says how well the grammar's best
/// path explains the audio; ``ConfidenceModel`` maps that gap to a probability.
///
/// Not `Sendable`: the decoder is single-threaded. One owner drives it.
public final class PocketSphinxRecognizer: SpeechRecognizer {
    /// Where the model is and how to decode.
    public struct Configuration: Sendable {
        /// The acoustic model directory (`-hmm`).
        public var modelDirectory: String
        /// The CMU-format pronunciation dictionary that grammar words are looked up in.
        public var dictionaryPath: String
        /// Extra decoder flags (`["-beam": "1e-48"]`); they win over Heed's own.
        public var decoderOptions: [String: String]
        /// How many n-best alternatives to return at most.
        public var maximumAlternatives: Int
        /// Whether to decode a free phone loop over each utterance as the reference the
        /// grammar path is measured against. Without it the reference is the decoder's own
        /// per-frame normalisation: half the decoding time, slightly weaker rejection.
        public var phoneLoopReference: Bool
        /// Where the phone loop is decoded beside the grammar pass, on another core: the result
        /// is the same and ready sooner, for the memory of a second decoder. `nil`: on this
        /// recognizer's own decoder, after the alignment.
        public var phoneLoopHelpers: PhoneLoopHelpers? = .shared
        /// The loop beside a command grammar's sentences that takes other talk
        /// (``Grammar/hearsOtherSpeech``); `nil` decodes the grammar alone.
        public var otherSpeechLoop: OtherSpeechLoop? = .standard
        /// Maps the acoustic margin to a confidence; use the model fitted for the reference in use.
        public var confidence: ConfidenceModel
        /// The model of a grammar whose every sentence is one word, scored on one normaliser: a
        /// recognizer made for such a grammar computes every senone of every frame. `nil`, or no
        /// phone loop, or `-compallsen` among ``decoderOptions``: such grammars are scored as
        /// sentences are, with ``confidence``.
        public var oneWordConfidence: ConfidenceModel? = .oneWord
        /// Results whose confidence is below this are rejected.
        public var rejectionThreshold: Double
        /// The threshold for a result heard twice in noise (``recognize(_:suppressed:)``) where
        /// ``rejectionThreshold`` or a caller's threshold is stricter. `nil`: the confidence
        /// model's own ``ConfidenceModel/inNoisePoint`` (none for a grammar of single words).
        public var inNoiseThreshold: Double? = nil
        /// The lowest threshold anything will judge this recognizer's results at. A suppressed
        /// hearing less confident than this is not heard again as captured
        /// (``recognize(_:suppressed:)``): the second hearing could only lower its confidence, and
        /// it is rejected either way. 0: always heard twice (the words of a rejected result are
        /// then the more confident hearing's, as `heed eval` reports them).
        public var secondHearingFloor = 0.0
        /// Pronunciations that win over the dictionary's (registered vocabulary, user
        /// overrides): word → one or more ARPAbet phone strings ("R UW T S IH K S T IY S IH K S").
        public var additionalPronunciations: [String: [String]] = [:]
        /// The n-gram language model of dictation (``Grammar/dictation(words:)``).
        public var languageModelPath = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"

        /// Debian's pocketsphinx-en-us paths and the calibrated defaults.
        public static let `default` = Configuration(
            modelDirectory: "/usr/share/pocketsphinx/model/en-us/en-us",
            dictionaryPath: "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
            decoderOptions: [:],
            maximumAlternatives: 5,
            phoneLoopReference: true,
            confidence: .features,
            // At most 1 false accept per hour of other speech on the train split of the
            // rejection sets (README, "Confidence and rejection").
            rejectionThreshold: ConfidenceModel.features.operatingPoint
        )
    }

    /// The name of the phone loop's search, in this recognizer's decoder and in a helper's.
    static let phoneLoopSearch = "heed_phone_loop"
    private static let alignmentSearch = "heed_alignment"
    private static let openSlotSearch = "heed_open_slot"
    /// PocketSphinx computes 100 feature frames a second.
    private static let framesPerSecond = 100.0

    private let configuration: Configuration
    private let decoder: SphinxDecoder
    /// The model of grammars of single words when the decoder computes every senone; `nil`
    /// when it does not, and every grammar is scored with ``Configuration/confidence``.
    private let oneWordConfidence: ConfidenceModel?
    /// Where the alignment and the phone loop of a one-word grammar are decoded from the grammar
    /// pass's scores; `nil` unless this recognizer was made for one (``ScoreReplay``).
    private let replay: ScoreReplay?
    /// The flags of a helper decoder for this recognizer's phone loop (``PhoneLoopHelpers``).
    private let phoneLoopArguments: [String: String]
    private let log: SphinxLogSink
    /// The loaded grammars by name; each is a named search of the decoder.
    private var grammars: [String: LoadedGrammar] = [:]
    /// The grammar utterances are recognized with, and its search.
    private var grammar: LoadedGrammar
    private var activeSearch: String
    private var lexicon: Lexicon
    private var utterance: [Int16] = []
    private var utteranceCPUSeconds = 0.0
    private var liveUtterance = false
    /// The words heard before the pause the live utterance comes after (``startLiveDecoding(after:)``).
    private var liveWordsBefore: [String] = []
    /// The live best path as the last chunk left it, read once for the listener's questions about
    /// it (``liveQuietAfterSentence``, ``liveQuietWithoutWords``, ``liveSentenceUnfinished``).
    private var liveSegments: [RawSegment]?

    /// Seconds spent loading the model, dictionary and grammar.
    public let loadSeconds: Double

    /// Loads the model and compiles `grammar`, which becomes the active grammar.
    ///
    /// - Parameters:
    ///   - grammar: the JSGF grammar (all public rules are accepted) or word graph.
    ///   - configuration: model paths and decoder settings.
    ///   - logger: receives PocketSphinx's own log at debug (info for its warnings).
    /// - Throws: ``RecognizerError`` when the model, dictionary or grammar cannot be used,
    ///   or grammar words have no pronunciation.
    public init(grammar: Grammar, configuration: Configuration = .default, logger: Logger) throws(RecognizerError) {
        let started = ContinuousClock.now
        self.configuration = configuration
        let log = SphinxLogSink.shared
        log.use(logger)
        self.log = log
        guard FileManager.default.fileExists(atPath: configuration.modelDirectory + "/mdef") else {
            throw RecognizerError(.decoderInitFailed, "no acoustic model in \(configuration.modelDirectory) (install pocketsphinx-en-us or pass --model)")
        }
        var arguments: [String: String] = [
            "-hmm": configuration.modelDirectory,
            // Words are added from the grammar below: an empty dictionary to start with.
            "-dict": "/dev/null",
            "-allphone_ci": "yes",
            // The default word beam (7e-29) prunes away every path to the final state of
            // large intent grammars ("Final result does not match the grammar").
            "-wbeam": "1e-35",
            // Exact digital silence (synthesized speech, padded clips) has no defined log energy;
            // without dither the search lost the right sentence on such audio. Seeded, and done
            // by SphinxDecoder per utterance, whatever other decoders do.
            "-dither": "yes",
            "-seed": "2026",
            // Alternate pronunciations are drawn into each grammar by Heed (`addAlternates`):
            // PocketSphinx's own way is quadratic in the grammar's size.
            "-fsgusealtpron": "no",
        ]
        if grammar.isDictation { arguments.merge(Self.dictationArguments(configuration)) { _, dictation in dictation } }
        arguments.merge(configuration.decoderOptions) { _, override in override }
        var decoder = try SphinxDecoder(arguments: arguments)
        let newLexicon = {
            Lexicon(
                dictionaryPath: configuration.dictionaryPath, additional: configuration.additionalPronunciations,
                decoderHasDictionary: grammar.isDictation)
        }
        var lexicon = newLexicon()
        var compiled = try Self.prepare(grammar, decoder: decoder, lexicon: &lexicon, configuration: configuration, log: log)
        var replay: ScoreReplay?
        if compiled.saysOneWord, configuration.phoneLoopReference, configuration.oneWordConfidence != nil, arguments["-compallsen"] == nil {
            // A grammar of single words is scored on one normaliser: every senone of every frame
            // computed, so the alignment and the phone loop are measured against the same best
            // score (docs/RECOGNITION.md, "One word"). PocketSphinx reads the setting once, when
            // the model loads: the decoder is made again with it, keeping the scores for the
            // alignment and the phone loop to be decoded from.
            arguments["-compallsen"] = "yes"
            // Every senone is computed anyway, so each is computed more exactly: more of its
            // codebook's densities weighed (docs/RECOGNITION.md, "One word").
            if arguments["-topn"] == nil { arguments["-topn"] = String(Self.oneWordDensities) }
            // Around a single word, what is not the word is silence or the room: cheaper to say
            // so (docs/RECOGNITION.md, "One word").
            if arguments["-silprob"] == nil { arguments["-silprob"] = Self.oneWordSilenceProbability }
            do {
                replay = try ScoreReplay(arguments: arguments, lexicon: newLexicon(), phoneLoopSearch: Self.phoneLoopSearch)
            } catch {
                logger.warning("\(error.message); every senone is computed in each pass instead (slower, the same results)")
            }
            arguments["-keepscores"] = replay == nil ? nil : "yes"
            decoder = try SphinxDecoder(arguments: arguments)
            if replay != nil, !decoder.keepsScores {
                logger.warning("this PocketSphinx cannot hand its senone scores to another decoder; every senone is computed in each pass instead (slower, the same results)")
                replay = nil
            }
            lexicon = newLexicon()
            compiled = try Self.prepare(grammar, decoder: decoder, lexicon: &lexicon, configuration: configuration, log: log)
            if let replay { try replay.lexicon.add(lexicon.known, to: replay.decoder, source: grammar.name) }
        }
        self.oneWordConfidence = arguments["-compallsen"] == "yes" ? configuration.oneWordConfidence : nil
        self.replay = replay
        self.decoder = decoder
        if !decoder.scoresWithHeed, arguments["-scoring"] != "pocketsphinx" {
            logger.info("PocketSphinx scores the acoustic model: Heed's evaluator does not take \(configuration.modelDirectory) (the same results, about twice the CPU)")
        }
        // The phone loop needs the model and its settings, not the words or the scores.
        var phoneLoopArguments = arguments
        phoneLoopArguments["-dict"] = "/dev/null"
        phoneLoopArguments["-lm"] = nil
        phoneLoopArguments["-keepscores"] = nil
        self.phoneLoopArguments = phoneLoopArguments
        self.activeSearch = Self.searchName(grammar.name)
        self.lexicon = lexicon
        self.grammar = compiled
        do {
            try decoder.addPhoneLoopSearch(name: Self.phoneLoopSearch)
        } catch {
            throw Self.withLog(error, log.takeRecentErrors())
        }
        grammars[grammar.name] = compiled
        self.loadSeconds = (ContinuousClock.now - started).seconds
    }

    /// How many of its codebook's densities each senone's score weighs in a recognizer made for a
    /// grammar of single words (PocketSphinx's `-topn`; 4 for every other grammar). On the real
    /// rejection sets it accepts as many heard-right words or more at each count of false
    /// accepts, at 1.7–1.9 times the CPU of such grammars (docs/MEASUREMENTS.md, "More densities
    /// for one word").
    static let oneWordDensities = 16

    /// The probability of a silence between words (PocketSphinx's `-silprob`, 0.005 for every
    /// other grammar) in a recognizer made for a grammar of single words: every pass explains the
    /// audio around the word as silence more readily. More words heard right are accepted in
    /// quiet and many more in noise, at equal false accepts (docs/MEASUREMENTS.md, "Silence
    /// around one word").
    static let oneWordSilenceProbability = "0.5"

    /// Results whose confidence is below this are rejected.
    public var rejectionThreshold: Double { configuration.rejectionThreshold }

    /// The pronunciation dictionary words are looked up in.
    public var dictionaryPath: String { configuration.dictionaryPath }

    /// The words of `words` this recognizer cannot say: not loaded, not among its additional
    /// pronunciations, and not in its dictionary (read only for the words still unknown).
    ///
    /// - Throws: ``RecognizerError`` `.decoderInitFailed` when the dictionary cannot be read.
    public func wordsWithoutPronunciation(_ words: [String]) throws(RecognizerError) -> [String] {
        let unknown = words.filter { !lexicon.known.contains($0) && lexicon.additional[$0] == nil }
        guard !unknown.isEmpty else { return [] }
        return try PronunciationDictionary(path: lexicon.dictionaryPath, words: Set(unknown)).missing(from: unknown)
    }

    // MARK: Grammars

    /// The name of the grammar utterances are recognized with.
    public var activeGrammar: String { grammar.name }

    /// Compiles a grammar and keeps it under its name, replacing a grammar of that name
    /// (the registered vocabulary changed), without reloading the model.
    ///
    /// Words the decoder does not know yet are looked up in the dictionary or taken from
    /// ``Configuration/additionalPronunciations``.
    /// - Parameters:
    ///   - grammar: the grammar; its name is how ``activateGrammar(named:)`` finds it.
    ///   - activate: whether utterances are recognized with it from now on.
    /// - Throws: ``RecognizerError`` when it does not compile or a word has no pronunciation;
    ///   the grammars loaded before stay as they were.
    public func loadGrammar(_ grammar: Grammar, activate: Bool) throws(RecognizerError) {
        guard !grammar.isDictation || lexicon.decoderHasDictionary else {
            throw RecognizerError(.grammarInvalid, "dictation needs a recognizer made for it: load it with Grammar.dictation(words:)")
        }
        // A finite-state grammar being replaced goes first: its lexical trees and the new ones are
        // never held at once (2–4 MB more at the listener's peak when a timer's intents joined
        // its grammar), and the new grammar's words do not rebuild them. It comes back if the
        // new one fails.
        let replacing = grammars[grammar.name]?.finiteState
        if replacing != nil { decoder.removeSearch(Self.searchName(grammar.name)) }
        let compiled: LoadedGrammar
        do {
            compiled = try Self.prepare(grammar, decoder: decoder, lexicon: &lexicon, configuration: configuration, log: log)
        } catch {
            if let replacing { try? decoder.addSearch(replacing, name: Self.searchName(grammar.name)) }
            throw error
        }
        let replaced = grammars.updateValue(compiled, forKey: grammar.name) != nil
        if activate || self.grammar.name == grammar.name {
            self.grammar = compiled
            activeSearch = Self.searchName(grammar.name)
        }
        // The replaced search's lexical trees were freed node by node.
        if replaced {
            Allocator.returnFreedMemory()
            Allocator.releaseFilePages()
        }
    }

    /// Recognizes utterances with a grammar loaded before, from now on.
    ///
    /// - Throws: ``RecognizerError`` `.grammarInvalid` when no grammar has that name.
    public func activateGrammar(named name: String) throws(RecognizerError) {
        guard let compiled = grammars[name] else {
            throw RecognizerError(.grammarInvalid, "no grammar named \(name) is loaded")
        }
        grammar = compiled
        activeSearch = Self.searchName(name)
    }

    /// Pronunciations for words grammars loaded from now on may use (newly registered
    /// vocabulary); they win over the dictionary's. Words already loaded keep theirs.
    public func addPronunciations(_ pronunciations: [String: [String]]) {
        lexicon.additional.merge(pronunciations) { _, new in new }
        replay?.lexicon.additional.merge(pronunciations) { _, new in new }
    }

    private static func searchName(_ grammarName: String) -> String { "heed_grammar:" + grammarName }

    /// The decoder flags of dictation, under the caller's `decoderOptions`.
    ///
    /// The whole dictionary is loaded (the language model's words), and Heed's word beam for
    /// large grammars gives way to PocketSphinx's own. The tree search alone decides (no flat
    /// lexicon pass, no lattice best path): on Debian's LibriVox sentences it made fewer word
    /// errors (15 of 71 rather than 20) in less time; docs/DICTATION.md has the measurement.
    private static func dictationArguments(_ configuration: Configuration) -> [String: String] {
        ["-dict": configuration.dictionaryPath, "-wbeam": "7e-29", "-fwdflat": "no", "-bestpath": "no"]
    }

    /// Loads a grammar as a named search of the decoder, every word of it sayable: a
    /// finite-state grammar with alternate pronunciations drawn in beside each word, or the
    /// language model with the grammar's words added.
    private static func prepare(
        _ grammar: Grammar, decoder: SphinxDecoder, lexicon: inout Lexicon, configuration: Configuration, log: SphinxLogSink
    ) throws(RecognizerError) -> LoadedGrammar {
        let search = searchName(grammar.name)
        switch grammar.source {
        case .languageModel(let words):
            do {
                try decoder.addLanguageModelSearch(path: configuration.languageModelPath, name: search)
            } catch {
                throw Self.withLog(error, log.takeRecentErrors())
            }
            // Added after the model is loaded, so that they join it as unigrams.
            try lexicon.add(Set(words), to: decoder, source: grammar.name, guessMissing: true)
            return LoadedGrammar(name: grammar.name, finiteState: nil)
        case .jsgf, .wordGraph:
            // Words without a pronunciation are Heed's own finding: its message, not PocketSphinx's log.
            let compiled = try finiteState(
                grammar, otherSpeech: grammar.hearsOtherSpeech ? configuration.otherSpeechLoop : nil,
                decoder: decoder, lexicon: &lexicon, log: log)
            // Before the search draws its silence and filler loops into every state.
            let saysOneWord = compiled.saysOneWord
            var openSlots: OpenSlotSearch?
            if let graph = grammar.wordGraph, !grammar.openSlots.isEmpty {
                // The terms' words join the decoder when a second pass says them (``decodeOpenSlots``):
                // adding 22,653 words of 10,000 titles to it took 30% of loading their grammar (callgrind).
                let phones = try lexicon.pronunciations(of: Set(grammar.openSlots.flatMap { $0.terms.joined() }), source: grammar.name)
                openSlots = OpenSlotSearch(slots: grammar.openSlots, graph: graph, pronunciation: { phones[$0] })
            }
            do {
                try decoder.addSearch(compiled, name: search)
            } catch {
                throw Self.withLog(error, log.takeRecentErrors())
            }
            return LoadedGrammar(name: grammar.name, finiteState: compiled, openSlots: openSlots, saysOneWord: saysOneWord, meaning: grammar.meaning)
        }
    }

    /// Compiles a grammar into a finite-state grammar whose every word the decoder can say,
    /// alternate pronunciations drawn in beside each word, and a word graph's sentences
    /// beside `otherSpeech` when it is given.
    private static func finiteState(
        _ grammar: Grammar, otherSpeech: OtherSpeechLoop?, decoder: SphinxDecoder, lexicon: inout Lexicon, log: SphinxLogSink
    ) throws(RecognizerError) -> FiniteStateGrammar {
        switch grammar.source {
        case .languageModel:
            preconditionFailure("a language model is no finite-state grammar")
        case .jsgf(let text):
            let compiled: FiniteStateGrammar
            do {
                compiled = try decoder.compileGrammar(text, name: grammar.name)
            } catch {
                throw Self.withLog(error, log.takeRecentErrors())
            }
            let words = Set(compiled.words.filter { !Self.isFiller($0) })
            try lexicon.add(words, to: decoder, source: grammar.name)
            compiled.addAlternates(lexicon.alternates(of: words))
            return compiled
        case .wordGraph(let sentences):
            let graph = otherSpeech?.beside(sentences) ?? sentences
            let words = Set(graph.arcs.map(\.word)).filter { !Self.isFiller($0) }
            // An open slot's and the other-speech loop's phone words are said as their phone.
            for word in words { if let (_, phone) = OpenSlot.parse(word) { lexicon.additional[word] = [phone] } }
            try lexicon.add(words, to: decoder, source: grammar.name)
            return decoder.finiteStateGrammar(
                graph, name: grammar.name, alternates: lexicon.alternates(of: words),
                probability: { [slotProbability = OpenSlotSearch.arcProbability(in: sentences)] arc in
                    otherSpeech?.probability(of: arc, start: graph.start) ?? slotProbability(arc)
                })
        }
    }

    /// The words the decoder can say, and the names of their other pronunciations.
    struct Lexicon {
        let dictionaryPath: String
        /// Pronunciations that win over the dictionary's: word → ARPAbet phone strings.
        var additional: [String: [String]]
        /// Whether the decoder loaded the whole dictionary itself (dictation): its words are
        /// known without being added, and keep the dictionary's pronunciations.
        let decoderHasDictionary: Bool
        /// Words the decoder has a pronunciation for.
        var known: Set<String> = []
        /// Words with more than one pronunciation → the decoder's names of the others (`read(2)`).
        var alternates: [String: [String]] = [:]

        init(dictionaryPath: String, additional: [String: [String]], decoderHasDictionary: Bool = false) {
            self.dictionaryPath = dictionaryPath
            self.additional = additional
            self.decoderHasDictionary = decoderHasDictionary
        }

        /// The alternates of these words.
        func alternates(of words: Set<String>) -> [String: [String]] {
            alternates.filter { words.contains($0.key) }
        }

        /// The pronunciation ``add(_:to:source:guessMissing:)`` gives each word, as phones, without
        /// giving it to the decoder: the first additional one, else the dictionary's first. Checked
        /// as `add` checks them, so that adding them later does not fail.
        ///
        /// - Throws: ``RecognizerError`` `.wordsMissing` naming the words that have none, or a
        ///   phone the model does not have.
        func pronunciations(of words: Set<String>, source: String) throws(RecognizerError) -> [String: String] {
            let fromDictionary = words.filter { additional[$0] == nil }
            var phones: [String: String] = [:]
            phones.reserveCapacity(words.count)
            for entry in try PronunciationDictionary(path: dictionaryPath, words: fromDictionary).entries where phones[entry.word] == nil {
                phones[entry.word] = entry.phones
            }
            try check(missing: fromDictionary.filter { phones[$0] == nil }.sorted(), additionalOf: words, source: source)
            for word in words { if let first = additional[word]?.first { phones[word] = first } }
            return phones
        }

        /// Throws when a word has no pronunciation, or one of `words`' additional ones uses a phone
        /// the model does not have.
        private func check(missing: [String], additionalOf words: Set<String>, source: String) throws(RecognizerError) {
            guard missing.isEmpty else {
                throw RecognizerError(.wordsMissing, "\(source): no pronunciation in \(dictionaryPath) for: \(missing.joined(separator: ", "))")
            }
            for (word, variants) in additional where words.contains(word) {
                for phones in variants where (try? GraphemeToPhoneme.validatePhones(phones)) == nil {
                    throw RecognizerError(.wordsMissing, "the pronunciation \"\(phones)\" of \"\(word)\" uses a phone the model does not have")
                }
            }
        }

        /// Gives the decoder a pronunciation for each word it does not know yet: the additional
        /// ones first, else the dictionary's.
        ///
        /// - Parameter guessMissing: guess the pronunciation of a word that has none (espeak-ng),
        ///   and leave out the words that cannot be guessed, rather than throw.
        /// - Throws: ``RecognizerError`` `.wordsMissing` naming the words that have none, or a
        ///   phone the model does not have; nothing is added then.
        mutating func add(_ words: Set<String>, to decoder: SphinxDecoder, source: String, guessMissing: Bool = false) throws(RecognizerError) {
            // Not `subtracting`, which goes through `known`: a second pass adds a few words to thousands.
            var new = words.filter { !known.contains($0) }
            if decoderHasDictionary {
                // The dictionary's words are in the decoder already, with their alternates.
                for word in new where decoder.pronunciation(of: word) != nil {
                    known.insert(word)
                    let others = (2...9).map { "\(word)(\($0))" }.prefix { decoder.pronunciation(of: $0) != nil }
                    if !others.isEmpty { alternates[word] = Array(others) }
                }
                new.subtract(known)
            }
            guard !new.isEmpty else { return }
            // With the whole dictionary in the decoder, a word still unknown is not in it.
            let fromDictionary: Set<String> = decoderHasDictionary ? [] : new.filter { additional[$0] == nil }
            let dictionary = try PronunciationDictionary(path: dictionaryPath, words: fromDictionary)
            var missing = decoderHasDictionary ? new.filter { additional[$0] == nil }.sorted() : dictionary.missing(from: fromDictionary).sorted()
            if guessMissing {
                for word in missing {
                    let phones = GraphemeToPhoneme.guess(word)
                    if phones.isEmpty { new.remove(word) } else { additional[word] = [phones.joined(separator: " ")] }
                }
                missing = []
            }
            try check(missing: missing, additionalOf: new, source: source)
            for entry in dictionary.entries {
                guard decoder.addWord(entry.word, phones: entry.phones, update: false) else {
                    throw RecognizerError(.wordsMissing, "\(source): PocketSphinx refused the dictionary's pronunciation of \"\(entry.word)\": \(entry.phones)")
                }
                let base = PocketSphinxRecognizer.baseWord(entry.word)
                if base != entry.word { alternates[base, default: []].append(entry.word) }
            }
            // Alternates are `word(2)`, `word(3)`.
            let additions = additional.filter { new.contains($0.key) }.sorted { $0.key < $1.key }.flatMap { word, variants in
                variants.enumerated().map { index, phones in (word: word, name: index == 0 ? word : "\(word)(\(index + 1))", phones: phones) }
            }
            for (position, addition) in additions.enumerated() {
                // A language model search knows new words only once it is rebuilt (`update`, about
                // 0.1 s): once, with the last word. Grammars are compiled after their words are added.
                let update = decoderHasDictionary && position == additions.count - 1
                guard decoder.addWord(addition.name, phones: addition.phones, update: update) else {
                    throw RecognizerError(
                        .wordsMissing, "\(source): PocketSphinx refused the pronunciation \"\(addition.phones)\" of \"\(addition.word)\"")
                }
                if addition.name != addition.word { alternates[addition.word, default: []].append(addition.name) }
            }
            known.formUnion(new)
        }
    }

    // MARK: Recognition

    /// Recognizes a complete utterance, normalising over all of it (batch CMN).
    public func recognize(_ audio: AudioBuffer) throws(RecognizerError) -> RecognitionResult {
        try startUtterance(sampleRate: audio.sampleRate)
        utterance = audio.samples
        return try finishUtterance()
    }

    /// Recognizes an utterance heard in noise twice, as captured and suppressed
    /// (``RecognitionResult/heardTwice(suppressed:captured:meaning:)``), when the grammar has a point in
    /// noise (``Configuration/inNoiseThreshold``, else the confidence model's). Without one (a
    /// grammar of single words, whose talk is heard alike too) and for dictation, whose words are
    /// not judged, the suppressed audio alone is heard. So is a suppressed hearing below
    /// ``Configuration/secondHearingFloor``, which nothing would take.
    public func recognize(_ captured: AudioBuffer, suppressed: AudioBuffer) throws(RecognizerError) -> RecognitionResult {
        guard !grammar.isDictation, let point = configuration.inNoiseThreshold ?? confidenceModel.inNoisePoint else {
            return try recognize(suppressed)
        }
        let heard = try recognize(suppressed)
        var result = heard.confidence < configuration.secondHearingFloor ? heard : .heardTwice(suppressed: heard, captured: try recognize(captured), meaning: grammar.meaning)
        result.inNoisePoint = point
        return result.judged(at: configuration.rejectionThreshold)
    }

    /// The confidence model of the active grammar.
    private var confidenceModel: ConfidenceModel {
        grammar.saysOneWord ? oneWordConfidence ?? configuration.confidence : configuration.confidence
    }

    /// Starts an utterance fed in chunks with ``process(_:)``.
    ///
    /// - Throws: ``RecognizerError`` `.audioUnsupported` unless `sampleRate` is 16 kHz.
    public func startUtterance(sampleRate: Int = AudioBuffer.recognitionSampleRate) throws(RecognizerError) {
        guard sampleRate == AudioBuffer.recognitionSampleRate else {
            throw RecognizerError(.audioUnsupported, "the en-us model needs \(AudioBuffer.recognitionSampleRate) Hz audio, not \(sampleRate) Hz")
        }
        utterance.removeAll(keepingCapacity: true)
        utteranceCPUSeconds = 0
    }

    /// Feeds a chunk of the current utterance.
    public func process(_ chunk: [Int16]) {
        utterance.append(contentsOf: chunk)
    }

    /// Decodes the utterance fed since ``startUtterance(sampleRate:)``.
    public func finishUtterance() throws(RecognizerError) -> RecognitionResult {
        defer { decoder.takeScores() }
        // The decoder's best path is this utterance's from here on, not the live pass's.
        liveSegments = nil
        let cpuStart = threadCPUSeconds()
        if let silence = silenceResult(cpuStart: cpuStart) { return silence }
        let phoneLoop = startPhoneLoopBeside()
        var lastWords: String?
        let best = try decode(search: activeSearch, lastWords: &lastWords)
        return try result(best: best, lastWords: lastWords, phoneLoop: phoneLoop, cpuStart: cpuStart)
    }

    /// The phone loop over the utterance started on a helper decoder, when one is free
    /// (``PhoneLoopHelpers``); `nil` decodes it on this decoder after the alignment.
    private func startPhoneLoopBeside() -> PhoneLoopHelpers.Job? {
        phoneLoopRanBeside = false
        guard configuration.phoneLoopReference, let helpers = configuration.phoneLoopHelpers, !replaysScores else { return nil }
        let job = helpers.start(utterance, arguments: phoneLoopArguments)
        phoneLoopRanBeside = job != nil
        return job
    }

    /// Whether the alignment and the phone loop are decoded from the scores the grammar pass kept,
    /// batch or live (``ScoreReplay``).
    private var replaysScores: Bool { replay != nil && grammar.saysOneWord }

    /// Whether the grammar pass keeps its senone scores for the alignment and the phone loop
    /// (``ScoreReplay``), and whether it holds any now (those of an utterance not yet measured).
    var keepsScores: Bool { replay != nil }
    var holdsScores: Bool { decoder.holdsScores }

    /// Seconds of audio this recognizer's own decoder has searched (not a helper's or a replay's).
    var secondsSearched: Double { decoder.secondsSearched }

    /// Whether the last result's phone loop was decoded on a helper decoder (``PhoneLoopHelpers``).
    public private(set) var phoneLoopRanBeside = false

    /// The result of an utterance with no frame loud enough to hold speech, or `nil`.
    private func silenceResult(cpuStart: Double) -> RecognitionResult? {
        guard Self.loudestFrameLevel(utterance) < Self.speechLevelFloor else { return nil }
        // Digital silence, or next to it: the dithered decoder would force a short word
        // onto it with middling confidence. There is nothing to hear.
        return nothingHeard(cpuStart: cpuStart)
    }

    /// An empty, rejected result: no command was said.
    private func nothingHeard(cpuStart: Double) -> RecognitionResult {
        RecognitionResult(
            text: "", score: 0, acousticMargin: 0, confidence: 0, rejected: true, alternatives: [], words: [],
            durationSeconds: Double(utterance.count) / Double(AudioBuffer.recognitionSampleRate),
            decodeSeconds: threadCPUSeconds() - cpuStart
        )
    }

    /// The result from the active search's segments (decoded just now, batch or live): the
    /// alternatives, the alignment and phone loop that confidence is measured on.
    /// - Parameter live: the segments come from a live pass, whose frames count from the start of
    ///   the decoder's stream, not of the utterance: the words take the alignment's times.
    /// - Parameter phoneLoop: the phone loop under way beside this decoder, if one is.
    private func result(best: [RawSegment], lastWords: String?, phoneLoop: PhoneLoopHelpers.Job?, cpuStart: Double, live: Bool = false)
        throws(RecognizerError) -> RecognitionResult
    {
        var (best, lastWords, live) = (best, lastWords, live)
        if best.contains(where: { OtherSpeechLoop.isWord($0.word) }) {
            // The loop beside the sentences explained the utterance better than any of them.
            return nothingHeard(cpuStart: cpuStart)
        }
        if let openSlots = grammar.openSlots, let second = try decodeOpenSlots(openSlots, best: best, lastWords: lastWords) {
            // Decoded again over the buffered utterance: its frames count from the utterance's start.
            (best, lastWords, live) = (second.best, second.lastWords, false)
        }
        let hypothesis = decoder.hypothesis()
        let alternatives = hypothesis == nil || configuration.maximumAlternatives == 0 ? [] : decoder.nBest(limit: configuration.maximumAlternatives * 4)
        // A live pass's scores too: computed with the running cepstral mean, as its words were, and
        // nothing is left to decode from the audio once the speaker stops (docs/RECOGNITION.md, "One word").
        let scores = replaysScores ? decoder.takeScores() : nil
        var words = best.filter { !Self.isFiller($0.word) }
        let alignment: [RawSegment]
        if hypothesis == nil, let recovered = recoveredSentence(lastWords) {
            // The search reached a sentence end but kept no exit into PocketSphinx's final
            // state ("Final result does not match the grammar"): take the sentence its best
            // path had completed, with the times of the alignment.
            alignment = try align(recovered, scores: scores)
            words = alignment.filter { !Self.isFiller($0.word) }
        } else {
            alignment = try align(words.map { Self.baseWord($0.word) }, scores: scores)
            let alignedWords = alignment.filter { !Self.isFiller($0.word) }
            if live, alignedWords.count == words.count { words = alignedWords }
        }
        let aligned = alignment.isEmpty ? best : alignment
        var phones: [RawSegment] = []
        var helperCPUSeconds = 0.0
        if let helped = phoneLoop?.wait() {
            (phones, helperCPUSeconds) = helped
        } else if configuration.phoneLoopReference {
            phoneLoopRanBeside = false
            phones = try decode(search: Self.phoneLoopSearch, scores: scores)
        }
        // Both decoders' work, wherever it ran.
        let cpuSeconds = threadCPUSeconds() - cpuStart + helperCPUSeconds

        let text = words.map { Self.baseWord($0.word) }.joined(separator: " ")
        let margin = AcousticMargin(grammar: aligned, phoneLoop: phones)
        let noise = ConfidenceFeatures.noiseLevel(snr: SignalToNoise.estimate(utterance))
        // Per 10 ms decoder frame.
        let energies = AudioBuffer.frameEnergies(utterance, frameLength: AudioBuffer.recognitionSampleRate / Int(Self.framesPerSecond))
        let features = confidenceFeatures(of: words, among: words, margin: margin, phoneLoop: phones, energies: energies, noiseLevel: noise)
        let model = confidenceModel
        let confidence = text.isEmpty ? 0 : model.probability(features.named)
        let segments = words.map { segment in
            WordSegment(
                word: Self.baseWord(segment.word),
                start: Double(segment.startFrame) / Self.framesPerSecond,
                end: Double(segment.endFrame + 1) / Self.framesPerSecond,
                confidence: model.probability(confidenceFeatures(of: [segment], among: words, margin: margin, phoneLoop: phones, energies: energies, noiseLevel: noise).named)
            )
        }
        var result = RecognitionResult(
            text: text,
            score: hypothesis.map { Double($0.score) } ?? 0,
            acousticMargin: features.meanMargin,
            confidence: confidence,
            // Dictation takes any words: only silence is rejected there.
            rejected: text.isEmpty || (!grammar.isDictation && confidence < configuration.rejectionThreshold),
            alternatives: distinctAlternatives(alternatives, excluding: text),
            words: segments,
            durationSeconds: Double(utterance.count) / Double(AudioBuffer.recognitionSampleRate),
            decodeSeconds: cpuSeconds
        )
        result.confidenceFeatures = text.isEmpty ? nil : features.named
        return result
    }

    // MARK: Live decoding

    /// Starts decoding an utterance as it is spoken, with the active grammar. The search uses
    /// the running cepstral mean (``recognize(_:)`` the whole utterance's); `heed eval --live`
    /// measures what that costs in accuracy (docs/RECOGNITION.md).
    public func startLiveDecoding(after words: [String]) throws(RecognizerError) {
        if liveUtterance { stopLiveDecoding() }
        try decoder.selectSearch(activeSearch)
        try decoder.startUtterance()
        utterance.removeAll(keepingCapacity: true)
        utteranceCPUSeconds = 0
        liveUtterance = true
        liveWordsBefore = words
        liveSegments = nil
    }

    /// Feeds the next chunk of the live utterance.
    public func decodeLive(_ chunk: [Int16]) throws(RecognizerError) {
        guard liveUtterance else { return }
        liveSegments = nil
        let cpuStart = threadCPUSeconds()
        utterance.append(contentsOf: chunk)
        try chunk.withUnsafeBufferPointer { (samples) throws(RecognizerError) in
            // In pieces a live stream would bring: sphinxbase's live feature computation
            // (`feat_s2mfc2feat_live`) crashed on seconds of audio given at once, as when the
            // listener restarts the live pass over an utterance whose pause did not end it.
            var start = 0
            while start < samples.count {
                let end = min(samples.count, start + Self.liveBlock)
                try decoder.process(UnsafeBufferPointer(rebasing: samples[start..<end]), wholeUtterance: false)
                start = end
            }
        }
        utteranceCPUSeconds += threadCPUSeconds() - cpuStart
    }

    /// The most samples given to the live search at once: 0.1 s.
    static let liveBlock = AudioBuffer.recognitionSampleRate / 10

    /// Seconds the live pass has heard nothing but silence and noise since its best path became
    /// a whole sentence of the grammar: the frames after the path's last word, however loud they
    /// are. `nil` while the path is no whole sentence, has no word, or goes on with speech the
    /// grammar cannot say (the spoken-noise filler, the loop for other speech); always `nil` for
    /// dictation. The listener ends an utterance on it where a noisy room keeps the endpointer
    /// in speech (docs/LISTEN.md, "Ending an utterance").
    public var liveQuietAfterSentence: Double? {
        guard liveUtterance, !grammar.isDictation, let path = liveWordsThenQuiet(),
            grammar.accepts(path.words) || (!liveWordsBefore.isEmpty && grammar.accepts(liveWordsBefore + path.words))
        else { return nil }
        // The path's last segment ends at the frame just decoded. (A live pass's frames count
        // from the decoder's first utterance, not from this one's start.)
        return Double(path.now - path.lastWordEnd) / Self.framesPerSecond
    }

    /// The live best path ends at the frame just decoded, so silence and noise alone on it are
    /// what the pass heard: a word still being said is not on it yet, which is why the listener
    /// waits for more of this than a first word lasts (docs/LISTEN.md, "A room that grows louder").
    /// Noise is also what the loop for other speech hears as a hiss held longer than a phone of
    /// speech lasts (a fan as a second of "f"), after no more than a click of anything else. A
    /// held vowel or hum is not: a word's first vowel may run on from the noise before it.
    public var liveQuietWithoutWords: Double? {
        guard liveUtterance, !grammar.isDictation, liveWordsBefore.isEmpty else { return nil }
        let segments = currentLiveSegments()
        guard let first = segments.first, let last = segments.last else { return nil }
        var speechLike = 0
        for segment in segments where !Self.isQuietFiller(segment.word) {
            let frames = segment.endFrame - segment.startFrame + 1
            guard OtherSpeechLoop.isWord(segment.word), let phone = OpenSlot.parse(segment.word)?.phone else { return nil }
            let hiss = Self.hisses.contains(phone) && Double(frames) >= Self.heldHiss * Self.framesPerSecond
            if !hiss { speechLike += frames }
        }
        guard Double(speechLike) <= Self.onsetClick * Self.framesPerSecond else { return nil }
        return Double(last.endFrame - first.startFrame + 1) / Self.framesPerSecond
    }

    /// The voiceless fricatives and aspirate: what steady broadband noise (a fan, a tap, air)
    /// sounds like to the loop for other speech.
    static let hisses: Set<String> = ["F", "S", "SH", "TH", "HH"]
    /// Seconds a hiss of the loop lasts when it is a steady noise, not a phone of speech.
    static let heldHiss = 0.4
    /// Seconds of other sounds a noise's onset may bring (the click of a switch, a tap opened).
    static let onsetClick = 0.15

    public var liveSentenceUnfinished: Bool {
        // The speaker stopped after the words: in a noisy room the search may still be putting
        // words to the noise, and that is no pause.
        guard liveUtterance, let finiteState = grammar.finiteState, let path = liveWordsThenQuiet() else { return false }
        // Other talk's loop ends where it likes: only the grammar's words can be unfinished.
        guard !path.words.contains(where: OtherSpeechLoop.isWord) else { return false }
        // After a pause waited out, the words may go on from those before it or begin anew.
        let readings = liveWordsBefore.isEmpty ? [path.words] : [path.words, liveWordsBefore + path.words]
        return !readings.contains(where: grammar.accepts) && readings.contains(where: finiteState.begins)
    }

    /// The live best path's words when only silence and noise fillers follow the last of them:
    /// the words, the frame that word ends at, and the frame just decoded. `nil` without a word,
    /// or when speech the grammar cannot say (the spoken-noise filler) follows it.
    private func liveWordsThenQuiet() -> (words: [String], lastWordEnd: Int, now: Int)? {
        let segments = currentLiveSegments()
        guard let last = segments.lastIndex(where: { !Self.isFiller($0.word) }),
            segments[(last + 1)...].allSatisfy({ Self.isQuietFiller($0.word) }), let now = segments.last?.endFrame
        else { return nil }
        let words = segments[...last].map(\.word).filter { !Self.isFiller($0) }.map(Self.baseWord)
        return (words, segments[last].endFrame, now)
    }

    /// The live utterance's best path so far (the partial hypothesis), possibly empty.
    public var liveHypothesis: String {
        guard liveUtterance else { return "" }
        let words = (decoder.hypothesis()?.text ?? "").split(separator: " ").map(String.init)
        return words.filter { !Self.isFiller($0) && OpenSlot.parse($0) == nil }.map(Self.baseWord).joined(separator: " ")
    }

    /// Ends live decoding and returns its result: the words the live search found while the
    /// audio came (running cepstral mean, not the batch one of ``recognize(_:)``), with
    /// confidence measured on the utterance as for every result. Only the confidence passes
    /// remain to do (for a one-word grammar, only their replays of the live pass's scores), so the
    /// result is ready soon after the last chunk (a hand-off's text).
    /// - Throws: ``RecognizerError`` when no live utterance runs or the decoder fails.
    public func finishLiveDecoding() throws(RecognizerError) -> RecognitionResult {
        guard liveUtterance else { throw RecognizerError(.decodeFailed, "no live utterance to finish") }
        defer { decoder.takeScores() }
        let cpuStart = threadCPUSeconds()
        let lastWords = decoder.hypothesis()?.text
        liveUtterance = false
        try decoder.endUtterance()
        if let silence = silenceResult(cpuStart: cpuStart) { return silence }
        let phoneLoop = startPhoneLoopBeside()
        var result = try self.result(best: decoder.segments(), lastWords: lastWords, phoneLoop: phoneLoop, cpuStart: cpuStart, live: true)
        result.decodeSeconds += utteranceCPUSeconds
        return result
    }

    /// The live best path's segments at the frame last decoded, read from the decoder once a chunk.
    private func currentLiveSegments() -> [RawSegment] {
        if let liveSegments { return liveSegments }
        let segments = decoder.segments()
        liveSegments = segments
        return segments
    }

    /// Ends live decoding, discarding its result.
    public func stopLiveDecoding() {
        guard liveUtterance else { return }
        liveUtterance = false
        try? decoder.endUtterance()
        decoder.takeScores()
    }

    /// The RMS level below which no 20 ms frame of an utterance holds speech (-60 dBFS).
    static let speechLevelFloor = 32.0

    /// The RMS level of the loudest 20 ms frame.
    static func loudestFrameLevel(_ samples: [Int16]) -> Double {
        (AudioBuffer.frameEnergies(samples, frameLength: AudioBuffer.recognitionSampleRate / 50).max() ?? 0).squareRoot()
    }

    /// The second pass of a grammar with open slots (``OpenSlotSearch``), when the first heard
    /// phones in a slot: the utterance decoded again with the closest terms there. `nil` otherwise.
    private func decodeOpenSlots(_ openSlots: OpenSlotSearch, best: [RawSegment], lastWords: String?) throws(RecognizerError)
        -> (best: [RawSegment], lastWords: String?)?
    {
        // Without a whole sentence, what the search had heard at the last frame.
        let sentence = decoder.hypothesis() != nil
        let heard = (sentence ? best.map(\.word) : (lastWords ?? "").split(separator: " ").map(String.init))
            .filter { !Self.isFiller($0) }.map(Self.baseWord)
        guard OpenSlotSearch.saysSlot(heard) else { return nil }
        let graph = openSlots.secondPass(after: heard, sentence: sentence)
        // The last utterance's second pass goes first: PocketSphinx builds a new search before it
        // frees the one it replaces, and a second pass over the whole grammar holds 13 MB of
        // transition tables and lexical trees with 10,000 titles.
        decoder.removeSearch(Self.openSlotSearch)
        let words = Set(graph.arcs.map(\.word)).filter { !Self.isFiller($0) }
        try lexicon.add(words, to: decoder, source: grammar.name)
        let search = decoder.finiteStateGrammar(graph, name: Self.openSlotSearch, alternates: lexicon.alternates(of: words))
        try decoder.addSearch(search, name: Self.openSlotSearch)
        var secondLastWords: String?
        let segments = try decode(search: Self.openSlotSearch, lastWords: &secondLastWords)
        return (segments, secondLastWords)
    }

    /// Aligns the utterance with exactly these words and returns the segments.
    ///
    /// The grammar pass's acoustic scores depend on the grammar around the words (a large
    /// grammar scored the same words on the same frames far lower than a small one), so
    /// confidence is measured on this forced alignment, which is the same for the same words
    /// whatever the grammar.
    /// - Parameter scores: the utterance's senone scores to decode from (``ScoreReplay``); `nil`
    ///   decodes the audio.
    private func align(_ words: [String], scores: SenoneScores?) throws(RecognizerError) -> [RawSegment] {
        guard !words.isEmpty else { return [] }
        let arcs = words.enumerated().map { WordGraph.Arc(from: $0.offset, to: $0.offset + 1, word: $0.element) }
        let chain = WordGraph(stateCount: words.count + 1, start: 0, finals: [words.count], arcs: arcs)
        let replaying = scores == nil ? nil : replay
        if let replaying {
            // Words of a grammar loaded after the replaying decoder was made.
            try replaying.lexicon.add(Set(words), to: replaying.decoder, source: grammar.name)
        }
        let target = replaying?.decoder ?? decoder
        let alignment = target.finiteStateGrammar(
            chain, name: Self.alignmentSearch, alternates: (replaying?.lexicon ?? lexicon).alternates(of: Set(words)))
        try target.addSearch(alignment, name: Self.alignmentSearch)
        let segments = try decode(search: Self.alignmentSearch, scores: scores)
        // Should the alignment find no path, fall back to the grammar pass's own segments.
        return segments.contains { !Self.isFiller($0.word) } ? segments : []
    }

    /// Runs one of the measurement's searches over the utterance's senone scores (``ScoreReplay``),
    /// or over its audio when `scores` is `nil`.
    private func decode(search: String, scores: SenoneScores?) throws(RecognizerError) -> [RawSegment] {
        guard let scores, let replay else { return try decode(search: search) }
        return try replay.decoder.decodeScores(scores, search: search)
    }

    /// Runs one search over the buffered utterance and returns its segments.
    private func decode(search: String) throws(RecognizerError) -> [RawSegment] {
        var ignored: String?
        return try decode(search: search, lastWords: &ignored)
    }

    /// Runs one search; `lastWords` gets the best path at the last frame before the search
    /// is finalised (whatever grammar state it is in).
    private func decode(search: String, lastWords: inout String?) throws(RecognizerError) -> [RawSegment] {
        stopLiveDecoding()
        let decoded = try decoder.decodeUtterance(utterance, search: search)
        lastWords = decoded.lastHypothesis
        return decoded.segments
    }

    /// The words of the last frame's best path when they are a whole sentence of the grammar.
    private func recoveredSentence(_ text: String?) -> [String]? {
        let words = (text ?? "").split(separator: " ").map(String.init).filter { !Self.isFiller($0) }.map(Self.baseWord)
        return !words.isEmpty && grammar.accepts(words) ? words : nil
    }

    /// n-best hypotheses that the grammar really allows, once each, best first.
    private func distinctAlternatives(_ raw: [(text: String, score: Int32)], excluding best: String) -> [Alternative] {
        var seen: Set<String> = [best]
        var result: [Alternative] = []
        for candidate in raw.sorted(by: { $0.score > $1.score }) {
            let words = candidate.text.split(separator: " ").map(String.init).filter { !Self.isFiller($0) }
            let text = words.map(Self.baseWord).joined(separator: " ")
            guard !text.isEmpty, seen.insert(text).inserted, grammar.accepts(words) else { continue }
            result.append(Alternative(text: text, score: Double(candidate.score)))
            if result.count == configuration.maximumAlternatives { break }
        }
        return result
    }

    /// The words that have no entry in a pronunciation dictionary, in the order given.
    ///
    /// - Throws: ``RecognizerError`` `.decoderInitFailed` when the dictionary cannot be read.
    public static func wordsWithoutPronunciation(
        _ words: [String],
        dictionaryPath: String = Configuration.default.dictionaryPath,
        additionalPronunciations: [String: [String]] = [:]
    ) throws(RecognizerError) -> [String] {
        let unknown = words.filter { additionalPronunciations[$0] == nil }
        return try PronunciationDictionary(path: dictionaryPath, words: Set(unknown)).missing(from: unknown)
    }

    /// Whether the grammar accepts `text` (words separated by spaces).
    public func accepts(_ text: String) -> Bool {
        grammar.accepts(text.split(separator: " ").map(String.init))
    }

    // MARK: Words

    /// Whether a decoder word is silence, a filler or a null transition rather than speech.
    static func isFiller(_ word: String) -> Bool {
        word.hasPrefix("<") || word.hasPrefix("[") || word.hasPrefix("++") || word == "(NULL)"
    }

    /// Whether a filler stands for silence or noise, not for speech outside the dictionary
    /// (`[SPEECH]`, the en-us model's spoken noise).
    static func isQuietFiller(_ word: String) -> Bool {
        isFiller(word) && word != "[SPEECH]"
    }

    /// `read(2)` → `read`.
    static func baseWord(_ word: String) -> String {
        guard word.hasSuffix(")"), let open = word.lastIndex(of: "(") else { return word }
        return String(word[..<open])
    }

    private static func withLog(_ error: RecognizerError, _ lines: [String]) -> RecognizerError {
        guard !lines.isEmpty else { return error }
        var error = error
        error.message += ": " + lines.joined(separator: "; ")
        return error
    }

    // MARK: Confidence

    /// The confidence features of `words` (all of the utterance's, or one of them for a
    /// word's confidence); the utterance-wide ones come from `all`.
    private func confidenceFeatures(
        of words: [RawSegment], among all: [RawSegment], margin: AcousticMargin, phoneLoop: [RawSegment], energies: [Double],
        noiseLevel: Double
    ) -> ConfidenceFeatures {
        let spans = words.map { $0.startFrame..<($0.endFrame + 1) }
        let wordFrames = spans.reduce(0) { $0 + $1.count }
        let phones = { (segments: [RawSegment]) in
            segments.reduce(0) { count, word in count + max(1, self.decoder.pronunciation(of: word.word)?.split(separator: " ").count ?? 1) }
        }
        let phoneCount = phones(words)
        // Phone-loop phones (silences and noises excluded) whose middle frame falls in the words'
        // frames, and those that fall outside every word of the utterance: speech the words leave out.
        let allSpans = all.map { $0.startFrame..<($0.endFrame + 1) }
        let spoken = phoneLoop.filter { !Self.isFiller($0.word) && !$0.word.hasPrefix("+") && $0.word != "SIL" }.map { ($0.startFrame + $0.endFrame) / 2 }
        let loopPhones = spoken.filter { middle in spans.contains { $0.contains(middle) } }.count
        let outsidePhones = spoken.filter { middle in !allSpans.contains { $0.contains(middle) } }.count
        let totalFrames = max(1, utterance.count / (AudioBuffer.recognitionSampleRate / Int(Self.framesPerSecond)))
        return ConfidenceFeatures(
            meanMargin: margin.perFrame(over: spans),
            minimumWordMargin: spans.map { margin.perFrame(over: [$0]) }.min() ?? 0,
            allFramesMargin: margin.overAllFrames,
            lowMarginFraction: margin.fraction(below: ConfidenceFeatures.lowMargin, over: spans),
            logFramesPerPhone: Foundation.log(Double(max(1, wordFrames)) / Double(max(1, phoneCount))),
            logPhoneRatio: Foundation.log(Double(max(1, loopPhones)) / Double(max(1, phoneCount))),
            logWordCount: Foundation.log(Double(max(1, words.count))),
            logOutsidePhones: Foundation.log(Double(1 + outsidePhones)),
            speechFraction: Double(allSpans.reduce(0) { $0 + $1.count }) / Double(totalFrames),
            outsidePhoneRatio: Double(outsidePhones) / Double(max(1, phones(all))),
            loudMargin: margin.perFrame(overLoudest: 0.5, of: spans, energies: energies),
            noiseLevel: noiseLevel
        )
    }
}

/// A grammar loaded as a named search of the decoder.
private struct LoadedGrammar {
    var name: String
    /// The compiled grammar; `nil` for dictation's language model.
    var finiteState: FiniteStateGrammar?
    /// The terms of its open slots, when it has any.
    var openSlots: OpenSlotSearch? = nil

    /// Whether every sentence is one word.
    var saysOneWord = false
    /// What its sentences mean (``HeedCore/Grammar/meaning``).
    var meaning: SentenceMeaning? = nil

    var isDictation: Bool { finiteState == nil }

    /// Whether the grammar accepts this word sequence; a language model accepts every one.
    func accepts(_ words: [String]) -> Bool {
        guard let finiteState else { return true }
        // The other-speech loop is in the compiled grammar, but its paths are no sentences.
        guard !words.contains(where: OtherSpeechLoop.isWord) else { return false }
        return finiteState.accepts(words) || openSlots?.accepts(words) == true
    }
}

/// CPU time of the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
