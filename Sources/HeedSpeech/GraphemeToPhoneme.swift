import Foundation
public import HeedCore
import Synchronization

/// Where a word's pronunciation came from.
public enum PronunciationSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// The pronunciation dictionary (`cmudict-en-us.dict`).
    case dictionary
    /// A pronunciation the user gave (`heed vocab override`): explicit phones or a "sounds like" spelling.
    case override
    /// espeak-ng's letter-to-sound rules, mapped to ARPAbet.
    case guess
}

/// One word's pronunciation: ARPAbet phones and where they came from.
public struct Pronunciation: Sendable, Hashable, Codable {
    /// The word, lower case.
    public var word: String
    /// The phones, e.g. `["Z", "IH", "R", "T", "EH", "K"]`.
    public var phones: [String]
    /// Where the phones came from.
    public var source: PronunciationSource

    /// Creates a pronunciation.
    public init(word: String, phones: [String], source: PronunciationSource) {
        self.word = word
        self.phones = phones
        self.source = source
    }

    /// The phones as the recognizer takes them: separated by single spaces.
    public var phoneString: String { phones.joined(separator: " ") }
}

/// Why a pronunciation could not be made or used.
public struct PronunciationError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable { case unknownPhone, noPronunciation, synthesis }
        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// A phone is not one of the model's (the 39 CMU phones and SIL).
        public static let unknownPhone = Code(.unknownPhone)
        /// Neither the dictionary nor espeak-ng gives the word a pronunciation.
        public static let noPronunciation = Code(.noPronunciation)
        /// espeak-ng could not synthesize speech.
        public static let synthesis = Code(.synthesis)

        public var description: String { "\(storage)" }
    }

    /// What kind of problem this is.
    public var code: Code
    /// The whole message, ready to show.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// Pronunciations for words: the dictionary first, else an offline guess by espeak-ng.
///
/// The guess runs espeak-ng's English (en-us) letter-to-sound rules in process, through
/// libespeak-ng's `espeak_TextToPhonemes`, and maps espeak's ASCII phoneme names to the
/// 39 ARPAbet phones of the en-us acoustic model (``phoneSet``). libespeak-ng is initialised
/// once per process and never terminated (Initialize → Terminate → Initialize deadlocks in
/// espeak-ng 1.51); every call is serialised by one lock, because espeak-ng is not thread-safe.
public enum GraphemeToPhoneme {
    /// The phones of the en-us model: the 39 CMU phones and `SIL`.
    public static let phoneSet = Set(ModelPhones.speech + ["SIL"])

    /// Checks and splits explicit ARPAbet phones ("Z IH R T EH K"); case and stress digits are ignored
    /// ("ih1" is `IH`).
    /// - Parameter text: Phones separated by spaces.
    /// - Returns: The phones, upper case, without stress digits.
    /// - Throws: ``PronunciationError`` `unknownPhone` naming the first phone the model lacks, or
    ///   `noPronunciation` when there are none.
    public static func validatePhones(_ text: String) throws -> [String] {
        let phones = text.split(whereSeparator: { $0.isWhitespace }).map { token in
            String(token.uppercased().filter { !$0.isNumber })
        }
        guard !phones.isEmpty else { throw PronunciationError(.noPronunciation, "no phones given") }
        for (index, phone) in phones.enumerated() where !phoneSet.contains(phone) {
            let original = text.split(whereSeparator: { $0.isWhitespace })[index]
            throw PronunciationError(
                .unknownPhone,
                "'\(original)' is not a phone of the en-us model; use ARPAbet: \(phoneSet.sorted().joined(separator: " "))")
        }
        return phones
    }

    /// espeak-ng's guess for one word, in ARPAbet.
    /// - Parameter word: A word (any case; letters, apostrophes).
    /// - Returns: The phones; empty when espeak-ng gives none.
    public static func guess(_ word: String) -> [String] {
        let raw = espeakPhonemes(word)
        return arpabet(fromEspeak: raw)
    }

    /// espeak-ng's phonemes for text, in its ASCII (Kirshenbaum-like) names, separated by `_`
    /// within a word and by spaces between words, e.g. `z_'I_;_@_t_,E_k`.
    /// - Parameter text: The text.
    /// - Returns: The phoneme string.
    public static func espeakPhonemes(_ text: String) -> String {
        Espeak.shared.withLock { engine in engine.textToPhonemes(text) }
    }

    /// Maps espeak-ng's phoneme names (as ``espeakPhonemes(_:)`` gives them) to ARPAbet.
    static func arpabet(fromEspeak text: String) -> [String] {
        var phones: [String] = []
        /// Appends phones; an r after a vowel that already ends in r ("o@" + "r") is one R.
        func append(_ mapped: [String]) {
            if mapped == ["R"], let last = phones.last, last == "R" || last == "ER" { return }
            phones += mapped
        }
        for word in text.split(whereSeparator: { $0.isWhitespace }) {
            for token in word.split(separator: "_") {
                var name = String(token.filter { !"'‚,%=;".contains($0) })
                if name.isEmpty { continue }
                if name == "r-" {
                    // Linking r: ER already carries the r.
                    if phones.last != "ER" { phones.append("R") }
                    continue
                }
                if let mapped = espeakToARPAbet[name] {
                    append(mapped)
                    continue
                }
                // Variants: t#, d#, l/2 and the like fall back to their base phoneme.
                while !name.isEmpty, espeakToARPAbet[name] == nil {
                    guard let last = name.last, !last.isLetter || name.count > 1 else { break }
                    name.removeLast()
                }
                if let mapped = espeakToARPAbet[name] { append(mapped) }
            }
        }
        return phones
    }

