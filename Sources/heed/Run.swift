import ArgumentParser
import Foundation
import HeedIntents
import HeedRuntime

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn a typed command into an intent, as if it had been spoken.",
        discussion: """
            The text is parsed with the same templates that build the recognizer's grammar. \
            Numbers may be typed as numerals ("10") or words ("ten").

            Dispatch to handler plugins is not built yet: use --dry-run, which prints the \
            parsed intent. Exit status 1 when the text matches no intent.

            Examples:
              heed run --dry-run "set a timer for ten minutes"
              heed run --dry-run --json "start a thirty minute run workout"
              heed run --dry-run --intents intents/examples/coffee.json "can I get a large latte"
            """
    )

    @OptionGroup var intents: IntentOptions

    @Flag(name: .customLong("dry-run"), help: "Print the parsed intent; do not dispatch it.")
    var dryRun = false

    @Flag(help: "Print {\"intent\": NAME, \"parameters\": {...}}: numbers as numbers, durations in seconds.")
    var json = false

    @Argument(help: ArgumentHelp("What the user said.", valueName: "text"))
    var text: String

    func validate() throws {
        guard dryRun else {
            throw ValidationError("dispatching to plugins is not built yet; add --dry-run to print the parsed intent")
        }
    }

    func run() throws {
        let catalog = try intents.loadCatalog(defaultIntents: ["intents"])
        guard let match = catalog.parse(text).first else {
            if json { print("{\"intent\":null,\"parameters\":{}}") }
            printError("heed: no intent matches \"\(text)\"")
            throw ExitCode.failure
        }
        print(json ? try jsonLine(match) : IntentDescription(match).text)
    }
}

/// An intent as a person reads it: `setTimer  duration: ten minutes (600)`.
struct IntentDescription {
    var text: String

    init(_ match: IntentMatch) {
        let parameters = match.parameters.sorted { $0.key < $1.key }.map { name, value in
            let shown = value.displayText
            let raw = value.jsonText
            return raw == shown || raw == "\"\(shown)\"" ? "\(name): \(shown)" : "\(name): \(shown) (\(raw))"
        }
        text = ([match.intent] + parameters).joined(separator: "  ")
    }
}
