import HeedClient

/// The `info` event: what Heed offers over Wyoming, in the fields `wyoming/info.py` defines
/// (every artifact has name, attribution, installed, description, version; models list languages).
enum WyomingInfo {
    /// Heed's programs: speech to text, intent recognition, intent handling, wake phrase.
    static func event(version: String, wakePhrase: String, partialResults: Bool) -> WyomingEvent {
        let heed = attribution("Heed", "")
        let sphinx = attribution("CMU Sphinx", "https://cmusphinx.github.io")
        func artifact(_ name: String, _ description: String, _ by: JSONValue, _ extra: [String: JSONValue] = [:]) -> JSONValue {
            var members: [String: JSONValue] = [
                "name": .string(name), "description": .string(description), "attribution": by, "installed": .bool(true),
                "version": .string(version),
            ]
            members.merge(extra) { _, new in new }
            return .object(members)
        }
        let english: JSONValue = .array([.string("en")])
        let asr = artifact(
            "heed", "Heed: offline speech to text for the commands of its installed intents (PocketSphinx)", heed,
            [
                "models": .array([
                    artifact("heed-intents-en-us", "the grammar of Heed's intents on the PocketSphinx en-us acoustic model", sphinx, ["languages": english])
                ]),
                "supports_transcript_streaming": .bool(partialResults),
                "requires_external_vad": .bool(true),
                "prefers_auto_gain_enabled": .bool(true),
                "prefers_noise_reduction_enabled": .bool(true),
            ])
        let intent = artifact(
            "heed", "Heed: intents from text, with typed entities (numbers, durations, ordinals)", heed,
            ["models": .array([artifact("heed-intents", "the templates of Heed's installed intents", heed, ["languages": english])])])
        let handle = artifact(
            "heed", "Heed: carries a command out through resolve, confirm and handle with the plugin of an app the user authorized", heed,
            [
                "models": .array([artifact("heed-plugins", "Heed's installed handler plugins", heed, ["languages": english])]),
                "supports_handled_streaming": .bool(false),
                "supports_home_control": .bool(false),
            ])
        let wake = artifact(
            "heed", "Heed: its wake phrase, spotted with the command grammar", heed,
            [
                "models": .array([
                    artifact(wakePhrase, "the wake phrase \"\(wakePhrase)\"", sphinx, ["languages": english, "phrase": .string(wakePhrase)])
                ])
            ])
        return WyomingEvent(
            "info",
            [
                "asr": .array([asr]), "intent": .array([intent]), "handle": .array([handle]), "wake": .array([wake]),
                "tts": .array([]), "mic": .array([]), "snd": .array([]),
            ])
    }

    private static func attribution(_ name: String, _ url: String) -> JSONValue {
        .object(["name": .string(name), "url": .string(url)])
    }
}
