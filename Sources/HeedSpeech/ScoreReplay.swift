import Foundation
import HeedCore

/// The grammar pass's senone scores, replayed to the alignment and the phone loop.
///
/// A recognizer made for a grammar of single words measures confidence on one normaliser: every
/// senone of every frame computed (docs/RECOGNITION.md, "One word"). Computed in each of the three
/// passes, that costs 2.6–2.8 times the CPU. Here the grammar pass computes them once and writes
/// them (`-senlogdir`), and a second decoder, which never hears audio, decodes the alignment and
/// the phone loop from them: the same segments, with one pass over every senone instead of three.
///
/// The scores are derived from the user's speech: they go into a folder made for this recognizer
/// alone (mode 0700, under `$XDG_RUNTIME_DIR` when there is one), each utterance's are deleted
/// once its result is measured, and the folder goes with the recognizer.
final class ScoreReplay {
    /// The folder the grammar pass writes each utterance's scores into (`-senlogdir`).
    let folder: String
    /// Decodes from the scores only (``SphinxDecoder/decodeScores(at:search:)``).
    let decoder: SphinxDecoder
    /// The words ``decoder`` can align.
    var lexicon: PocketSphinxRecognizer.Lexicon

    /// Makes the folder and the replaying decoder, with the phone loop as `phoneLoopSearch`.
    /// - Parameter arguments: the grammar pass's decoder flags, without `-senlogdir`.
    init(arguments: [String: String], lexicon: PocketSphinxRecognizer.Lexicon, phoneLoopSearch: String) throws(RecognizerError) {
        var bases: [String] = []
        for base in [ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], NSTemporaryDirectory()] {
            guard let base, !base.isEmpty else { continue }
            let folder = base.count > 1 && base.hasSuffix("/") ? String(base.dropLast()) : base
            if !bases.contains(folder) { bases.append(folder) }
        }
        var made: String?
        for base in bases where made == nil {
            var template = Array((base + "/heed-scores-XXXXXX").utf8CString)
            made = mkdtemp(&template).map { String(cString: $0) }
        }
        guard let made else {
            throw RecognizerError(.decoderInitFailed, "cannot make a folder for senone scores in \(bases.joined(separator: " or ")): \(String(cString: strerror(errno)))")
        }
        folder = made
        do {
            decoder = try SphinxDecoder(arguments: arguments)
            try decoder.addPhoneLoopSearch(name: phoneLoopSearch)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
        self.lexicon = lexicon
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// The scores of the utterance the grammar pass decoded last, if it wrote any.
    var lastScores: String? {
        scoreFiles().last.map { folder + "/" + $0 }
    }

    /// Deletes every utterance's scores; makes the folder again should something have removed it,
    /// as the grammar pass cannot start an utterance without it.
    func clear() {
        for file in scoreFiles() { unlink(folder + "/" + file) }
        if access(folder, F_OK) != 0 { mkdir(folder, 0o700) }
    }

    /// The score files by utterance number (PocketSphinx names them `000000012.sen`).
    private func scoreFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".sen") }.sorted()
    }
}
