import HeedCore
import Testing
@testable import HeedIntents

@Suite struct ShippedParserTests {
    private static let catalog: IntentCatalog? = try? Package.shipped()

    private func best(_ text: String) throws -> IntentMatch? {
        try #require(Self.catalog).parse(text).first
    }

    @Test(arguments: [
        ("set a timer for ten minutes", "setTimer", ["duration": ParameterValue.duration(seconds: 600)]),
        ("Set a pasta timer for ten minutes.", "setTimer", ["duration": .duration(seconds: 600), "label": .vocabulary("pasta")]),
        ("start a five minute egg timer", "setTimer", ["duration": .duration(seconds: 300), "label": .vocabulary("egg")]),
        ("set a timer", "setTimer", [:]),
        ("timer for an hour and a half", "setTimer", ["duration": .duration(seconds: 5400)]),
        ("cancel the timer", "cancelTimer", [:]),
        ("how much time is left", "timeRemaining", [:]),
        ("how long is left on my timer", "timeRemaining", [:]),
        ("pause", "pause", [:]),
        ("pause the music", "pauseMedia", [:]),
        ("resume", "resume", [:]),
        ("continue the music please", "resumeMedia", [:]),
        ("next track", "nextTrack", [:]),
        ("play the previous song", "previousTrack", [:]),
        ("set the volume to fifty percent", "setVolume", ["level": .integer(50)]),
        ("volume a hundred", "setVolume", ["level": .integer(100)]),
        ("start a thirty minute run workout", "startWorkout", ["goal": .duration(seconds: 1800), "workoutName": .vocabulary("run")]),
        ("start a run workout for thirty minutes", "startWorkout", ["goal": .duration(seconds: 1800), "workoutName": .vocabulary("run")]),
        ("begin a yoga workout", "startWorkout", ["workoutName": .vocabulary("yoga")]),
        ("start a bike ride for an hour", "startWorkout", ["goal": .duration(seconds: 3600), "workoutName": .vocabulary("cycle")]),
        ("pause my workout", "pauseWorkout", [:]),
        ("resume the workout", "resumeWorkout", [:]),
        ("end workout", "endWorkout", [:]),
        ("cancel my workout", "cancelWorkout", [:]),
        ("stop", "stop", [:]),
        ("start", "start", [:]),
        ("add milk to my shopping list", "addToList", ["item": .vocabulary("milk"), "list": .vocabulary("shopping")]),
        ("put toilet paper on the grocery list", "addToList", ["item": .vocabulary("toilet paper"), "list": .vocabulary("shopping")]),
        ("create a new note", "createNote", [:]),
    ])
    func shippedSentences(text: String, intent: String, parameters: [String: ParameterValue]) throws {
        #expect(try best(text) == IntentMatch(intent: intent, parameters: parameters))
    }

    @Test(arguments: ["set the volume to a hundred and one", "play the playlist morning jazz", "order a pizza", "", "pause pause"])
    func notMatched(text: String) throws {
        #expect(try #require(Self.catalog).parse(text).isEmpty)
    }