    /// espeak-ng's en-us phoneme names → ARPAbet.
    static let espeakToARPAbet: [String: [String]] = [
        // Consonants.
        "p": ["P"], "b": ["B"], "t": ["T"], "d": ["D"], "k": ["K"], "g": ["G"], "f": ["F"], "v": ["V"],
        "T": ["TH"], "D": ["DH"], "s": ["S"], "z": ["Z"], "S": ["SH"], "Z": ["ZH"], "h": ["HH"], "m": ["M"],
        "n": ["N"], "N": ["NG"], "l": ["L"], "r": ["R"], "w": ["W"], "j": ["Y"], "tS": ["CH"], "dZ": ["JH"],
        "t#": ["T"], "t2": ["T"], "d#": ["D"], "x": ["K"], "?": ["T"], "n-": ["AH", "N"], "m-": ["AH", "M"],
        "l-": ["AH", "L"], "@L": ["AH", "L"], "W": ["W"], "C": ["HH"],
        // Vowels.
        "a": ["AE"], "aa": ["AE"], "a#": ["AH"], "A:": ["AA"], "A": ["AA"], "A@": ["AA", "R"], "0": ["AA"],
        "@": ["AH"], "@-": ["AH"], "@2": ["AH"], "@5": ["AH"], "3": ["ER"], "3:": ["ER"], "V": ["AH"],
        "E": ["EH"], "e": ["EH"], "E2": ["EH"], "e@": ["EH", "R"], "eI": ["EY"],
        "I": ["IH"], "I#": ["IH"], "I2": ["IH"], "i": ["IY"], "i:": ["IY"], "i@": ["IY", "AH"], "i@3": ["IY", "ER"],
        "O": ["AO"], "O:": ["AO"], "O2": ["AA"], "O@": ["AO", "R"], "o@": ["AO", "R"], "oU": ["OW"], "OI": ["OY"],
        "U": ["UH"], "u": ["UW"], "u:": ["UW"], "U@": ["UH", "R"],
        "aI": ["AY"], "aI@": ["AY", "ER"], "aI3": ["AY", "ER"], "aU": ["AW"], "aU@": ["AW", "ER"],
    ]

    /// ARPAbet → espeak-ng phoneme names, to speak phones with `[[…]]` phoneme input.
    static let arpabetToEspeak: [String: String] = [
        "AA": "A:", "AE": "a", "AH": "V", "AO": "O:", "AW": "aU", "AY": "aI", "B": "b", "CH": "tS", "D": "d",
        "DH": "D", "EH": "E", "ER": "3:", "EY": "eI", "F": "f", "G": "g", "HH": "h", "IH": "I", "IY": "i:",
        "JH": "dZ", "K": "k", "L": "l", "M": "m", "N": "n", "NG": "N", "OW": "oU", "OY": "OI", "P": "p", "R": "r",
        "S": "s", "SH": "S", "T": "t", "TH": "T", "UH": "U", "UW": "u:", "V": "v", "W": "w", "Y": "j", "Z": "z",
        "ZH": "Z", "SIL": "_",
    ]

    /// espeak-ng's phoneme input for ARPAbet phones (`[[…]]`), the first vowel of each word stressed.
    /// - Parameter words: One phone list per word.
    static func espeakPhonemeInput(_ words: [[String]]) -> String {
        let vowels: Set<String> = ["AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"]
        let text = words.map { phones -> String in
            var stressed = false
            return phones.map { phone -> String in
                let name = arpabetToEspeak[phone] ?? ""
                if vowels.contains(phone), !stressed {
                    stressed = true
                    return "'" + name
                }
                return name
            }.joined()
        }.joined(separator: " ")
        return "[[\(text)]]"
    }
}

/// Looks words up in the dictionary and guesses the rest.
public struct Pronouncer: Sendable {
    /// The CMU-format dictionary.
    public var dictionaryPath: String

    /// Creates a pronouncer over a dictionary.
    public init(dictionaryPath: String = PocketSphinxRecognizer.Configuration.default.dictionaryPath) {
        self.dictionaryPath = dictionaryPath
    }

    /// Each word's pronunciation: the dictionary's, else espeak-ng's guess.
    /// - Parameter words: Lower-case words.
    /// - Returns: word → pronunciation; a word neither gives a pronunciation is missing.
    /// - Throws: ``RecognizerError`` when the dictionary cannot be read.
    public func pronunciations(_ words: Set<String>) throws(RecognizerError) -> [String: Pronunciation] {
        var result: [String: Pronunciation] = [:]
        result.reserveCapacity(words.count)
        for (word, phones) in try Pronunciations.phones(of: words, dictionaryPath: dictionaryPath) {
            result[word] = Pronunciation(word: word, phones: phones, source: .dictionary)
        }
        for word in words where result[word] == nil {
            let phones = GraphemeToPhoneme.guess(word)
            if !phones.isEmpty { result[word] = Pronunciation(word: word, phones: phones, source: .guess) }
        }
        return result
    }
}
