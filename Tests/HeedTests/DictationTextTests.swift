import HeedIntents
import Testing

/// Spoken punctuation, amounts and capitals in dictated text.
struct DictationTextTests {
    @Test(arguments: [
        ("hello comma how are you question mark", "Hello, how are you?"),
        ("it works period thanks full stop", "It works. Thanks."),
        ("wow exclamation mark really exclamation point", "Wow! Really!"),
        ("dear ann colon new line the meeting moved new paragraph bye", "Dear ann:\nThe meeting moved\n\nBye"),
        ("first semicolon second semi colon third", "First; second; third"),
        ("he said open quote yes close quote", "He said “yes”"),
        ("see open parenthesis page two close parenthesis", "See (page two)"),
        ("well dash maybe", "Well – maybe"),
        ("e hyphen mail", "E-mail"),
        ("comma", ","),
        ("", ""),
    ])
    func punctuationWordsBecomeMarks(spoken: String, text: String) {
        #expect(DictationText.format(spoken) == text)
    }

    @Test(arguments: [
        ("buy twenty five apples", "Buy 25 apples"),
        ("one of them", "One of them"),
        ("i have two cats and twelve dogs", "I have two cats and 12 dogs"),
        ("a hundred and three people", "103 people"),
        ("two point five percent", "2.5%"),
        ("fifty percent off", "50% off"),
        ("nine thousand nine hundred ninety nine", "9999"),
        ("zero", "Zero"),
        ("zero point five", "0.5"),
        ("meet at ten period i'm late", "Meet at 10. I'm late"),
    ])
    func amountsBecomeDigits(spoken: String, text: String) {
        #expect(DictationText.format(spoken) == text)
    }

    @Test func theWordsOfPunctuationAreListedForTheRecognizer() {
        let words = DictationText.punctuationWords
        for word in ["comma", "period", "full", "stop", "question", "mark", "new", "line", "paragraph"] {
            #expect(words.contains(word), "\(word)")
        }
    }
}
