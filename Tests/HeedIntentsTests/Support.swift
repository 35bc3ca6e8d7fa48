import HeedCore
import Foundation
@testable import HeedIntents

/// Paths in the package, found from this file so tests run from any directory.
enum Package {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let intents = root.appendingPathComponent("intents")
    static let grammars = root.appendingPathComponent("grammars")
    static let coffee = intents.appendingPathComponent("examples/coffee.json")

    /// The shipped intents with the shipped rules.
    static func shipped() throws -> IntentCatalog { try IntentCatalog.load(intents: [intents], grammars: [grammars]) }

    /// The coffee example alone.
    static func barista() throws -> IntentCatalog { try IntentCatalog.load(intents: [coffee], grammars: [grammars]) }
}

/// Wraps intents in a file so a test can write just the intents.
func intentFile(_ intents: String) -> String {
    "{\n  \"domain\": \"test\",\n  \"intents\": [\n\(intents)\n  ]\n}\n"
}

/// Builds a catalog from one intent file text, or returns the error it throws.
func load(_ text: String, rules: [(path: String, text: String)] = [], path: String = "intents/test.json") -> Result<IntentCatalog, SourceError> {
    do {
        return .success(try IntentCatalog(intentSources: [(path, text)], ruleSources: rules))
    } catch let error as SourceError {
        return .failure(error)
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
}

/// The rendered error of a text that must not load, or `nil` when it loads.
func loadError(_ text: String, rules: [(path: String, text: String)] = []) -> String? {
    if case .failure(let error) = load(text, rules: rules) { return error.description }
    return nil
}

/// A catalog with one intent of one parameter.
func singleSlotCatalog(type: String, extra: String = "") throws -> IntentCatalog {
    let text = intentFile(
        """
            { "name": "probe", "parameters": [{ "name": "x", "type": "\(type)"\(extra) }], "templates": ["say {x}"] }
        """
    )
    return try IntentCatalog(intentSources: [("probe.json", text)])
}
