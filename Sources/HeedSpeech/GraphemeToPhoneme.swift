internal import CEspeakNG
public import Foundation
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
    public static let phoneSet: Set<String> = [
        "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY", "JH",
        "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH", "SIL",
    ]

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

    /// Speaks ARPAbet phones with espeak-ng (en-us voice), in process.
    /// - Parameter words: One phone list per word.
    /// - Returns: 16-bit mono samples and their rate (22,050 Hz).
    /// - Throws: ``PronunciationError`` `synthesis` when espeak-ng fails.
    public static func synthesize(words: [[String]]) throws -> (samples: [Int16], sampleRate: Int) {
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
        return try Espeak.shared.withLock { engine in try engine.synthesize("[[\(text)]]", phonemeInput: true) }
    }

    /// Speaks text with espeak-ng (en-us voice), in process.
    /// - Parameter text: The text.
    /// - Returns: 16-bit mono samples and their rate.
    /// - Throws: ``PronunciationError`` `synthesis` when espeak-ng fails.
    public static func synthesize(text: String) throws -> (samples: [Int16], sampleRate: Int) {
        try Espeak.shared.withLock { engine in try engine.synthesize(text, phonemeInput: false) }
    }

    /// A canonical 16-bit mono WAV file of samples.
    public static func wavData(samples: [Int16], sampleRate: Int) -> Data {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + samples.count * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(1))
        append(UInt32(sampleRate))
        append(UInt32(sampleRate * 2))
        append(UInt16(2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        return data
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

    /// The dictionary's first pronunciation of each of `words` that it has.
    /// - Parameter words: Lower-case words.
    /// - Returns: word → phones, for the words the dictionary has.
    /// - Throws: ``RecognizerError`` when the dictionary cannot be read.
    public func dictionaryPronunciations(_ words: Set<String>) throws(RecognizerError) -> [String: [String]] {
        let dictionary = try PronunciationDictionary(path: dictionaryPath, words: words)
        var result: [String: [String]] = [:]
        for entry in dictionary.entries where result[entry.word] == nil && words.contains(entry.word) {
            result[entry.word] = entry.phones.split(separator: " ").map(String.init)
        }
        return result
    }

    /// Each word's pronunciation: the dictionary's, else espeak-ng's guess.
    /// - Parameter words: Lower-case words.
    /// - Returns: word → pronunciation; a word neither gives a pronunciation is missing.
    /// - Throws: ``RecognizerError`` when the dictionary cannot be read.
    public func pronunciations(_ words: Set<String>) throws(RecognizerError) -> [String: Pronunciation] {
        var result: [String: Pronunciation] = [:]
        for (word, phones) in try dictionaryPronunciations(words) {
            result[word] = Pronunciation(word: word, phones: phones, source: .dictionary)
        }
        for word in words where result[word] == nil {
            let phones = GraphemeToPhoneme.guess(word)
            if !phones.isEmpty { result[word] = Pronunciation(word: word, phones: phones, source: .guess) }
        }
        return result
    }
}

// MARK: - libespeak-ng

/// The process-wide espeak-ng instance. Every `espeak_*` call of Heed is in this type.
final class Espeak: @unchecked Sendable {
    /// Initialised on first use, never terminated.
    static let shared = Mutex(Espeak())

    private var initialized = false
    private var sampleRate = 22_050

    private init() {}

    /// The corresponding C function is `espeak_Initialize`, with `AUDIO_OUTPUT_SYNCHRONOUS`.
    private func initialize() -> Bool {
        if initialized { return true }
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else { return false }
        sampleRate = Int(rate)
        guard espeak_SetVoiceByName("en-us") == EE_OK else { return false }
        espeak_SetSynthCallback(synthesisCallback)
        initialized = true
        return true
    }

    /// The corresponding C function is `espeak_TextToPhonemes` (ASCII names, `_` between phonemes).
    func textToPhonemes(_ text: String) -> String {
        guard initialize() else { return "" }
        let mode = Int32(UInt8(ascii: "_")) << 8
        var parts: [String] = []
        text.withCString { start in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(start)
            while pointer != nil {
                guard let result = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, mode) else { break }
                let part = String(cString: result)
                if !part.isEmpty { parts.append(part) }
            }
        }
        return parts.joined(separator: " ")
    }

    /// The corresponding C function is `espeak_Synth`.
    func synthesize(_ text: String, phonemeInput: Bool) throws -> (samples: [Int16], sampleRate: Int) {
        guard initialize() else { throw PronunciationError(.synthesis, "espeak-ng could not be initialised (is espeak-ng-data installed?)") }
        let sink = SampleSink()
        let flags = UInt32(espeakCHARS_UTF8) | (phonemeInput ? UInt32(espeakPHONEMES) : 0)
        let status = text.withCString { start in
            espeak_Synth(start, strlen(start) + 1, 0, POS_CHARACTER, 0, flags, nil, Unmanaged.passUnretained(sink).toOpaque())
        }
        withExtendedLifetime(sink) {}
        guard status == EE_OK else { throw PronunciationError(.synthesis, "espeak-ng could not synthesize \(text)") }
        return (sink.samples, sampleRate)
    }
}

/// Collects the samples of one `espeak_Synth` call.
private final class SampleSink {
    var samples: [Int16] = []
}

/// The synth callback: appends the chunk to the call's ``SampleSink`` (its `user_data`).
private func synthesisCallback(_ samples: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let samples, count > 0, let userData = events?.pointee.user_data else { return 0 }
    let sink = Unmanaged<SampleSink>.fromOpaque(userData).takeUnretainedValue()
    sink.samples.append(contentsOf: UnsafeBufferPointer(start: samples, count: Int(count)))
    return 0
}
