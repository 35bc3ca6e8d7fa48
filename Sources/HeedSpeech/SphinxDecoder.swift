// Every raw `ps_*`, `cmd_ln_*`, `jsgf_*`, `fsg_*` and `ngram_*` call of Heed lives in this file.
// It is the seam between Swift and the PocketSphinx 0.8+5prealpha API that Debian
// ships (`ps_init(cmd_ln_t*)`); a port to the 5.x API changes this file only.

internal import CHeedShims
internal import Glibc
internal import CPocketSphinx
import HeedCore

/// A word segment as the decoder reports it, in frames (100 frames a second).
struct RawSegment: Equatable, Sendable {
    var word: String
    var startFrame: Int
    var endFrame: Int
    /// Acoustic score, in the decoder's log base (1.0001), not normalised.
    var acousticScore: Int32
}

/// The senone scores of one utterance as a decoder wrote them (``SphinxDecoder/takeScores()``), in
/// memory; freed with this object.
final class SenoneScores {
    fileprivate let bytes: UnsafeMutablePointer<CChar>
    let count: Int

    fileprivate init(bytes: UnsafeMutablePointer<CChar>, count: Int) {
        (self.bytes, self.count) = (bytes, count)
    }

    deinit { free(bytes) }
}

/// One PocketSphinx decoder: the acoustic model, a dictionary and named searches.
///
/// Not `Sendable`: PocketSphinx objects are not thread-safe, so one owner drives it.
final class SphinxDecoder {
    private let raw: OpaquePointer
    /// The seed of the dither (`-dither yes` with `-seed`), done here rather than by sphinxbase.
    private let ditherSeed: UInt64?
    /// The dither of the current utterance, started afresh from the seed by each utterance.
    private var dither: SeededGenerator?
    /// The cepstral mean normalisation the model asks for (`-cmn` in its `feat.params`: the whole
    /// utterance's mean for en-us). At a decoder's first live frame sphinxbase switches it to the
    /// running mean for good (`feat_cmn`); each whole utterance gets the model's own back
    /// (``feed(_:_:_:)``).
    private let wholeUtteranceMean: cmn_type_t
    /// Whether Heed's evaluator scores the acoustic model (`-scoring heed` on a model it takes).
    let scoresWithHeed: Bool
    /// Whether each utterance's senone scores are kept in memory for another decoder to search
    /// (`-keepscores yes`, ``takeScores()``).
    let keepsScores: Bool
    /// The in-memory stream (`open_memstream`) the current utterance's senone scores go to: where
    /// its bytes are and how many, updated when the stream is flushed or closed. `nil` unless
    /// ``keepsScores``.
    private let scoreBytes: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    private let scoreCount: UnsafeMutablePointer<Int>?
    /// Whether the decoder writes to that stream (from an utterance's start until they are taken).
    private var writingScores = false

