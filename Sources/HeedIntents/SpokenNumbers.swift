import HeedCore
/// Reads spoken words one at a time; the converters are small recursive-descent parsers over it.
struct WordCursor {
    let words: [Substring]
    var index = 0

    init(_ words: [Substring]) { self.words = words }

    var current: Substring? { index < words.count ? words[index] : nil }
    var isAtEnd: Bool { index == words.count }

    func peek(_ offset: Int) -> Substring? { index + offset < words.count ? words[index + offset] : nil }

    /// Consumes the current word when it is `word`.
    mutating func take(_ word: String) -> Bool {
        guard current == Substring(word) else { return false }
        index += 1
        return true
    }

    /// Consumes `words` when they come next, all of them or none.
    mutating func take(sequence words: [String]) -> Bool {
        guard words.enumerated().allSatisfy({ peek($0.offset) == Substring($0.element) }) else { return false }
        index += words.count
        return true
    }

    /// Consumes the current word when `table` has it.
    mutating func take<Value>(from table: [Substring: Value]) -> Value? {
        guard let word = current, let value = table[word] else { return nil }
        index += 1
        return value
    }
}

/// Integers, decimals and ordinals in English words, both ways.
///
/// Integers run from "zero" to "nine hundred ninety nine thousand nine hundred ninety nine",
/// with "a hundred", "a thousand" and an optional "and" after "hundred" and "thousand".
/// Digit strings such as "one oh five" are not integers: they are ambiguous with amounts
/// ("one hundred five") and only make sense for codes; a template that wants them can
/// use a phrase parameter over a digit rule.
enum SpokenNumbers {
    static let units = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    static let teens = [
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    static let ordinalUnits = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
    static let ordinalTeens = [
        "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
        "eighteenth", "nineteenth",
    ]
    static let ordinalTens = [
        "", "", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth",
    ]

    /// The largest integer that has spoken words.
    static let maximumInteger = 999_999

    private static func table(_ words: [String], offset: Int = 0) -> [Substring: Int] {
        var table: [Substring: Int] = [:]
        for (index, word) in words.enumerated() where !word.isEmpty { table[Substring(word)] = index + offset }
        return table
    }

    private static let unitValues = table(Array(units.dropFirst()), offset: 1)
    private static let teenValues = table(teens, offset: 10)
    private static let tensValues = table(tens)
    private static let digitValues = table(units).merging([Substring("oh"): 0]) { first, _ in first }
    private static let ordinalValues: [Substring: Int] = {
        var values = table(ordinalUnits).merging(table(ordinalTeens, offset: 10)) { first, _ in first }
        for (tensIndex, word) in ordinalTens.enumerated() where !word.isEmpty { values[Substring(word)] = tensIndex * 10 }
        return values
    }()

    // MARK: Words to values

    /// Parses a whole word sequence as an integer.
    /// - Parameter words: Lower-case words, e.g. `["twenty", "five"]`.
    /// - Returns: The integer, or `nil` when the words are not exactly one integer.
    static func integer(from words: [Substring]) -> Int? {
        var cursor = WordCursor(words)
        guard let value = integer(&cursor), cursor.isAtEnd else { return nil }
        return value
    }

    /// Parses the longest integer at the cursor.
    static func integer(_ cursor: inout WordCursor) -> Int? {
        if cursor.take("zero") { return 0 }
        let start = cursor.index
        if cursor.take(sequence: ["a", "thousand"]) {
            return 1000 + (andBelowThousand(&cursor) ?? 0)
        }
        guard let high = belowThousand(&cursor) else {
            cursor.index = start
            return nil
        }
        guard cursor.take("thousand") else { return high }
        return high * 1000 + (andBelowThousand(&cursor) ?? 0)
    }

    private static func andBelowThousand(_ cursor: inout WordCursor) -> Int? {
        let start = cursor.index
        _ = cursor.take("and")
        if let low = belowThousand(&cursor) { return low }
        cursor.index = start
        return nil
    }

    private static func belowThousand(_ cursor: inout WordCursor) -> Int? {
        let start = cursor.index
        let hundreds = cursor.take("a") ? 1 : cursor.take(from: unitValues)
        if let hundreds {
            if cursor.take("hundred") {
                let afterHundred = cursor.index
                _ = cursor.take("and")
                if let rest = belowHundred(&cursor) { return hundreds * 100 + rest }
                cursor.index = afterHundred
                return hundreds * 100
            }
            cursor.index = start
        }
        return belowHundred(&cursor)
    }

    private static func belowHundred(_ cursor: inout WordCursor) -> Int? {
        if let teen = cursor.take(from: teenValues) { return teen }
        if let tens = cursor.take(from: tensValues) { return tens * 10 + (cursor.take(from: unitValues) ?? 0) }
        return cursor.take(from: unitValues)
    }

    /// Parses a whole word sequence as a decimal number: an integer, then optionally "point" and up to four digits.
    /// - Parameter words: Lower-case words, e.g. `["two", "point", "five"]`.
    /// - Returns: The number, or `nil` when the words are not exactly one number.
    static func number(from words: [Substring]) -> Double? {
        var cursor = WordCursor(words)
        guard let whole = integer(&cursor) else { return nil }
        guard cursor.take("point") else { return cursor.isAtEnd ? Double(whole) : nil }
        var fraction = ""
        while let digit = cursor.take(from: digitValues) { fraction += String(digit) }
        guard !fraction.isEmpty, fraction.count <= 4, cursor.isAtEnd else { return nil }
        return Double("\(whole).\(fraction)")
    }

    /// Parses an ordinal: "[the] second [one]", "twenty first", "the last one".
    /// - Parameter words: Lower-case words.
    /// - Returns: The ordinal, or `nil` when the words are not exactly one ordinal.
    static func ordinal(from words: [Substring]) -> Ordinal? {
        var cursor = WordCursor(words)
        _ = cursor.take("the")
        let ordinal: Ordinal
        if cursor.take("last") {
            ordinal = .last
        } else if let tens = cursor.take(from: tensValues), let unit = cursor.take(from: ordinalValues), unit < 10 {
            ordinal = .position(tens * 10 + unit)
        } else if let position = cursor.take(from: ordinalValues), cursor.index == words.count || cursor.current == "one" {
            ordinal = .position(position)
        } else {
            return nil
        }
        _ = cursor.take("one")
        return cursor.isAtEnd ? ordinal : nil
    }

    // MARK: Values to words

    /// The canonical words of an integer: no "and", "one hundred" rather than "a hundred".
    /// - Parameter value: The integer.
    /// - Returns: Its words; outside 0...999,999 the decimal numeral, which has no spoken form here.
    static func words(for value: Int) -> String {
        guard (0...maximumInteger).contains(value) else { return String(value) }
        if value == 0 { return "zero" }
        var parts: [String] = []
        if value >= 1000 { parts += [wordsBelowThousand(value / 1000), "thousand"] }
        if value % 1000 > 0 { parts.append(wordsBelowThousand(value % 1000)) }
        return parts.joined(separator: " ")
    }

    private static func wordsBelowThousand(_ value: Int) -> String {
        var parts: [String] = []
        if value >= 100 { parts += [units[value / 100], "hundred"] }
        let rest = value % 100
        if rest >= 20 {
            parts.append(tens[rest / 10])
            if rest % 10 > 0 { parts.append(units[rest % 10]) }
        } else if rest >= 10 {
            parts.append(teens[rest - 10])
        } else if rest > 0 {
            parts.append(units[rest])
        }
        return parts.joined(separator: " ")
    }

    /// The canonical words of a decimal number: "two point five", at most four decimals.
    static func words(for value: Double) -> String {
        let numeral = numeral(for: value)
        let parts = numeral.split(separator: ".")
        guard let whole = parts.first.flatMap({ Int($0) }), whole <= maximumInteger else { return numeral }
        guard parts.count == 2 else { return words(for: whole) }
        let digits = parts[1].compactMap { $0.wholeNumberValue }.map { units[$0] }
        return ([words(for: whole), "point"] + digits).joined(separator: " ")
    }

    /// A decimal numeral rounded to four decimals, without a trailing ".0".
    static func numeral(for value: Double) -> String {
        guard value.isFinite else { return String(value) }
        let rounded = (value * 10_000).rounded() / 10_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
        let text = String(rounded)
        return text.contains("e" as Character) ? String(value) : text
    }

    /// The canonical words of an ordinal: "second", "twenty first", "last".
    static func words(for ordinal: Ordinal) -> String {
        switch ordinal {
        case .last: return "last"
        case .position(let position) where (1...9).contains(position): return ordinalUnits[position]
        case .position(let position) where (10...19).contains(position): return ordinalTeens[position - 10]
        case .position(let position) where (20...99).contains(position):
            let unit = position % 10
            return unit == 0 ? ordinalTens[position / 10] : "\(tens[position / 10]) \(ordinalUnits[unit])"
        case .position(let position): return "number \(words(for: position))"
        }
    }
}

/// Durations in English words, both ways, in whole seconds.
///
/// Accepted, as `<heed_duration>` in ``BuiltinRules`` says: hours, then minutes, then seconds,
/// each at most once and in that order, joined by an optional "and". The first part counts up to
/// a hundred (hours up to twenty four), singular and plural both ("a thirty minute run"), with
/// "an hour" and "a minute"; the parts after it count below sixty ("two hours fifteen minutes").
/// "and a half" ends a duration of one hour or minute part ("an hour and a half", "two and a half
/// hours"); "half an hour", "half a minute". "more" only in a duration of one part ("five more
/// minutes"). "two hours three hours", "ten hours ninety minutes" and "an hour and a half ten
/// minutes" are not durations: nobody says them, and a grammar that allowed them heard them in
/// other talk.
enum SpokenDuration {
    private static let unitSeconds: [Substring: Int] = [
        "hour": 3600, "hours": 3600, "minute": 60, "minutes": 60, "second": 1, "seconds": 1,
    ]
    /// The article a unit takes for a count of one: "an hour", "a minute"; seconds take none.
    private static let article: [Int: String] = [3600: "an", 60: "a"]