    @Test func registeredVocabulary() throws {
        let parser = try #require(Self.catalog).parser(vocabulary: [
            "playlistTitle": ["Morning Jazz", "Chill-Out Mix"],
            "workoutName": ["Interval Run"],
            "listItem": ["Oat Milk"],
            "noteTitle": ["Ideas"],
        ])
        #expect(parser.parse("play the playlist morning jazz").first == IntentMatch(intent: "playMedia", parameters: ["playlist": .vocabulary("Morning Jazz")]))
        #expect(parser.parse("put on my chill out mix playlist").first?.parameters["playlist"] == .vocabulary("Chill-Out Mix"))
        #expect(parser.parse("start an interval run workout").first?.parameters["workoutName"] == .vocabulary("Interval Run"))
        #expect(parser.parse("start a run workout").first?.parameters["workoutName"] == .vocabulary("run"))
        #expect(parser.parse("add oat milk to my to do list").first?.parameters == ["item": .vocabulary("Oat Milk"), "list": .vocabulary("to do")])
        #expect(parser.parse("create a note called ideas").first?.parameters == ["title": .vocabulary("Ideas")])
    }

    /// The catalog makes its parser on the first parse; copies share it, and threads parsing at
    /// once get what one thread gets.
    @Test func theParserMadeOnFirstUseIsShared() async throws {
        let sentences = ["set a timer for ten minutes", "pause", "add milk to my shopping list", "order a pizza"]
        let catalog = try Package.shipped()
        let copies = (0..<8).map { _ in catalog }
        let together = await withTaskGroup(of: [IntentMatch?].self) { group in
            for copy in copies { group.addTask { sentences.map { copy.parse($0).first } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let alone = try sentences.map { try Package.shipped().parse($0).first }
        #expect(together.count == 8)
        #expect(together.allSatisfy { $0 == alone })
        #expect(alone[0]?.intent == "setTimer" && alone[3] == nil)
    }
}

@Suite struct BaristaTests {
    private static let catalog: IntentCatalog? = try? Package.barista()

    /// Every label value of each slot in the benchmark's label file (after strip).
    static let labels: [String: [String]] = [
        "size": ["small", "medium", "large", "eight ounce", "twelve ounce", "sixteen ounce", "twenty ounce"],
        "roast": ["light roast", "medium roast", "dark roast"],
        "numberOfShots": ["single shot", "double shot", "triple shot"],
        "coffeeDrink": [
            "americano", "cappuccino", "espresso", "iced mocha", "latte", "mocha", "coffee", "drip coffee", "house coffee", "iced coffee",
        ],
        "milkAmount": ["milk", "skim milk", "whole milk", "soy milk", "almond milk", "cream"].flatMap { milk in
            [milk] + ["a little bit of", "a bit of", "some", "a lot of", "lots of"].map { "\($0) \(milk)" }
        },
        "sugarAmount": ["sugar", "brown sugar", "sweetener"].flatMap { sugar in
            [sugar] + ["a little bit of", "a bit of", "some", "a lot of", "lots of"].map { "\($0) \(sugar)" }
        },
    ]

    static let carriers = ["brew", "can I get", "can I have", "I want", "get me", "give me", "I'd like", "make me", "may I have"]

    /// Builds an order the way SOURCE.md describes the carrier phrases.
    static func sentence(carrier: String, slots: [String: String], modifierOrder: [String]) -> String {
        var words = [carrier, "a"]
        words += modifierOrder.compactMap { slots[$0] }
        words.append(slots["coffeeDrink"] ?? "")
        let extras = ["milkAmount", "sugarAmount"].compactMap { slots[$0] }
        if !extras.isEmpty { words.append("with " + extras.joined(separator: " and ")) }
        return words.joined(separator: " ")
    }

    @Test(arguments: [
        ["coffeeDrink": "iced coffee", "numberOfShots": "triple shot", "roast": "light roast"],
        ["coffeeDrink": "mocha", "milkAmount": "soy milk", "numberOfShots": "single shot"],
        ["coffeeDrink": "iced mocha", "roast": "light roast", "size": "eight ounce"],
        ["coffeeDrink": "drip coffee", "numberOfShots": "double shot", "sugarAmount": "a bit of sweetener"],
        ["coffeeDrink": "house coffee", "sugarAmount": "a lot of sweetener"],
        ["coffeeDrink": "drip coffee"],
        ["coffeeDrink": "latte", "milkAmount": "a little bit of skim milk", "size": "twelve ounce", "sugarAmount": "some brown sugar"],
        ["coffeeDrink": "americano", "roast": "dark roast", "size": "twenty ounce", "numberOfShots": "double shot", "milkAmount": "lots of almond milk"],
    ])
    func labelledOrders(slots: [String: String]) throws {
        let catalog = try #require(Self.catalog)
        let orders = [["size", "roast", "numberOfShots"], ["numberOfShots", "roast", "size"], ["roast", "size", "numberOfShots"]]
        for (index, carrier) in Self.carriers.enumerated() {
            let text = Self.sentence(carrier: carrier, slots: slots, modifierOrder: orders[index % orders.count])
            let match = catalog.parse(text).first
            #expect(match?.intent == "orderDrink", "\(text)")
            #expect(match?.parameters.mapValues(\.spokenWords) == slots, "\(text)")
        }
    }

    /// Every label value of every slot comes back exactly as the label string.
    @Test func everyLabelValue() throws {
        let catalog = try #require(Self.catalog)
        for (slot, values) in Self.labels.sorted(by: { $0.key < $1.key }) {
            for value in values {
                var slots = ["coffeeDrink": "latte"]
                slots[slot] = value
                let text = Self.sentence(carrier: "can I get", slots: slots, modifierOrder: ["size", "roast", "numberOfShots"])
                #expect(catalog.parse(text).first?.parameters.mapValues(\.spokenWords) == slots, "\(text)")
            }
        }
    }

    @Test func valuesAreTypedAsTheIntentFileSays() throws {
        let match = try #require(Self.catalog).parse("may I have a large iced mocha with some cream and sugar please").first
        #expect(match?.parameters == [
            "size": .enumeration("large"), "coffeeDrink": .enumeration("iced mocha"),
            "milkAmount": .phrase("some cream"), "sugarAmount": .phrase("sugar"),
        ])
        #expect(try #require(Self.catalog).parse("get me a large large latte").isEmpty)
    }
}

@Suite struct AnswerCatalogTests {
    @Test func answersToPrompts() throws {
        let catalog = try Package.shipped()
        let duration = try #require(catalog.answerCatalog(intent: "setTimer", parameter: "duration"))
        #expect(duration.parse("twenty minutes").first == IntentMatch(intent: "setTimer", parameters: ["duration": .duration(seconds: 1200)]))
        #expect(duration.grammar().jsgf.contains("<heed_intent_setTimer> = <heed_duration>;"))
        let workout = try #require(catalog.answerCatalog(intent: "startWorkout", parameter: "workoutName"))
        #expect(workout.parser(vocabulary: ["workoutName": ["Interval Run"]]).parse("interval run").first?.parameters == ["workoutName": .vocabulary("Interval Run")])
        #expect(catalog.answerCatalog(intent: "setTimer", parameter: "nope") == nil)
    }
}

@Suite struct TextNormalizerTests {
    /// Text of ASCII letters and spaces takes a short way; it must split as the general way does.
    @Test(arguments: [
        ("Road Trip Classics", ["road", "trip", "classics"]),
        ("  two   spaces ", ["two", "spaces"]),
        ("Route 66", ["route", "sixty", "six"]),
        ("Don't Stop", ["don't", "stop"]),
        ("café del mar", ["café", "del", "mar"]),
        ("rock-n-roll", ["rock", "n", "roll"]),
        ("", []),
    ])
    func wordsAreLowerCaseAndSplit(text: String, words: [String]) {
        #expect(TextNormalizer.words(text) == words)
    }
}