    /// Creates a decoder from command-line style arguments (`["-hmm": path, ...]`).
    ///
    /// `-dither yes` is carried out here: sphinxbase dithers with one process-wide random
    /// generator (`genrand`), reseeded by every decoder it creates, so a result depended on
    /// what every decoder of the process had decoded before, and two decoders on two threads
    /// shared it unsafely. Here each decoder starts each utterance from `-seed`, whatever the
    /// other decoders did and on whichever thread. (A live pass still leaves a little in the
    /// decoder that its next utterances feel: docs/RECOGNITION.md, "The phone loop beside the
    /// grammar pass".)
    ///
    /// `-scoring heed` (the default) gives the decoder Heed's evaluator of the acoustic model
    /// (`heed_scoring_install`, CHeedShims/gaussians.c): PocketSphinx's senone scores, bit for bit,
    /// at a fraction of the CPU. `-scoring pocketsphinx` keeps PocketSphinx's own, for comparison;
    /// `-scoring heed-baseline` runs Heed's evaluator without its AVX2 code, as a CPU without AVX2
    /// does. A model the evaluator cannot take keeps PocketSphinx's own either way.
    ///
    /// `-keepscores yes` keeps each utterance's senone scores in memory (``takeScores()``) for a
    /// decoder that never hears the audio to search (``decodeScores(_:search:)``), where
    /// `-senlogdir` would write them to a file; ``keepsScores`` says whether it does.
    /// - Parameter arguments: decoder flags without duplicates; `cmd_ln_parse_r` copies them.
    /// - Throws: ``RecognizerError`` with code `.decoderInitFailed` when PocketSphinx refuses.
    init(arguments: [String: String]) throws(RecognizerError) {
        var arguments = arguments
        if arguments["-dither"] == "yes" {
            ditherSeed = arguments["-seed"].flatMap(UInt64.init) ?? 0
            arguments["-dither"] = "no"
        } else {
            ditherSeed = nil
        }
        let scoring = try Self.takeHeedFlag("-scoring", from: &arguments, values: ["heed", "pocketsphinx", "heed-baseline"])
        let keepScores = try Self.takeHeedFlag("-keepscores", from: &arguments, values: ["no", "yes"])
        let flat = arguments.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
        let config: OpaquePointer? = withCStrings(["heed"] + flat) { argv in
            cmd_ln_parse_r(nil, ps_args(), Int32(argv.count), argv.baseAddress, 1)
        }
        guard let config else {
            throw RecognizerError(.decoderInitFailed, "PocketSphinx rejected the decoder settings \(flat.joined(separator: " "))")
        }
        // `ps_init` retains the configuration; release ours either way.
        defer { cmd_ln_free_r(config) }
        guard let decoder = ps_init(config) else {
            throw RecognizerError(.decoderInitFailed, "PocketSphinx could not load the acoustic model (see --verbose for its log)")
        }
        self.raw = decoder
        scoresWithHeed = scoring != "pocketsphinx" && heed_scoring_install(UnsafeMutableRawPointer(decoder), scoring == "heed" ? 1 : 0) == 0
        wholeUtteranceMean = ps_get_feat(decoder)?.pointee.cmn ?? CMN_BATCH
        keepsScores = keepScores == "yes" && heed_write_scores(UnsafeMutableRawPointer(decoder), nil) == 0
        scoreBytes = keepsScores ? .allocate(capacity: 1) : nil
        scoreBytes?.initialize(to: nil)
        scoreCount = keepsScores ? .allocate(capacity: 1) : nil
        scoreCount?.initialize(to: 0)
    }

    /// Takes one of Heed's own flags out of the flags PocketSphinx will see: its value, the first
    /// of `values` when it is not given.
    /// - Throws: ``RecognizerError`` `.decoderInitFailed` for a value not in `values`.
    private static func takeHeedFlag(_ flag: String, from arguments: inout [String: String], values: [String]) throws(RecognizerError) -> String {
        let value = arguments.removeValue(forKey: flag) ?? values[0]
        guard values.contains(value) else {
            let choices = values.dropLast().joined(separator: ", ") + " or " + values[values.count - 1]
            throw RecognizerError(.decoderInitFailed, "\(flag.dropFirst()) must be \(choices), not \(value)")
        }
        return value
    }

    deinit {
        // PocketSphinx closes the stream of scores it still writes to, which sets the pointers.
        ps_free(raw)
        free(scoreBytes?.pointee)
        scoreBytes?.deallocate()
        scoreCount?.deallocate()
    }

    // MARK: Dictionary

    /// Adds a word with its pronunciation.
    ///
    /// The corresponding C function is `ps_add_word`.
    /// - Returns: `false` when the word exists already or a phone is unknown to the model.
    @discardableResult
    func addWord(_ word: String, phones: String, update: Bool) -> Bool {
        ps_add_word(raw, word, phones, update ? 1 : 0) >= 0
    }

    /// The pronunciation of a word in the decoder's dictionary, or `nil`.
    func pronunciation(of word: String) -> String? {
        guard let phones = ps_lookup_word(raw, word) else { return nil }
        defer { free(phones) }
        return String(cString: phones)
    }

