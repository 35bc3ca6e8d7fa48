import HeedCore
import Foundation
import Testing
import HeedIntents

/// Measures parse throughput and prints it; timing is not asserted.
///
/// Run in release for a meaningful number:
/// `swift test -c release -Xswiftc -enable-testing --filter parseThroughput`
@Test func parseThroughput() throws {
    let catalog = try IntentCatalog.load(intents: [Package.intents, Package.coffee], grammars: [Package.grammars])
    let parser = catalog.parser(vocabulary: ["playlistTitle": ["Morning Jazz", "Road Trip"], "workoutName": ["Interval Run"]])
    let sentences = [
        "set a timer for ten minutes", "set a pasta timer for an hour and a half", "pause", "pause the music",
        "start a thirty minute run workout", "start a run workout for two hours ten minutes and five seconds",
        "add milk to my shopping list", "set the volume to seventy five percent", "how much time is left on my timer",
        "play the playlist morning jazz", "next track", "can I get a large dark roast double shot americano with lots of almond milk and some brown sugar",
        "may I have a twelve ounce iced mocha", "what is the weather like", "set a timer for ninety nine seconds",
        "cancel my workout",
    ]
    var matched = 0
    let rounds = 500
    let elapsed = ContinuousClock().measure {
        for _ in 0..<rounds {
            for sentence in sentences where !parser.parse(sentence).isEmpty { matched += 1 }
        }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let count = rounds * sentences.count
    print("parseThroughput: \(count) sentences in \(String(format: "%.3f", seconds)) s = \(Int(Double(count) / seconds)) sentences/s")
    #expect(matched == rounds * (sentences.count - 1))
}
