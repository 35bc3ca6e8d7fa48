public import HeedCore
public import HeedState
import HeedIntents

extension Grammar {
    /// Dictation with the user's registered vocabulary and a request's contextual strings
    /// (as `SFSpeechRecognitionRequest.contextualStrings`): their words join the language
    /// model, so names the dictionary lacks ("Zyrtec", a playlist title) can be dictated; the
    /// words of spoken punctuation are sure to be there.
    /// - Parameters:
    ///   - vocabulary: the registered vocabulary (its terms' words).
    ///   - contextualStrings: phrases the request expects, in any case and spelling.
    /// - Returns: The dictation grammar; pronunciations come from the dictionary, else from
    ///   the recognizer's additional pronunciations (the vocabulary's), else espeak-ng.
    public static func dictation(vocabulary: VocabularySnapshot, contextualStrings: [String]) -> Grammar {
        var words = Set(DictationText.punctuationWords)
        for term in vocabulary.terms.values.joined() { words.formUnion(VocabularyNormalizer.words(term)) }
        for phrase in contextualStrings { words.formUnion(TextNormalizer.words(phrase)) }
        return dictation(words: words.sorted())
    }
}