    // MARK: Searches

    /// Compiles a JSGF grammar into a finite-state grammar.
    ///
    /// - Parameter text: the JSGF source. With several public rules, all of them are accepted.
    /// - Throws: ``RecognizerError`` `.grammarInvalid` with the parser's message.
    func compileGrammar(_ text: String, name: String) throws(RecognizerError) -> FiniteStateGrammar {
        var source = text
        var publicRules = try withParsedGrammar(text, name: name) { rules in rules.filter(\.isPublic).map(\.name) }
        guard !publicRules.isEmpty else {
            throw RecognizerError(.grammarInvalid, "grammar \(name) has no public rule")
        }
        if publicRules.count > 1 {
            // Accept every public rule, as a reader of the grammar expects.
            let union = "heed_any_public_rule"
            source += "\npublic <\(union)> = " + publicRules.sorted().map { "<\($0)>" }.joined(separator: " | ") + ";\n"
            publicRules = [union]
        }
        let top = publicRules[0]
        let languageWeight = Float(cmd_ln_float_r(ps_get_config(raw), "-lw"))
        let logMath = ps_get_logmath(raw)
        let fsg = try withParsedGrammar(source, name: name) { (jsgf, rules) throws(RecognizerError) in
            // `jsgf_get_rule` does not find rules in this version: take the rule from the iteration.
            guard let rule = rules.first(where: { $0.name == top }),
                let fsg = jsgf_build_fsg(jsgf, rule.pointer, logMath, languageWeight)
            else {
                throw RecognizerError(.grammarInvalid, "rule <\(top)> of grammar \(name) cannot be compiled")
            }
            return fsg
        }
        return FiniteStateGrammar(name: name, model: fsg)
    }

    /// Builds a finite-state grammar from a word graph, without null transitions.
    ///
    /// PocketSphinx's grammar has one final state: it is added, and every arc into a final
    /// state is also drawn into it. All transitions have probability 1, so no sentence is
    /// penalised for how many others the grammar allows.
    /// The corresponding C functions are `fsg_model_init`, `fsg_model_word_add` and `fsg_model_trans_add`.
    /// - Parameters:
    ///   - alternates: word → the names of its other pronunciations (`read(2)`), drawn
    ///     as arcs beside the word's.
    ///   - probability: The probability of taking an arc, for arcs that are not to be free.
    func finiteStateGrammar(
        _ graph: WordGraph, name: String, alternates: [String: [String]] = [:], probability: (WordGraph.Arc) -> Double = { _ in 1 }
    ) -> FiniteStateGrammar {
        let languageWeight = Float(cmd_ln_float_r(ps_get_config(raw), "-lw"))
        let final = Int32(graph.stateCount)
        guard let model = fsg_model_init(name, ps_get_logmath(raw), languageWeight, final + 1) else {
            preconditionFailure("fsg_model_init failed: out of memory")
        }
        var vocabulary: [String] = []
        var wordIDs: [String: Int32] = [:]
        func id(_ word: String) -> Int32 {
            if let id = wordIDs[word] { return id }
            let id = Int32(vocabulary.count)
            vocabulary.append(word)
            wordIDs[word] = id
            return id
        }
        var transitions: [(from: Int32, to: Int32, logProbability: Int32, word: Int32)] = []
        for arc in graph.arcs {
            let chance = probability(arc)
            let logProbability = chance == 1 ? 0 : Int32(Float(logmath_log(ps_get_logmath(raw), chance)) * languageWeight)
            for word in [arc.word] + (alternates[arc.word] ?? []) {
                let word = id(word)
                transitions.append((Int32(arc.from), Int32(arc.to), logProbability, word))
                if graph.finals.contains(arc.to) { transitions.append((Int32(arc.from), final, logProbability, word)) }
            }
        }
        Self.setVocabulary(of: model, to: vocabulary)
        for transition in transitions {
            fsg_model_trans_add(model, transition.from, transition.to, transition.logProbability, transition.word)
        }
        model.pointee.start_state = Int32(graph.start)
        model.pointee.final_state = final
        return FiniteStateGrammar(name: name, model: model)
    }

