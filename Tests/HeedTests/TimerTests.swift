import Foundation
import HeedCore
import Testing
import HeedTesting

/// Timers end to end: several at once, named, chosen by name or length or by asking, paused,
/// resumed, changed, listed and cancelled, through `heed run` (the real timer plugin, which keeps
/// its timers in its state folder between runs) and through `heed listen`.
@Suite("Timers end to end", .serialized)
struct TimerTests {
    /// `heed run` with a state folder of its own, from the package root.
    struct Heed {
        let state: URL
        init() throws {
            state = try TemporaryFolder.make()
            #expect(try Fixtures.run(Fixtures.heedBinary, ["auth", "grant", "org.heed.timer", "--state-dir", state.path]).status == 0)
        }

        /// Runs `heed run TEXT`; returns what it printed.
        @discardableResult
        func say(_ text: String, answers: [String] = [], status: Int32 = 0) throws -> String {
            let result = try Fixtures.run(
                Fixtures.heedBinary,
                ["run", text, "--state-dir", state.path, "--data-dir", state.appendingPathComponent("data").path]
                    + answers.flatMap { ["--answer", $0] },
                in: Fixtures.packageRoot)
            #expect(result.status == status, "\(text): \(result.output)\(result.error)")
            return result.output
        }
    }

    @Test func everyTimerCommandThroughHeedRun() throws {
        let heed = try Heed()
        #expect(try heed.say("set a pizza timer for ten minutes").contains("Pizza timer set for 10 minutes."))
        #expect(try heed.say("five minute timer").contains("Timer set for 5 minutes."))
        #expect(try heed.say("set a timer called tea for an hour and a half").contains("Tea timer set for 1 hour and 30 minutes."))
        let listed = try heed.say("what timers are running")
        #expect(listed.contains("You have 3 timers: the 5 minute timer, "), "\(listed)")
        #expect(listed.contains("the pizza timer, ") && listed.contains("the tea timer, "))

        // Several timers and none named: Heed asks which one, as SiriKit disambiguates.
        let asked = try heed.say("how much time is left", answers: ["the pizza timer"])
        #expect(asked.contains("Which one: pizza timer, 5 minute timer or tea timer?"), "\(asked)")
        #expect(asked.contains("left on your pizza timer."))
        // Chosen by name, and by length.
        #expect(try heed.say("pause the pizza timer").contains("Paused the pizza timer with "))
        #expect(try heed.say("how long is left on the pizza timer").contains("The pizza timer is paused with "))
        // What is left depends on how long the runs took: 14 or 15 minutes.
        #expect(try heed.say("add five minutes to the pizza timer").contains("Added 5 minutes to the pizza timer: 1"))
        #expect(try heed.say("take one minute off the five minute timer").contains("Took 1 minute off the 5 minute timer: "))
        // Only the pizza timer is paused: "resume the timer" needs no question.
        #expect(try heed.say("resume the timer").contains("Resumed the pizza timer: 1"))
        #expect(try heed.say("cancel the five minute timer").contains("Cancelled the 5 minute timer."))
        #expect(try heed.say("stop my pizza timer").contains("Cancelled the pizza timer."))
        // A timer that does not exist, said plainly.
        #expect(try heed.say("cancel the egg timer", status: 1).contains("There is no egg timer."))
        // The bare "pause" reaches the one timer counting.
        #expect(try heed.say("pause").contains("Paused the tea timer with 1 hour"))
        #expect(try heed.say("resume").contains("Resumed the tea timer"))
        #expect(try heed.say("cancel all timers").contains("Cancelled your timer."))
        #expect(try heed.say("what timers do i have").contains("You have no timers."))
        #expect(try heed.say("pause the timer", status: 1).contains("No timer is running."))
    }

    @Test func aTimerEndsAndSaysSo() throws {
        let heed = try Heed()
        let result = try Fixtures.run(
            Fixtures.heedBinary,
            ["run", "set an egg timer for two seconds", "--wait", "6", "--state-dir", heed.state.path, "--data-dir", heed.state.appendingPathComponent("data").path],
            in: Fixtures.packageRoot)
        #expect(result.output.contains("Egg timer set for 2 seconds."))
        #expect(result.output.contains("Your egg timer is done."), "\(result.output)")
        #expect(try heed.say("what timers do i have").contains("You have no timers."))
    }

    /// By voice: set two timers, then "pause the timer" makes Heed ask, answered by voice.
    @Test(.enabled(if: Fixtures.hasPocketSphinx && Fixtures.hasEspeak, "needs pocketsphinx-en-us and espeak-ng"))
    func timersByVoiceThroughTheListener() throws {
        let input = try Speech.utterance("hey heed", before: 1) + Speech.utterance("set a pizza timer for ten minutes", before: 0.3)
            + Speech.utterance("hey heed", before: 1) + Speech.utterance("set a timer for five minutes", before: 0.3)
            + Speech.utterance("hey heed", before: 1) + Speech.utterance("pause the timer", before: 0.3)
            + Speech.utterance("the first one", before: 0.5)
            + Speech.utterance("hey heed", before: 1) + Speech.utterance("add five minutes to the pizza timer", before: 0.3)
            + Speech.utterance("hey heed", before: 1) + Speech.utterance("cancel all timers", before: 0.3) + ListenCommandTests.silence(2)
        let home = try ListenCommandTests.Home(input: input)
        #expect(try home.heed(["auth", "grant", "org.heed.timer"]).status == 0)
        let events = try home.listen(["--activation", "wake", "--wake-threshold", "0.1"])
        let handled = ListenCommandTests.said(events, "handle").compactMap { $0["text"] as? String }
        #expect(handled.contains("Pizza timer set for 10 minutes."), "\(events)")
        #expect(handled.count == 5)
        // Two timers run: "pause the timer" makes Heed ask, and "the first one" picks the pizza timer.
        #expect(ListenCommandTests.said(events, "prompt").contains { ($0["text"] as? String)?.hasPrefix("Which one: pizza timer or ") == true }, "\(events)")
        #expect(handled.contains { $0.hasPrefix("Paused the pizza timer with ") })
        // The timer intents are contextual: heard now that timers exist.
        #expect(handled.contains { $0.hasPrefix("Added 5 minutes to the pizza timer: ") }, "\(handled)")
        #expect(handled.last == "Cancelled 2 timers.")
    }
}
