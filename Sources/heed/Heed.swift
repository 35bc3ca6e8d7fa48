import ArgumentParser
import Foundation
import HeedSpeech

/// The `heed` command: argument parsing and wiring only.
@main
struct Heed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heed",
        abstract: "Offline voice commands: recognize speech, turn it into intents, carry them out through plugins.",
        discussion: """
            Exit status: 0 success, 1 failure (an unreadable file, a bad grammar, a decoder \
            error), 2 usage error (unknown option, missing argument).
            """,
        version: "0.1.0",
        subcommands: [
            Listen.self, Recognize.self, Eval.self, Run.self, GrammarCommand.self, Plugins.self, Auth.self, Vocab.self, Adapt.self, Serve.self,
        ]
    )

    /// Runs the command and maps errors to Heed's exit statuses: 2 for usage, 1 for failures.
    static func main() async {
        let status: Int32
        do {
            var command = try parseAsRoot()
            // Before any other thread allocates: one heap for all of the listener's threads, 6 MB
            // off its peak. Not for the service, whose decoders run at once: with eight streams
            // on two cores the shared heap's lock cost a third more CPU (docs/MEASUREMENTS.md).
            if command is Listen { Allocator.limitArenas(to: 1) }
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            let code = exitCode(for: error)
            // Heed's own errors render themselves; ArgumentParser renders its own.
            let message = !(error is ExitCode) && code == .failure
                ? "heed: error: \(error)" : fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                status = 0
            } else {
                if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
                status = code == .validationFailure ? 2 : 1
            }
        }
        Foundation.exit(status)
    }
}