    /// Writes a new grammar's vocabulary at once. `fsg_model_word_add` looks each word up in
    /// the vocabulary first, one by one: 20,000 words (10,000 registered names) took about a
    /// second that way. The array and strings are `malloc`ed, as sphinxbase frees them.
    private static func setVocabulary(of model: UnsafeMutablePointer<fsg_model_t>, to words: [String]) {
        precondition(model.pointee.n_word == 0, "the vocabulary of a new grammar only")
        free(model.pointee.vocab)
        let count = max(words.count, 1)
        guard let array = calloc(count, MemoryLayout<UnsafeMutablePointer<CChar>?>.stride) else {
            preconditionFailure("out of memory")
        }
        let vocab = array.bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: count)
        for (index, word) in words.enumerated() { vocab[index] = strdup(word) }
        model.pointee.vocab = vocab
        model.pointee.n_word = Int32(words.count)
        model.pointee.n_word_alloc = Int32(count)
    }

    private struct Rule {
        var name: String
        var isPublic: Bool
        var pointer: OpaquePointer
    }

    /// Parses JSGF text and lists its rules for `body`; the grammar is freed afterwards.
    private func withParsedGrammar<Result>(
        _ text: String,
        name: String,
        _ body: (OpaquePointer, [Rule]) throws(RecognizerError) -> Result
    ) throws(RecognizerError) -> Result {
        guard let jsgf = jsgf_parse_string(text, nil) else {
            throw RecognizerError(.grammarInvalid, "grammar \(name) does not parse as JSGF")
        }
        defer { jsgf_grammar_free(jsgf) }
        var rules: [Rule] = []
        var iterator = jsgf_rule_iter(jsgf)
        while let current = iterator {
            if let value = current.pointee.ent?.pointee.val {
                let rule = OpaquePointer(value)
                rules.append(Rule(name: bareRuleName(String(cString: jsgf_rule_name(rule))), isPublic: jsgf_rule_public(rule) != 0, pointer: rule))
            }
            iterator = hash_table_iter_next(current)
        }
        return try body(jsgf, rules)
    }

    private func withParsedGrammar<Result>(
        _ text: String,
        name: String,
        _ body: ([Rule]) -> Result
    ) throws(RecognizerError) -> Result {
        try withParsedGrammar(text, name: name) { _, rules in body(rules) }
    }

    /// Turns `<grammar.rule>` into `rule`.
    private func bareRuleName(_ name: String) -> String {
        var bare = name
        if bare.hasPrefix("<") { bare.removeFirst() }
        if bare.hasSuffix(">") { bare.removeLast() }
        if let dot = bare.lastIndex(of: ".") { bare = String(bare[bare.index(after: dot)...]) }
        return bare
    }

    /// Makes `grammar` a named search. The decoder takes its own reference.
    ///
    /// The corresponding C function is `ps_set_fsg`.
    func addSearch(_ grammar: FiniteStateGrammar, name: String) throws(RecognizerError) {
        guard ps_set_fsg(raw, name, grammar.model) == 0 else {
            throw RecognizerError(.grammarInvalid, "PocketSphinx refused grammar \(grammar.name) (see --verbose for its log)")
        }
    }

    /// Removes the named search and frees its lexical trees; `false` when there is none.
    ///
    /// The corresponding C function is `ps_unset_search`.
    @discardableResult
    func removeSearch(_ name: String) -> Bool {
        ps_unset_search(raw, name) == 0
    }

    /// Adds a context-independent phone loop as the named search (needs `-allphone_ci yes`).
    ///
    /// The corresponding C function is `ps_set_allphone`.
    func addPhoneLoopSearch(name: String) throws(RecognizerError) {
        guard ps_set_allphone(raw, name, nil) == 0 else {
            throw RecognizerError(.decoderInitFailed, "PocketSphinx could not create the phone loop search")
        }
    }

    /// Adds a statistical language model (an n-gram model: ARPA text, or sphinxbase's binary
    /// `.lm.bin`) as the named search: open-vocabulary decoding over the words it has.
    ///
    /// Words added later with ``addWord(_:phones:update:)`` join the model as unigrams.
    /// The corresponding C function is `ps_set_lm_file`.
    /// - Throws: ``RecognizerError`` `.grammarInvalid` when the model cannot be read.
    func addLanguageModelSearch(path: String, name: String) throws(RecognizerError) {
        guard ps_set_lm_file(raw, name, path) == 0 else {
            throw RecognizerError(.grammarInvalid, "PocketSphinx could not load the language model \(path) (see --verbose for its log)")
        }
    }

    /// Selects the search that the next utterance uses.
    func selectSearch(_ name: String) throws(RecognizerError) {
        guard ps_set_search(raw, name) == 0 else {
            throw RecognizerError(.grammarInvalid, "no search named \(name)")
        }
    }

    // MARK: Decoding

    /// Resets frame counting and speech detection for a new stream.
    func startStream() { ps_start_stream(raw) }

    /// Decodes one whole utterance with the named search (batch cepstral mean): its segments, and
    /// the best path at the last frame before the search was finalised (whatever grammar state
    /// it is in).
    func decodeUtterance(_ samples: [Int16], search: String) throws(RecognizerError) -> (segments: [RawSegment], lastHypothesis: String?) {
        try selectSearch(search)
        startStream()
        try startUtterance()
        try samples.withUnsafeBufferPointer { (buffer) throws(RecognizerError) in
            try process(buffer, wholeUtterance: true)
        }
        let lastHypothesis = hypothesis()?.text
        try endUtterance()
        return (segments(), lastHypothesis)
    }

    /// Decodes with the named search over the senone scores another decoder kept of one
    /// utterance (``takeScores()``), instead of over audio: no acoustic scoring, the same scores.
    ///
    /// This decoder must never decode a whole utterance from audio: in this PocketSphinx such a
    /// decode grows the feature buffer but not the array of frame positions a replay writes into
    /// (`acmod.c`), and the replay then writes past its end. The corresponding C function is
    /// `ps_decode_senscr`.
    func decodeScores(_ scores: SenoneScores, search: String) throws(RecognizerError) -> [RawSegment] {
        try selectSearch(search)
        guard let file = fmemopen(scores.bytes, scores.count, "rb") else {
            throw RecognizerError(.decodeFailed, "cannot read the senone scores: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        guard ps_decode_senscr(raw, file) >= 0 else {
            throw RecognizerError(.decodeFailed, "PocketSphinx could not decode the senone scores")
        }
        return segments()
    }

    /// The senone scores of the utterance decoded last, when this decoder ``keepsScores``: taken,
    /// so that the decoder holds none afterwards (dropped, when the result is not used). `nil`
    /// without them.
    @discardableResult
    func takeScores() -> SenoneScores? {
        guard let scoreBytes, let scoreCount else { return nil }
        // Closes the stream, should the utterance still be open; its pointers are then final.
        heed_write_scores(UnsafeMutableRawPointer(raw), nil)
        writingScores = false
        defer { (scoreBytes.pointee, scoreCount.pointee) = (nil, 0) }
        return scoreBytes.pointee.map { SenoneScores(bytes: $0, count: scoreCount.pointee) }
    }

    /// Whether this decoder holds senone scores (``keepsScores``): those of an utterance not yet
    /// taken with ``takeScores()``.
    var holdsScores: Bool { writingScores || scoreBytes?.pointee != nil }

    func startUtterance() throws(RecognizerError) {
        dither = ditherSeed.map(SeededGenerator.init(seed:))
        guard ps_start_utt(raw) == 0 else {
            throw RecognizerError(.decodeFailed, "PocketSphinx could not start an utterance")
        }
        if let scoreBytes, let scoreCount {
            // The last utterance's scores go; this one's go to a new stream, in memory only.
            takeScores()
            // (Should its header not be written, the decoder holds the stream all the same.)
            guard let stream = open_memstream(scoreBytes, scoreCount) else { return }
            writingScores = true
            if heed_write_scores(UnsafeMutableRawPointer(raw), stream) != 0 { takeScores() }
        }
    }

    /// Feeds samples. With `wholeUtterance`, `samples` is the complete utterance
    /// (batch cepstral mean normalisation).
    func process(_ samples: UnsafeBufferPointer<Int16>, wholeUtterance: Bool) throws(RecognizerError) {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        if dither != nil {
            let dithered = applyDither(samples)
            try dithered.withUnsafeBufferPointer { buffer throws(RecognizerError) in try feed(buffer.baseAddress!, buffer.count, wholeUtterance) }
        } else {
            try feed(base, samples.count, wholeUtterance)
        }
    }

    /// sphinxbase's dither: +1 on a quarter of the samples, at random.
    private func applyDither(_ samples: UnsafeBufferPointer<Int16>) -> [Int16] {
        var dithered = Array(samples)
        for index in dithered.indices where dither!.next() % 4 == 0 && dithered[index] < .max { dithered[index] += 1 }
        return dithered
    }

    /// The cepstra of one utterance as this decoder's front end computes them (the model's
    /// feat.params, dithered like ``process(_:wholeUtterance:)``): the features sphinxtrain's
    /// tools read. Frame after frame, `coefficients` values each.
    func cepstra(of samples: [Int16]) -> (coefficients: Int, values: [Float]) {
        guard let frontEnd = ps_get_fe(raw) else { return (0, []) }
        let size = Int(fe_get_output_size(frontEnd))
        dither = ditherSeed.map(SeededGenerator.init(seed:))
        let input = samples.withUnsafeBufferPointer { dither == nil ? Array($0) : applyDither($0) }
        let capacity = 256
        var block = [Float](repeating: 0, count: capacity * size)
        var values: [Float] = []
        fe_start_utt(frontEnd)
        block.withUnsafeMutableBufferPointer { storage in
            var rows: [UnsafeMutablePointer<Float>?] = (0..<capacity).map { storage.baseAddress! + $0 * size }
            input.withUnsafeBufferPointer { buffer in
                var next: UnsafePointer<Int16>? = buffer.baseAddress
                var left = buffer.count
                while left > 0 {
                    var frames = Int32(capacity)
                    let before = left
                    guard fe_process_frames(frontEnd, &next, &left, &rows, &frames, nil) >= 0 else { break }
                    values += storage.prefix(Int(frames) * size)
                    if frames == 0 && left == before { break }
                }
            }
            var last: Int32 = 0
            fe_end_utt(frontEnd, storage.baseAddress!, &last)
            values += storage.prefix(Int(last) * size)
        }
        return (size, values)
    }

    private func feed(_ base: UnsafePointer<Int16>, _ count: Int, _ wholeUtterance: Bool) throws(RecognizerError) {
        // A whole utterance is normalised by its own mean, which sphinxbase keeps in the running
        // mean's place: the live passes' mean is put back after it, as if it had not been decoded.
        let running = wholeUtterance ? normaliseByTheWholeUtterance() : nil
        defer { if let running { restoreRunningMean(running) } }
        guard ps_process_raw(raw, base, count, 0, wholeUtterance ? 1 : 0) >= 0 else {
            throw RecognizerError(.decodeFailed, "PocketSphinx failed to process audio")
        }
    }

    /// Sets the model's own normalisation for the next whole utterance; returns the running mean it
    /// will overwrite.
    private func normaliseByTheWholeUtterance() -> [mfcc_t] {
        guard let feat = ps_get_feat(raw) else { return [] }
        feat.pointee.cmn = wholeUtteranceMean
        guard let cmn = feat.pointee.cmn_struct, let mean = cmn.pointee.cmn_mean else { return [] }
        return Array(UnsafeBufferPointer(start: mean, count: Int(cmn.pointee.veclen)))
    }

    private func restoreRunningMean(_ running: [mfcc_t]) {
        guard let cmn = ps_get_feat(raw)?.pointee.cmn_struct, let mean = cmn.pointee.cmn_mean,
            running.count == Int(cmn.pointee.veclen)
        else { return }
        running.withUnsafeBufferPointer { mean.update(from: $0.baseAddress!, count: running.count) }
    }

    func endUtterance() throws(RecognizerError) {
        guard ps_end_utt(raw) >= 0 else {
            throw RecognizerError(.decodeFailed, "PocketSphinx could not end the utterance")
        }
    }

    /// Whether the voice activity detector hears speech now.
    var inSpeech: Bool { ps_get_in_speech(raw) != 0 }

    /// Frames processed in the current utterance.
    var frameCount: Int { Int(ps_get_n_frames(raw)) }

    /// Seconds of audio searched over every utterance so far: each pass over an utterance counts.
    var secondsSearched: Double {
        var (speech, cpu, wall) = (0.0, 0.0, 0.0)
        ps_get_all_time(raw, &speech, &cpu, &wall)
        return speech
    }

    /// The best hypothesis and its path score, copied at once (the C string is borrowed).
    func hypothesis() -> (text: String, score: Int32)? {
        var score: Int32 = 0
        guard let text = ps_get_hyp(raw, &score) else { return nil }
        return (String(cString: text), score)
    }

    /// The segments of the best hypothesis, fillers included.
    func segments() -> [RawSegment] {
        var result: [RawSegment] = []
        var iterator = ps_seg_iter(raw)
        while let segment = iterator {
            result.append(rawSegment(segment))
            iterator = ps_seg_next(segment)
        }
        return result
    }

    private func rawSegment(_ segment: OpaquePointer) -> RawSegment {
        var start: Int32 = 0
        var end: Int32 = 0
        var acoustic: Int32 = 0
        var language: Int32 = 0
        var backoff: Int32 = 0
        ps_seg_frames(segment, &start, &end)
        _ = ps_seg_prob(segment, &acoustic, &language, &backoff)
        return RawSegment(
            word: String(cString: ps_seg_word(segment)),
            startFrame: Int(start),
            endFrame: Int(end),
            acousticScore: acoustic
        )
    }

    /// Up to `limit` n-best hypotheses from the lattice, in the order PocketSphinx gives them.
    ///
    /// The corresponding C functions are `ps_nbest`, `ps_nbest_next` and `ps_nbest_hyp`.
    func nBest(limit: Int) -> [(text: String, score: Int32)] {
        var result: [(text: String, score: Int32)] = []
        var iterator = ps_nbest(raw)
        while let current = iterator, result.count < limit {
            var score: Int32 = 0
            if let text = ps_nbest_hyp(current, &score) {
                result.append((String(cString: text), score))
            }
            iterator = ps_nbest_next(current)
        }
        if let iterator { ps_nbest_free(iterator) }
        return result
    }
}

