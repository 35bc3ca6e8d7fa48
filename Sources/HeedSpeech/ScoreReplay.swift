import HeedCore

/// The grammar pass's senone scores, replayed to the alignment and the phone loop.
///
/// A recognizer made for a grammar of single words measures confidence on one normaliser: every
/// senone of every frame computed (docs/RECOGNITION.md, "One word"). Computed in each of the three
/// passes, that costs 2.6–2.8 times the CPU. Here the grammar pass computes them once and keeps
/// them (`-keepscores`, ``SphinxDecoder/takeScores()``), and a second decoder, which never hears
/// audio, decodes the alignment and the phone loop from them: the same segments, with one pass
/// over every senone instead of three.
///
/// The scores are derived from the user's speech: they stay in the process's memory, never in a
/// file, and are freed once the utterance's result is measured.
final class ScoreReplay {
    /// Decodes from the scores only (``SphinxDecoder/decodeScores(_:search:)``).
    let decoder: SphinxDecoder
    /// The words ``decoder`` can align.
    var lexicon: PocketSphinxRecognizer.Lexicon

    /// Makes the replaying decoder, with the phone loop as `phoneLoopSearch`.
    /// - Parameter arguments: the grammar pass's decoder flags, without `-keepscores`.
    init(arguments: [String: String], lexicon: PocketSphinxRecognizer.Lexicon, phoneLoopSearch: String) throws(RecognizerError) {
        decoder = try SphinxDecoder(arguments: arguments)
        try decoder.addPhoneLoopSearch(name: phoneLoopSearch)
        self.lexicon = lexicon
    }
}
