import Foundation
public import HeedCore
import Synchronization

/// Pronunciations read from a CMU-format dictionary (`word PH ON ES`, alternates as `word(2)`).
///
/// Heed loads only the words its grammar uses: the full en-us dictionary has 134k
/// words and costs ~20 MB and ~200 ms at start-up; a grammar's few hundred cost nothing.
struct PronunciationDictionary {
    /// Entries as they appear in the file, alternates included (`read(2)`), in file order.
    private(set) var entries: [(word: String, phones: String)] = []
    /// The words looked up.
    private let words: Set<String>

    /// Reads the entries of `words` (and their alternates) from the dictionary file at `path`.
    ///
    /// The file is read only for words the readings since it last changed did not look for
    /// (``Reading``): a grammar rebuild looks the same words up three times, for the vocabulary's
    /// pronunciations, the check of the grammar's words and the decoder's lexicon.
    ///
    /// - Throws: ``RecognizerError`` `.decoderInitFailed` when the file cannot be read.
    init(path: String, words: Set<String>) throws(RecognizerError) {
        self.words = words
        guard !words.isEmpty else { return }
        let stamp = FileStamp(path: path)
        var reading = Self.readings.withLock { $0[path] }.flatMap { $0.stamp == stamp ? $0 : nil }
        // Not `subtracting`, which goes through the other set: tens of thousands of words each time.
        let unread = reading.map { reading in words.filter { !reading.words.contains($0) } } ?? words
        if !unread.isEmpty {
            if let kept = reading, kept.words.count + unread.count <= Reading.wordLimit {
                reading = try kept.adding(unread, from: Self.read(path: path, words: unread))
            } else {
                reading = try Reading(stamp: stamp, words: words, read: Self.read(path: path, words: words))
            }
            if let reading, stamp != nil {
                Self.readings.withLock { readings in
                    if readings[path] == nil, readings.count >= Reading.fileLimit { readings = [:] }
                    readings[path] = reading
                }
            }
        }
        entries = reading?.entries(of: words) ?? []
        let supplemented = Self.supplement.filter { words.contains($0.key) }.sorted { $0.key < $1.key }
        guard !supplemented.isEmpty else { return }
        let found = Set(entries.lazy.map(\.word).filter { word in supplemented.contains { $0.key == word } })
        for (word, phones) in supplemented where !found.contains(word) { entries.append((word, phones)) }
    }

    /// The first pronunciation of each word that has an entry, as phones.
    var firstPronunciations: [String: [String]] {
        var result: [String: [String]] = [:]
        result.reserveCapacity(words.count)
        for entry in entries where result[entry.word] == nil && words.contains(entry.word) {
            result[entry.word] = entry.phones.phoneFields { String(decoding: $0, as: UTF8.self) }
        }
        return result
    }

    /// The entries found in a dictionary file since it last changed, and the words looked for.
    private struct Reading: Sendable {
        /// The most words kept of a file: a few MB of entries.
        static let wordLimit = 50_000
        /// The most files kept (one is the rule: `--dictionary` and tests give others).
        static let fileLimit = 4

        let stamp: FileStamp?
        let words: Set<String>
        /// Each word's entries (itself, then its alternates), with their lines.
        let entries: [String: [Entry]]

        init(stamp: FileStamp?, words: Set<String>, entries: [String: [Entry]]) {
            self.stamp = stamp
            self.words = words
            self.entries = entries
        }

        init(stamp: FileStamp?, words: Set<String>, read: [Entry]) {
            self.init(stamp: stamp, words: words, entries: Dictionary(grouping: read, by: \.base))
        }

        /// These words' entries, in file order: looked up word by word, as a second pass asks for
        /// a few hundred among tens of thousands.
        func entries(of words: Set<String>) -> [(word: String, phones: String)] {
            words.flatMap { entries[$0] ?? [] }.sorted { $0.line < $1.line }.map { ($0.word, $0.phones) }
        }

        /// With the entries of a reading of other words.
        func adding(_ words: Set<String>, from read: [Entry]) -> Reading {
            Reading(stamp: stamp, words: self.words.union(words), entries: entries.merging(Dictionary(grouping: read, by: \.base)) { old, _ in old })
        }
    }

    private struct Entry: Sendable {
        let line: Int
        let base: String
        let word: String
        let phones: String
    }

    /// By the file's path.
    private static let readings = Mutex<[String: Reading]>([:])