/// A compiled grammar: a finite-state model of its public rule(s).
final class FiniteStateGrammar {
    let name: String
    fileprivate let model: UnsafeMutablePointer<fsg_model_t>

    fileprivate init(name: String, model: UnsafeMutablePointer<fsg_model_t>) {
        self.name = name
        self.model = model
    }

    deinit { fsg_model_free(model) }

    /// Every word the grammar can produce, in the model's order.
    var words: [String] {
        (0..<Int(model.pointee.n_word)).compactMap { index in
            model.pointee.vocab[index].map { String(cString: $0) }
        }
    }

    /// Draws, beside every arc that says a word with alternate pronunciations, the same arc
    /// with each alternate (`read(2)`), so the search tries them all.
    ///
    /// PocketSphinx would do this itself (`-fsgusealtpron`), but its `fsg_model_add_alt` scans
    /// every transition of the grammar once per alternate: with 10,000 registered names it
    /// took 33 s. This is one pass over the arcs. The corresponding C functions are
    /// `fsg_model_word_add` and `fsg_model_trans_add`.
    /// - Parameter alternates: base word → the dictionary names of its other pronunciations.
    func addAlternates(_ alternates: [String: [String]]) {
        guard !alternates.isEmpty else { return }
        var additions: [(from: Int32, to: Int32, logProbability: Int32, word: String)] = []
        for state in 0..<model.pointee.n_state {
            forEachArc(from: state) { link in
                guard link.wid >= 0, let vocab = model.pointee.vocab[Int(link.wid)],
                    let variants = alternates[String(cString: vocab)]
                else { return }
                for variant in variants { additions.append((state, link.to_state, link.logs2prob, variant)) }
            }
        }
        var wordIDs: [String: Int32] = [:]
        for addition in additions {
            let id = wordIDs[addition.word] ?? fsg_model_word_add(model, addition.word)
            wordIDs[addition.word] = id
            fsg_model_trans_add(model, addition.from, addition.to, addition.logProbability, id)
        }
    }

