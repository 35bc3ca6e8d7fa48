import HeedCore
import Testing
@testable import HeedIntents

@Suite struct SpokenValueTests {
    @Test(arguments: [
        ("zero", 0), ("seven", 7), ("twenty one", 21), ("a hundred", 100), ("one hundred and five", 105),
        ("one hundred five", 105), ("nine hundred ninety nine thousand nine hundred ninety nine", 999_999),
        ("a thousand", 1000), ("a thousand and one", 1001), ("twelve thousand three hundred forty five", 12_345),
        ("a hundred thousand", 100_000), ("twenty-five", 25),
    ])
    func integers(text: String, value: Int) {
        #expect(ParameterType.integer.value(fromSpoken: text) == .integer(value))
    }

    @Test(arguments: ["one oh five", "hundred", "twenty twenty", "five hundred hundred", "and five", "zero one", "thousand"])
    func notIntegers(text: String) {
        #expect(ParameterType.integer.value(fromSpoken: text) == nil)
    }

    @Test func numbers() {
        #expect(ParameterType.number.value(fromSpoken: "two point five") == .number(2.5))
        #expect(ParameterType.number.value(fromSpoken: "zero point oh five") == .number(0.05))
        #expect(ParameterType.number.value(fromSpoken: "forty two") == .number(42))
        #expect(ParameterType.number.value(fromSpoken: "two point") == nil)
        #expect(ParameterType.number.value(fromSpoken: "one point two three four five six") == nil)
        #expect(ParameterValue.number(3.25).spokenWords == "three point two five")
    }

    @Test(arguments: [("yes", true), ("yeah", true), ("sure", true), ("on", true), ("true", true), ("no", false), ("off", false), ("nope", false), ("false", false)])
    func booleans(text: String, value: Bool) {
        #expect(ParameterType.boolean.value(fromSpoken: text) == .boolean(value))
    }

    @Test(arguments: [
        ("ten minutes", 600), ("an hour and a half", 5400), ("one minute thirty seconds", 90), ("ninety seconds", 90),
        ("two and a half hours", 9000), ("half an hour", 1800), ("a minute", 60), ("half a minute", 30),
        ("thirty minute", 1800), ("one hour and thirty minutes", 5400), ("a minute and a half", 90),
        ("two hours ten minutes and five seconds", 7805), ("a hundred seconds", 100),
    ])
    func durations(text: String, seconds: Int) {
        #expect(ParameterType.duration.value(fromSpoken: text) == .duration(seconds: seconds))
    }

    @Test(arguments: ["minutes", "ten", "half a second", "a second and a half", "ten minutes and", "half an hours"])
    func notDurations(text: String) {
        #expect(ParameterType.duration.value(fromSpoken: text) == nil)
    }

    /// The grammar and the converter agree on what a duration is: hours, minutes, seconds, each at
    /// most once and in that order; "more" only alone; "an hour", "a minute".
    @Test(arguments: [
        ("five more minutes", 300), ("one more hour", 3600), ("an hour", 3600), ("one and a half hour", 5400),
        ("twenty four hours", 86400), ("two hours and a half", 9000), ("ninety minutes", 5400), ("one hour ten minutes and five seconds", 4205),
        ("a hundred minutes", 6000), ("two minutes and thirty seconds", 150),
        ("two hours three hours", nil), ("ten minutes one hour", nil), ("a minute ten minutes", nil),
        ("thirty seconds five minutes", nil), ("a hour", nil), ("an minute", nil), ("a second", nil),
        ("five more minutes ten seconds", nil), ("one hour five more minutes", nil), ("a more minute", nil),
        ("a hundred and one minutes", nil), ("a and a half hours", nil), ("a hundred and a half minutes", nil),
        ("two hundred seconds", nil), ("thirty hours", nil), ("ten hours ninety minutes", nil), ("an hour and a half and ten minutes", nil),
        ("one minute and a half ten seconds", nil), ("two hours a minute", nil),
    ] as [(String, Int?)])
    func durationGrammarAndConverterAgree(text: String, seconds: Int?) throws {
        let expected = seconds.map { ParameterValue.duration(seconds: $0) }
        #expect(ParameterType.duration.value(fromSpoken: text) == expected)
        let match = try singleSlotCatalog(type: "duration").parse("say \(text)").first
        #expect(match?.parameters["x"] == expected, "the grammar: \(String(describing: match))")
    }