    /// Parses a whole word sequence as a duration.
    /// - Parameter words: Lower-case words, e.g. `["an", "hour", "and", "a", "half"]`.
    /// - Returns: The duration in seconds, or `nil` when the words are not one duration.
    static func seconds(from words: [Substring]) -> Int? {
        var more = WordCursor(words)
        if let count = count(&more, upTo: 100), more.take("more"), let unit = more.take(from: unitSeconds), more.isAtEnd {
            return count * unit
        }
        var cursor = WordCursor(words)
        var total = 0
        var largestUnitLeft = Int.max
        while !cursor.isAtEnd {
            let isFirst = total == 0
            if !isFirst {
                let beforeAnd = cursor.index
                if cursor.take("and"), cursor.isAtEnd { cursor.index = beforeAnd }
            }
            guard let part = part(&cursor, isFirst: isFirst), part.unit < largestUnitLeft else { return nil }
            total += part.seconds
            largestUnitLeft = part.unit
            if part.hasHalf && !cursor.isAtEnd { return nil }
        }
        return total > 0 ? total : nil
    }

    /// A count from one to `limit`.
    private static func count(_ cursor: inout WordCursor, upTo limit: Int) -> Int? {
        let start = cursor.index
        guard let integer = SpokenNumbers.integer(&cursor), (1...limit).contains(integer) else {
            cursor.index = start
            return nil
        }
        return integer
    }