    /// Whether the grammar accepts this word sequence (fillers removed beforehand).
    func accepts(_ words: [String]) -> Bool {
        states(after: words).contains(model.pointee.final_state)
    }

    /// Whether some sentence of the grammar begins with these words (fillers removed beforehand).
    func begins(_ words: [String]) -> Bool {
        !states(after: words).isEmpty
    }

    /// Whether every sentence of the grammar is one word ("yes", "seven"): each word leaving
    /// the start ends a sentence, and no word follows it.
    var saysOneWord: Bool {
        var wordTargets = Set<Int32>()
        for state in nullClosure(of: [model.pointee.start_state]) {
            forEachArc(from: state) { link in if link.wid >= 0 { wordTargets.insert(link.to_state) } }
        }
        let afterOneWord = nullClosure(of: wordTargets)
        var wordFollows = false
        for state in afterOneWord {
            forEachArc(from: state) { link in if link.wid >= 0 { wordFollows = true } }
        }
        return !wordTargets.isEmpty && !wordFollows
            && wordTargets.allSatisfy { nullClosure(of: [$0]).contains(model.pointee.final_state) }
    }

    /// The states these words lead to from the start; empty when no path says them.
    private func states(after words: [String]) -> Set<Int32> {
        var states = nullClosure(of: [model.pointee.start_state])
        for word in words {
            var next = Set<Int32>()
            for state in states {
                forEachArc(from: state) { link in
                    if link.wid >= 0, let vocab = model.pointee.vocab[Int(link.wid)], String(cString: vocab) == word {
                        next.insert(link.to_state)
                    }
                }
            }
            if next.isEmpty { return [] }
            states = nullClosure(of: next)
        }
        return states
    }

