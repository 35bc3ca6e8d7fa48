import Foundation
public import HeedCore

/// Pronunciations read from a CMU-format dictionary (`word PH ON ES`, alternates as `word(2)`).
///
/// Heed loads only the words its grammar uses: the full en-us dictionary has 134k
/// words and costs ~20 MB and ~200 ms at start-up; a grammar's few hundred cost nothing.
struct PronunciationDictionary {
    /// Entries as they appear in the file, alternates included (`read(2)`), in file order.
    private(set) var entries: [(word: String, phones: String)] = []

    /// Reads the entries of `words` (and their alternates) from the dictionary file at `path`.
    ///
    /// - Throws: ``RecognizerError`` `.decoderInitFailed` when the file cannot be read.
    init(path: String, words: Set<String>) throws(RecognizerError) {
        guard !words.isEmpty else { return }
        // Read a line at a time: the whole en-us dictionary (3.3 MB) in memory at once was the
        // listener's peak whenever what is going on changed its grammar.
        guard let file = fopen(path, "r") else {
            throw RecognizerError(.decoderInitFailed, "cannot read the pronunciation dictionary \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        // Words are looked up as Swift strings: one of up to 15 bytes is stored inline, so the
        // 135,000 lines of the dictionary cost no allocation each (a byte array per line did).
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length >= 0, let buffer else { break }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: length)
            var lineEnd = bytes.count
            while lineEnd > 0, bytes[lineEnd - 1] == UInt8(ascii: "\n") { lineEnd -= 1 }
            var wordEnd = 0
            while wordEnd < lineEnd, bytes[wordEnd] != UInt8(ascii: " "), bytes[wordEnd] != UInt8(ascii: "\t") {
                wordEnd += 1
            }
            var baseEnd = wordEnd
            if baseEnd > 0, bytes[baseEnd - 1] == UInt8(ascii: ")"), let open = (0..<baseEnd).last(where: { bytes[$0] == UInt8(ascii: "(") }) {
                baseEnd = open
            }
            guard baseEnd > 0, words.contains(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<baseEnd]), as: UTF8.self)) else { continue }
            let word = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<wordEnd]), as: UTF8.self)
            let phones = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[wordEnd..<lineEnd]), as: UTF8.self)
                .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
                .prefix(while: { $0 != "#" })
                .joined(separator: " ")
            entries.append((word, phones))
        }
        if ferror(file) != 0 {
            throw RecognizerError(.decoderInitFailed, "cannot read the pronunciation dictionary \(path): \(String(cString: strerror(errno)))")
        }
        let found = Set(entries.map(\.word))
        for word in words.sorted() where !found.contains(word) {
            if let phones = Self.supplement[word] { entries.append((word, phones)) }
        }
    }

    /// Words people say to a voice assistant that `cmudict-en-us.dict` lacks, for any dictionary
    /// that lacks them too: the shipped intents use them. A word the dictionary has keeps the
    /// dictionary's pronunciation.
    static let supplement: [String: String] = [
        "unpause": "AH N P AO Z",
        "unmute": "AH N M Y UW T",
        "rhythmbox": "R IH DH AH M B AA K S",
        "lollypop": "L AA L IY P AA P",
        "podcasts": "P AO D K AE S T S",
        "mpv": "EH M P IY V IY",
        "vlc": "V IY EH L S IY",
    ]

    /// The words of `words` that have no entry.
    func missing(from words: some Sequence<String>) -> [String] {
        let present = Set(entries.map { $0.word })
        return words.filter { !present.contains($0) }
    }
}

/// Looks words up in a pronunciation dictionary, for code outside the recognizer.
public enum Pronunciations {
    /// The first pronunciation of each word the dictionary (or Heed's supplement) has, as phones.
    /// - Throws: ``RecognizerError`` when the dictionary cannot be read.
    public static func phones(of words: Set<String>, dictionaryPath: String) throws(RecognizerError) -> [String: [String]] {
        var phones: [String: [String]] = [:]
        for entry in try PronunciationDictionary(path: dictionaryPath, words: words).entries where words.contains(entry.word) {
            if phones[entry.word] == nil { phones[entry.word] = entry.phones.split(separator: " ").map(String.init) }
        }
        return phones
    }
}