    @Test func durationWords() {
        #expect(ParameterValue.duration(seconds: 600).spokenWords == "ten minutes")
        #expect(ParameterValue.duration(seconds: 5400).spokenWords == "one hour thirty minutes")
        #expect(ParameterValue.duration(seconds: 61).spokenWords == "one minute one second")
        #expect(ParameterValue.duration(seconds: 0).spokenWords == "zero seconds")
    }

    @Test(arguments: [
        ("first", Ordinal.position(1)), ("the second one", .position(2)), ("twelfth", .position(12)),
        ("twentieth", .position(20)), ("twenty first", .position(21)), ("the ninety ninth", .position(99)),
        ("the last one", .last), ("last", .last),
    ])
    func ordinals(text: String, value: Ordinal) {
        #expect(ParameterType.ordinal.value(fromSpoken: text) == .ordinal(value))
    }

    @Test(arguments: ["the", "one", "twenty", "twenty tenth", "second two"])
    func notOrdinals(text: String) {
        #expect(ParameterType.ordinal.value(fromSpoken: text) == nil)
    }

    @Test func jsonRendering() {
        #expect(ParameterValue.duration(seconds: 90).jsonText == "90")
        #expect(ParameterValue.number(2.5).jsonText == "2.5")
        #expect(ParameterValue.ordinal(.last).jsonText == "\"last\"")
        #expect(ParameterValue.phrase("a \"b\"").jsonText == #""a \"b\"""#)
        let match = IntentMatch(intent: "setTimer", parameters: ["label": .vocabulary("pasta"), "duration": .duration(seconds: 600)])
        #expect(match.jsonText == #"{"intent": "setTimer", "parameters": {"duration": 600, "label": "pasta"}}"#)
    }

    @Test func textNormalization() {
        #expect(TextNormalizer.words("Set a timer, for 10 minutes!") == ["set", "a", "timer", "for", "ten", "minutes"])
        #expect(TextNormalizer.words("I'd like 2.5 cups, 'please'") == ["i'd", "like", "two", "point", "five", "cups", "please"])
        #expect(TextNormalizer.words("volume 50%") == ["volume", "fifty", "percent"])
        #expect(TextNormalizer.words("Rock 'n' Roll -- St. Louis (Jay-Z's \"mix\")") == ["rock", "n", "roll", "st", "louis", "jay", "z's", "mix"])
    }

    /// Text of ASCII letters, spaces and punctuation is read as bytes; it must come to the words
    /// the general reading gives, on text made to hit every case (apostrophes at either end of a
    /// word and between words, runs of punctuation, tabs and line ends).
    @Test func plainTextReadsAsTheGeneralReading() {
        var generator = SeededGenerator(seed: 2_611_29)
        let pieces = ["a", "Bc", "don", "'", "''", " ", "  ", "\t", "\n", "\r\n", "-", ".", ",", "!", "?", ";", ":", "\"", "(", ")", "xYz", "q"]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(TextNormalizer.words(text) == TextNormalizer.generalWords(text), "\(text.debugDescription)")
        }
        // Text the bytes cannot read goes the general way.
        for text in ["50% off", "café", "R2D2", "a/b", "a\u{00A0}b"] {
            #expect(TextNormalizer.words(text) == TextNormalizer.generalWords(text), "\(text.debugDescription)")
        }
    }

    /// Many random values → canonical words → value, and the words are accepted by the type's grammar.
    @Test func roundTripProperty() throws {
        var generator = SeededGenerator(seed: 20_260_101)
        let types = ["integer", "number", "duration", "ordinal", "boolean"]
        let catalogs = try Dictionary(uniqueKeysWithValues: types.map { ($0, try singleSlotCatalog(type: $0)) })
        for _ in 0..<400 {
            let values: [(String, ParameterValue)] = [
                ("integer", .integer(Int.random(in: 0...999_999, using: &generator))),
                ("integer", .integer(Int.random(in: 0...120, using: &generator))),
                ("number", .number(Double(Int.random(in: 0...99_999_999, using: &generator)) / 1000)),
                ("duration", .duration(seconds: Int.random(in: 1...86_400, using: &generator))),
                ("ordinal", .ordinal(Bool.random(using: &generator) ? .last : .position(Int.random(in: 1...99, using: &generator)))),
                ("boolean", .boolean(Bool.random(using: &generator))),
            ]
            for (typeName, value) in values {
                let words = value.spokenWords
                let match = catalogs[typeName]?.parse("say \(words)").first
                #expect(match?.parameters["x"] == value, "\(typeName) \(value) → \"\(words)\"")
            }
        }
    }
}
