import Foundation
import HeedAudio
import HeedCore
import HeedSpeech
import Logging
import Testing
import HeedTesting

/// Dictation with the real PocketSphinx, its English language model and Debian's LibriVox
/// sentences (real speech). Synthetic speech (flite) only checks that added words can be said.
@Suite(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us and pocketsphinx-testdata"), .serialized)
struct DictationRecognizerTests {
    static let librivox = Fixtures.testData + "/librivox"

    /// The five sentences and their transcriptions, in `fileids` order.
    static func sentences() throws -> [(file: String, words: [String])] {
        try String(contentsOfFile: librivox + "/transcription", encoding: .utf8).split(separator: "\n").map { line in
            let tokens = line.split(separator: " ").map(String.init)
            let id = tokens.last!.trimmingCharacters(in: CharacterSet(charactersIn: "()"))
            return ("\(librivox)/\(id).wav", tokens.dropLast().filter { $0 != "<s>" && $0 != "</s>" })
        }
    }

    /// Word edit distance.
    static func errors(_ reference: [String], _ hypothesis: [String]) -> Int {
        var row = Array(0...hypothesis.count)
        for (i, word) in reference.enumerated() {
            let previous = row
            row[0] = i + 1
            for (j, other) in hypothesis.enumerated() {
                row[j + 1] = min(previous[j + 1] + 1, row[j] + 1, previous[j] + (word == other ? 0 : 1))
            }
        }
        return row[hypothesis.count]
    }

    static func dictation(words: [String] = [], _ configure: (inout PocketSphinxRecognizer.Configuration) -> Void = { _ in }) throws
        -> PocketSphinxRecognizer
    {
        var configuration = PocketSphinxRecognizer.Configuration.default
        configure(&configuration)
        return try PocketSphinxRecognizer(grammar: .dictation(words: words), configuration: configuration, logger: Logger(label: "test"))
    }

    /// The target: a word error rate of at most 0.25 (PocketSphinx 5 with the same
    /// models makes 0.282). The decoder is seeded, so the number does not wander.
    @Test func theLibriVoxSentencesAreDictatedWithAtMostAQuarterOfTheWordsWrong() throws {
        let recognizer = try Self.dictation()
        var errors = 0
        var words = 0
        for sentence in try Self.sentences() {
            let audio = try AudioFile.read(sentence.file)
            let result = try recognizer.recognize(audio)
            errors += Self.errors(sentence.words, result.text.split(separator: " ").map(String.init))
            words += sentence.words.count
            #expect(!result.rejected, "dictation rejects only silence")
            #expect((0...1).contains(result.confidence))
            // Segments: the words of the text, in order, inside the audio.
            #expect(result.words.map(\.word).joined(separator: " ") == result.text)
            #expect(zip(result.words, result.words.dropFirst()).allSatisfy { $0.end <= $1.start + 0.011 })
            #expect(result.words.allSatisfy { $0.start >= 0 && $0.end <= result.durationSeconds + 0.011 && (0...1).contains($0.confidence) })
        }
        #expect(Double(errors) / Double(words) <= 0.25, "\(errors) errors in \(words) words")
    }

    @Test func silenceIsRejectedWithNoWords() throws {
        let result = try Self.dictation().recognize(AudioBuffer(samples: [Int16](repeating: 0, count: 16_000), sampleRate: 16_000))
        #expect(result.text.isEmpty)
        #expect(result.rejected)
    }

    /// The hand-off's path: the live search's words, decoded chunk by chunk as the audio comes.
    @Test func liveDecodingGivesTheSentenceWhenTheAudioEnds() throws {
        let recognizer = try Self.dictation()
        let sentence = try Self.sentences()[4]  // "he might even have been made amiable himself"
        let samples = try AudioFile.read(sentence.file).samples
        try recognizer.startLiveDecoding()
        for start in stride(from: 0, to: samples.count, by: 1024) {
            try recognizer.decodeLive(Array(samples[start..<min(samples.count, start + 1024)]))
        }
        let result = try recognizer.finishLiveDecoding()
        let heard = result.text.split(separator: " ").map(String.init)
        #expect(Self.errors(sentence.words, heard) <= 2, "\(result.text)")
        #expect(result.words.first.map { $0.start < 0.5 } == true, "segment times count from the utterance")
        #expect(abs(result.durationSeconds - Double(samples.count) / 16_000) < 0.01)

        // The next live utterance of the same decoder (a hand-off's decoder is kept): its times
        // count from its own start too, not from the decoder's stream.
        try recognizer.startLiveDecoding()
        try recognizer.decodeLive(samples)
        let again = try recognizer.finishLiveDecoding()
        #expect(again.words.first.map { $0.start < 0.5 } == true, "\(again.words)")
        #expect(again.words.last.map { $0.end <= again.durationSeconds + 0.011 } == true, "\(again.words)")
    }

    @Test func wordsTheDictionaryLacksAreAddedWithAGuessedPronunciation() throws {
        let without = try Self.dictation()
        #expect(try without.wordsWithoutPronunciation(["zyrtec"]) == ["zyrtec"])
        let with = try Self.dictation(words: ["zyrtec", "comma"])
        #expect(try with.wordsWithoutPronunciation(["zyrtec"]).isEmpty)
    }

    /// A registered word with its pronunciation can be dictated; without it, it cannot.
    /// Synthetic speech (flite), reported apart from the real recordings.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flite"), "needs flite"))
    func aRegisteredWordWithItsPronunciationCanBeDictated() throws {
        let folder = try TemporaryFolder.make()
        let spoken = folder.appendingPathComponent("zyrtec.wav").path
        try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/flite"), ["-voice", "slt", "-t", "the zyrtec", "-o", spoken]).status == 0)
        let audio = try AudioFile.read(spoken)
        #expect(!(try Self.dictation().recognize(audio).text.contains("zyrtec")))
        let registered = try Self.dictation(words: ["zyrtec"]) { $0.additionalPronunciations = ["zyrtec": ["Z AY R T EH K"]] }
        #expect(try registered.recognize(audio).text.contains("zyrtec"))
    }
}