    private func nullClosure(of states: Set<Int32>) -> Set<Int32> {
        var closure = states
        var pending = Array(states)
        while let state = pending.popLast() {
            forEachArc(from: state) { link in
                if link.wid < 0, closure.insert(link.to_state).inserted { pending.append(link.to_state) }
            }
        }
        return closure
    }

    private func forEachArc(from state: Int32, _ body: (fsg_link_t) -> Void) {
        var iterator = fsg_model_arcs(model, state)
        while let current = iterator {
            if let link = fsg_arciter_get(current) { body(link.pointee) }
            iterator = fsg_arciter_next(current)
        }
    }
}

/// Routes sphinxbase's log to `sink`, which lives as long as the process.
///
/// The corresponding C function is `err_set_callback`, reached through a shim.
func installSphinxLog(_ sink: SphinxLogSink) {
    let context = Unmanaged.passUnretained(sink).toOpaque()
    heed_sphinx_set_log_handler(
        { context, level, message in
            guard let context, let message else { return }
            Unmanaged<SphinxLogSink>.fromOpaque(context).takeUnretainedValue()
                .receive(level: Int(level), fragment: String(cString: message))
        },
        context
    )
}

private func withCStrings<Result>(
    _ strings: [String],
    _ body: (UnsafeMutableBufferPointer<UnsafeMutablePointer<CChar>?>) -> Result
) -> Result {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeMutableBufferPointer { body($0) }
}