    /// One part: its seconds, its unit's length in seconds, and whether it ends in a half.
    private static func part(_ cursor: inout WordCursor, isFirst: Bool) -> (seconds: Int, unit: Int, hasHalf: Bool)? {
        if isFirst, cursor.take("half") {
            for (unit, word) in article where cursor.take(word) {
                let unitWord = cursor.current
                guard cursor.take(from: unitSeconds) == unit, unitWord?.hasSuffix("s") == false else { return nil }
                return (unit / 2, unit, true)
            }
            return nil
        }
        let start = cursor.index
        // Look at the unit first: how far a count may go depends on it.
        var counted = count(&cursor, upTo: 100)
        let articleWord = counted == nil ? cursor.current : nil
        guard counted != nil || (isFirst && (cursor.take("a") || cursor.take("an"))) else { return nil }
        let halfBeforeUnit = isFirst && counted != nil && counted! < 100 && cursor.take(sequence: ["and", "a", "half"])
        guard let unit = cursor.take(from: unitSeconds) else { return nil }
        if let articleWord, article[unit] != String(articleWord) { return nil }
        let limit = !isFirst ? 59 : unit == 3600 ? 24 : 100
        if let value = counted, value > limit { counted = nil }
        guard counted != nil || articleWord != nil else {
            cursor.index = start
            return nil
        }
        let halfAfterUnit = isFirst && !halfBeforeUnit && unit > 1 && cursor.take(sequence: ["and", "a", "half"])
        guard !(halfBeforeUnit && unit == 1) else { return nil }
        let hasHalf = halfBeforeUnit || halfAfterUnit
        return ((counted ?? 1) * unit + (hasHalf ? unit / 2 : 0), unit, hasHalf)
    }

    /// The canonical words of a duration: "one hour thirty minutes", "ten seconds", "zero seconds".
    /// - Parameter seconds: The duration.
    /// - Returns: Its words; hours, minutes and seconds that are zero are left out.
    static func words(forSeconds seconds: Int) -> String {
        guard seconds > 0 else { return seconds == 0 ? "zero seconds" : "\(seconds) seconds" }
        let parts = [(seconds / 3600, "hour"), (seconds % 3600 / 60, "minute"), (seconds % 60, "second")]
        return parts.filter { $0.0 > 0 }
            .map { "\(SpokenNumbers.words(for: $0.0)) \($0.1)\($0.0 == 1 ? "" : "s")" }
            .joined(separator: " ")
    }
}

/// Yes and no in their common spoken forms: the one list the parser and the dialog grammars use.
public enum SpokenBoolean {
    /// The words that mean yes.
    public static let yesWords = ["yes", "yeah", "yep", "sure", "okay", "true", "on"]
    /// The words that mean no.
    public static let noWords = ["no", "nope", "false", "off"]
    /// The words a yes-or-no question is answered with: yes and no less "true", "on", "false" and
    /// "off", which are a setting's values, not answers, and which other talk is heard as far more
    /// often (docs/MEASUREMENTS.md, "Asking back").
    public static let answerWords = ["yes", "yeah", "yep", "sure", "okay", "no", "nope"]
    static let trueWords = Set(yesWords.map { Substring($0) })
    static let falseWords = Set(noWords.map { Substring($0) })

    /// Parses one word as a boolean.
    /// - Parameter words: Lower-case words.
    /// - Returns: The boolean, or `nil` unless the words are exactly one yes or no word.
    static func value(from words: [Substring]) -> Bool? {
        guard words.count == 1 else { return nil }
        if trueWords.contains(words[0]) { return true }
        return falseWords.contains(words[0]) ? false : nil
    }
}
