import Foundation
import HeedIntents
import HeedRuntime
import HeedSpeech
import Testing
import HeedTesting

/// Heed judges a wake phrase against the shipped command grammar and the dictionary before
/// listening for it (issue #12, item 4).
@Suite("Wake phrase judgement", .enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us (its dictionary)"))
struct WakePhraseTests {
    static let commands = DispatchTests.catalog.automaton()

    static func judge(_ phrase: String) throws -> WakePhraseJudgement {
        try WakePhraseJudgement.judge(phrase, commands: commands, pronouncer: Pronouncer())
    }

    @Test func aLongRarePhraseIsGood() throws {
        let judgement = try Self.judge("hey computer")
        #expect(judgement.warnings.isEmpty, "\(judgement.warnings)")
        #expect(judgement.phones.joined().count == 10)
    }

    @Test func aCommandIsNoWakePhrase() throws {
        let warnings = try Self.judge("pause the music").warnings
        #expect(warnings.contains { $0.contains("it is itself a command") })
        #expect(warnings.contains { $0.contains("every word of it is a command word") })
    }

    @Test func theStartOfCommandsIsNoWakePhrase() throws {
        let warnings = try Self.judge("set a").warnings
        #expect(warnings.contains { $0.contains("commands start with it") }, "\(warnings)")
    }

    @Test func shortAndSingleWordsAreWarnedAbout() throws {
        let warnings = try Self.judge("yo").warnings
        #expect(warnings.contains { $0.hasPrefix("it has 2 phones") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("one word") })
    }

    @Test func aGuessedPronunciationIsNamed() throws {
        let judgement = try Self.judge("okay zyrtec")
        #expect(judgement.guessedWords == ["zyrtec"])
        #expect(judgement.warnings.contains { $0.contains("heed vocab pronounce zyrtec") })
    }

    /// The config's wakePhrase is the one judged (and listened for); --check-wake-phrase exits 1 on a warning.
    @Test func theConfigNamesTheWakePhrase() throws {
        let folder = try TemporaryFolder.make()
        let config = folder.appendingPathComponent("config.json")
        try #"{"wakePhrase": "Hey Computer"}"#.write(to: config, atomically: true, encoding: .utf8)
        let good = try Fixtures.run(Fixtures.heedBinary, ["listen", "--check-wake-phrase", "--config", config.path, "--json"])
        #expect(good.status == 0, "\(good)")
        #expect(good.output.contains(#""phrase":"hey computer""#), "\(good.output)")
        let bad = try Fixtures.run(Fixtures.heedBinary, ["listen", "--check-wake-phrase", "--config", config.path, "--wake-phrase", "stop"])
        #expect(bad.status == 1)
        #expect(bad.output.contains("warning: it is itself a command"))
        try #"{"wakePhrase": "  "}"#.write(to: config, atomically: true, encoding: .utf8)
        let empty = try Fixtures.run(Fixtures.heedBinary, ["listen", "--check-wake-phrase", "--config", config.path])
        #expect(empty.status == 1)
        #expect(empty.error.contains("config.json:1:16: error: 'wakePhrase' must have words"), "\(empty.error)")
    }
}
