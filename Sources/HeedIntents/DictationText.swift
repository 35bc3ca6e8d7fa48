/// Turns dictated words into text: spoken punctuation becomes marks, amounts become digits,
/// sentences start with a capital.
///
/// ```swift
/// DictationText.format("hi comma can we meet at ten thirty question mark new line thanks")
/// // "Hi, can we meet at 10 30?\nThanks"
/// ```
///
/// - Punctuation words, said as such, become marks: "comma", "period" or "full stop",
///   "question mark", "exclamation mark" or "exclamation point", "colon", "semicolon",
///   "new line", "new paragraph", "open quote"/"close quote", "open parenthesis"/"close
///   parenthesis", "hyphen", "dash" (a spaced en dash). The word "period" is always the mark,
///   as in Apple's dictation.
/// - An amount of two words or more ("twenty five", "a hundred and three", "two point five")
///   or from ten up ("twelve") is written in digits; "zero" to "nine" alone stay words ("one of
///   them"), as style guides write them. "percent" after an amount gives `%`.
/// - The first word, and each word after `.`, `?`, `!` or a new line, starts with a capital;
///   so does "i" ("i'm" → "I'm").
public enum DictationText {
    /// A spoken mark: its text and how it joins the words around it.
    private struct Mark {
        var text: String
        /// No space before it (`,` `.` `)` closing quote, and new lines).
        var attachesLeft: Bool
        /// No space after it (`(`, opening quote, `-`, new lines).
        var attachesRight: Bool
        /// A capital follows it.
        var endsSentence: Bool

        static func trailing(_ text: String, endsSentence: Bool = false) -> Mark {
            Mark(text: text, attachesLeft: true, attachesRight: false, endsSentence: endsSentence)
        }
        static func opening(_ text: String) -> Mark { Mark(text: text, attachesLeft: false, attachesRight: true, endsSentence: false) }
        static func newLine(_ text: String) -> Mark { Mark(text: text, attachesLeft: true, attachesRight: true, endsSentence: true) }
    }

    /// Spoken punctuation, as word sequences.
    private static let marks: [(words: [String], mark: Mark)] = [
        (["comma"], .trailing(",")),
        (["period"], .trailing(".", endsSentence: true)),
        (["full", "stop"], .trailing(".", endsSentence: true)),
        (["question", "mark"], .trailing("?", endsSentence: true)),
        (["exclamation", "mark"], .trailing("!", endsSentence: true)),
        (["exclamation", "point"], .trailing("!", endsSentence: true)),
        (["colon"], .trailing(":")),
        (["semicolon"], .trailing(";")),
        (["semi", "colon"], .trailing(";")),
        (["new", "line"], .newLine("\n")),
        (["new", "paragraph"], .newLine("\n\n")),
        (["open", "quote"], .opening("“")),
        (["close", "quote"], .trailing("”")),
        (["open", "parenthesis"], .opening("(")),
        (["close", "parenthesis"], .trailing(")")),
        (["hyphen"], Mark(text: "-", attachesLeft: true, attachesRight: true, endsSentence: false)),
        (["dash"], Mark(text: " –", attachesLeft: true, attachesRight: false, endsSentence: false)),
    ]

    /// The words of the spoken punctuation, for the recognizer's vocabulary.
    public static var punctuationWords: [String] { Array(Set(marks.flatMap(\.words))).sorted() }

    /// Formats dictated words.
    /// - Parameter spoken: Lower-case words separated by spaces, as the recognizer gives them.
    /// - Returns: The text to insert.
    public static func format(_ spoken: String) -> String {
        let words = spoken.split(separator: " ")
        var cursor = WordCursor(words)
        var text = ""
        /// Whether the next word follows without a space.
        var glued = true
        var capitalize = true

        func appendWord(_ word: String) {
            if !glued { text += " " }
            text += capitalize ? capitalized(word) : (word == "i" || word.hasPrefix("i'") ? capitalized(word) : word)
            glued = false
            capitalize = false
        }

        while !cursor.isAtEnd {
            if let (length, mark) = marks.lazy.filter({ cursor.peekSequence($0.words) }).map({ ($0.words.count, $0.mark) }).first {
                cursor.index += length
                if !glued && !mark.attachesLeft { text += " " }
                text += mark.text
                glued = mark.attachesRight
                if mark.endsSentence { capitalize = true }
                continue
            }
            if let amount = amount(&cursor) {
                appendWord(amount)
            } else if let word = cursor.current {
                appendWord(String(word))
                cursor.index += 1
            }
        }
        return text
    }

    /// An amount at the cursor in digits, or `nil` (the cursor stays) when the words there are
    /// no amount or a lone "zero" to "nine".
    private static func amount(_ cursor: inout WordCursor) -> String? {
        let start = cursor.index
        guard let integer = SpokenNumbers.integer(&cursor) else { return nil }
        var text = String(integer)
        if cursor.current == "point" {
            var digits = ""
            var probe = cursor
            probe.index += 1
            while let word = probe.current, let digit = SpokenNumbers.units.firstIndex(of: String(word)) {
                digits += String(digit)
                probe.index += 1
            }
            if !digits.isEmpty {
                text += "." + digits
                cursor = probe
            }
        }
        if cursor.index - start == 1, integer < 10 {
            cursor.index = start
            return nil
        }
        if cursor.current == "percent" {
            text += "%"
            cursor.index += 1
        }
        return text
    }

    private static func capitalized(_ word: String) -> String {
        word.prefix(1).uppercased() + word.dropFirst()
    }
}

extension WordCursor {
    /// Whether `words` come next (nothing is consumed).
    func peekSequence(_ words: [String]) -> Bool {
        words.enumerated().allSatisfy { peek($0.offset) == Substring($0.element) }
    }
}
