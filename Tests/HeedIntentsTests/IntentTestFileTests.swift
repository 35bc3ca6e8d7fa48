import Foundation
import HeedCore
import Testing

@testable import HeedIntents

/// The shipped intent tests (`intents/tests/*.json`, what `heed grammar test` runs), and the test
/// files' own errors.
@Suite struct IntentTestFileTests {
    static func shippedTests() throws -> [IntentTestFile] {
        let folder = Package.intents.appendingPathComponent("tests")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        let catalog = try Package.shipped()
        return try names.map { try IntentTestFile.load(folder.appendingPathComponent($0), catalog: catalog) }
    }

    @Test func everyShippedSentenceParsesToItsIntentAndValues() throws {
        let catalog = try Package.shipped()
        let report = IntentTestReport.run(try Self.shippedTests(), catalog: catalog)
        #expect(report.failures.isEmpty, "\(report.failures.prefix(20).map(\.description).joined(separator: "\n"))")
        // At least 25 sentences for every shipped intent, 600 in all.
        #expect(report.count >= 600)
        for intent in catalog.intents {
            #expect((report.countByIntent[intent.name] ?? 0) >= 25, "\(intent.name) has \(report.countByIntent[intent.name] ?? 0) test sentences")
        }
    }

    @Test func aWrongExpectationIsReportedWithWhatWasParsed() throws {
        let catalog = try Package.shipped()
        let text = """
            {"tests": [
              {"sentences": ["set a timer for ten minutes"], "intent": "setTimer", "parameters": {"duration": 300}},
              {"sentences": ["what is the weather"], "intent": "setTimer"},
              {"sentences": ["pause"], "intent": null}
            ]}
            """
        let file = try IntentTestFile.parse(SourceText(path: "t.json", text: text), catalog: catalog)
        let report = IntentTestReport.run([file], catalog: catalog)
        #expect(report.failures.map(\.description) == [
            #"t.json:2:18: "set a timer for ten minutes": expected setTimer(duration: 300), got setTimer(duration: 600)"#,
            #"t.json:3:18: "what is the weather": expected setTimer(), got no intent"#,
            #"t.json:4:18: "pause": expected no intent, got pause()"#,
        ])
    }

    @Test(arguments: [
        (#"{"tests": [{"sentences": ["x"], "intent": "setTimr"}]}"#, "t.json:1:43: error: unknown intent 'setTimr'"),
        (#"{"tests": [{"sentences": ["x"], "intent": "setTimer", "parameters": {"duraton": 5}}]}"#, "t.json:1:70: error: 'setTimer' has no parameter 'duraton'"),
        (#"{"tests": [{"sentences": ["x"], "intent": "setTimer", "parameters": {"duration": "ten"}}]}"#,
         "t.json:1:82: error: 'duration' is duration: expected a number of seconds, found a string"),
        (#"{"tests": [{"sentences": ["x"], "intent": "setVolume", "parameters": {"level": 4.5}}]}"#,
         "t.json:1:80: error: 'level' is integer: expected a whole number, found a number"),
        (#"{"tests": [{"sentences": [], "intent": "pause"}]}"#, "t.json:1:26: error: a test needs at least one sentence"),
        (#"{"tests": [{"sentence": ["x"], "intent": "pause"}]}"#, "t.json:1:13: error: unknown key 'sentence' in a test"),
        (#"{"tests": [{"sentences": ["x"], "intent": null, "parameters": {}}]}"#, "t.json:1:63: error: a test without an intent has no parameters"),
        (#"{"tests": [{"sentences": ["x"], "intent": "pause""#, "t.json:1:50: error: expected "),
    ])
    func badTestFilesFailAtFileLineColumn(text: String, message: String) throws {
        let catalog = try Package.shipped()
        do {
            _ = try IntentTestFile.parse(SourceText(path: "t.json", text: text), catalog: catalog)
            Issue.record("no error for \(text)")
        } catch let error as SourceError {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }
}