    /// A file's identity and version: inode, size and time of last change (`stat(2)`).
    private struct FileStamp: Equatable, Sendable {
        let inode: UInt64
        let size: Int64
        let changed: Int64

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            changed = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
    }

    /// Reads the entries of `words` and their alternates from the file.
    private static func read(path: String, words: Set<String>) throws(RecognizerError) -> [Entry] {
        // Read a line at a time: the whole en-us dictionary (3.3 MB) in memory at once was the
        // listener's peak whenever what is going on changed its grammar.
        guard let file = fopen(path, "r") else {
            throw RecognizerError(.decoderInitFailed, "cannot read the pronunciation dictionary \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        // A line's word is looked at as bytes first (``ByteFilter``): made into a Swift string and
        // hashed, line after line, the dictionary's three readings were almost half of the
        // listener's rebuild with 10,000 playlist titles (`perf record`).
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        let filter = ByteFilter(words)
        var entries: [Entry] = []
        var line = 0
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length >= 0, let buffer else { break }
            line += 1
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
            let base = UnsafeRawBufferPointer(rebasing: bytes[..<baseEnd])
            guard baseEnd > 0, filter.mayContain(base) else { continue }
            let baseWord = String(decoding: base, as: UTF8.self)
            guard words.contains(baseWord) else { continue }
            let word = baseEnd == wordEnd ? baseWord : String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<wordEnd]), as: UTF8.self)
            entries.append(Entry(line: line, base: baseWord, word: word, phones: phones(UnsafeRawBufferPointer(rebasing: bytes[wordEnd..<lineEnd]))))
        }
        if ferror(file) != 0 {
            throw RecognizerError(.decoderInitFailed, "cannot read the pronunciation dictionary \(path): \(String(cString: strerror(errno)))")
        }
        return entries
    }

    /// The phones of a line after its word, one space between each, up to a `#` of its own
    /// (a comment).
    private static func phones(_ bytes: UnsafeRawBufferPointer) -> String {
        var phones: [UInt8] = []
        phones.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard !isSeparator(bytes[index]) else {
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count, !isSeparator(bytes[end]) { end += 1 }
            if end == index + 1, bytes[index] == UInt8(ascii: "#") { break }
            if !phones.isEmpty { phones.append(UInt8(ascii: " ")) }
            phones.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
            index = end
        }
        return String(decoding: phones, as: UTF8.self)
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// A first look at a line's word without making a string of it: a bit per hash of the bytes
    /// of each word looked for. Most of the dictionary's 135,000 lines end here; the few whose
    /// bit is set are looked up as strings. A word with a byte outside ASCII always goes on to
    /// the string comparison, which holds canonically equivalent spellings equal.
    private struct ByteFilter {
        private var bits: [UInt64]
        private let mask: UInt64

        init(_ words: Set<String>) {
            // 64 bits or more a word: at most one line in 64 of those not looked for passes on.
            var size = 1 << 10
            while size < words.count * 64 { size <<= 1 }
            bits = Array(repeating: 0, count: size / 64)
            mask = UInt64(size - 1)
            for word in words {
                let hash = Self.hash(word.utf8) & mask
                bits[Int(hash >> 6)] |= 1 << (hash & 63)
            }
        }

        func mayContain(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return true }
            let hash = Self.hash(bytes) & mask
            return bits[Int(hash >> 6)] & (1 << (hash & 63)) != 0
        }

        /// FNV-1a, its high bits folded in.
        private static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash ^ (hash >> 29)
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
        try PronunciationDictionary(path: dictionaryPath, words: words).firstPronunciations
    }
}

extension String {
    /// Each phone of a phone string ("HH EH L OW") made into a value from its bytes, in order;
    /// `nil` leaves the phone out, and so do empty fields.
    ///
    /// Over the bytes themselves: 22,653 words' phone strings split as characters took 60 ms;
    /// split into slices of their UTF-8 views, 145 million instructions (callgrind), a tenth of
    /// that now.
    func phoneFields<Value>(_ value: (UnsafeBufferPointer<UInt8>) -> Value?) -> [Value] {
        var text = self
        return text.withUTF8 { bytes in
            var values: [Value] = []
            values.reserveCapacity(bytes.count / 2 + 1)
            var start = 0
            for end in 0...bytes.count where end == bytes.count || bytes[end] == UInt8(ascii: " ") {
                if end > start, let field = value(UnsafeBufferPointer(rebasing: bytes[start..<end])) { values.append(field) }
                start = end + 1
            }
            return values
        }
    }
}
