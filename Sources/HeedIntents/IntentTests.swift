public import Foundation
public import HeedCore

/// Sentences with the intent and values they must parse to, as Home Assistant tests its intents:
/// `intents/tests/*.json`, checked by `heed grammar test`.
///
/// ```json
/// {
///   "vocabulary": { "playlistTitle": ["Road Trip"] },
///   "tests": [
///     { "sentences": ["set a timer for ten minutes", "ten minute timer"],
///       "intent": "setTimer", "parameters": { "duration": 600 },
///       "response": "Timer set for ten minutes." },
///     { "sentences": ["what is the weather"], "intent": null }
///   ]
/// }
/// ```
///
/// `parameters` must be exactly the values parsed (durations in seconds, ordinals as positions or
/// `"last"`, text as the value the slot gives); `"intent": null` means no intent may match;
/// `response` is optional and compared with the intent's `success` response. `vocabulary` registers
/// terms for the file's sentences.
public struct IntentTestFile: Sendable {
    /// One sentence and what it must give.
    public struct Case: Sendable {
        public var sentence: String
        /// The intent, or `nil` when no intent may match.
        public var intent: String?
        public var parameters: [String: ParameterValue]
        public var response: String?
        /// Where the sentence is written.
        public var location: SourceLocation
    }

    public var path: String
    public var cases: [Case]
    public var vocabulary: [String: [String]]

    /// Reads and checks a test file against the catalog: every intent and parameter it names must
    /// exist and every value must fit its parameter's type.
    /// - Throws: ``SourceError`` at the offending spot.
    public static func load(_ url: URL, catalog: IntentCatalog) throws -> IntentTestFile {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SourceError(
                .unreadableFile, "cannot read the test file: \(error.localizedDescription)", at: SourceLocation(path: url.relativePath, line: 1, column: 1),
                underlyingError: error)
        }
        return try parse(SourceText(path: url.relativePath, text: text), catalog: catalog)
    }

    /// Parses test file text; see ``load(_:catalog:)``.
    public static func parse(_ source: SourceText, catalog: IntentCatalog) throws -> IntentTestFile {
        let reader = JSONSchemaReader(source: source)
        let root = try reader.object(LocatedJSONParser.parse(source), "an intent test file", allowedKeys: ["tests", "vocabulary", "description"])
        var vocabulary: [String: [String]] = [:]
        if let node = root["vocabulary"] {
            let types = try reader.object(node, "'vocabulary' (vocabulary type → terms)", allowedKeys: nil)
            for member in types.members {
                vocabulary[member.key] = try reader.array(member.value, "the terms of '\(member.key)'").map { try reader.string($0, "a term") }
            }
        }
        var cases: [Case] = []
        for testNode in try root.array("tests") {
            let test = try reader.object(testNode, "a test", allowedKeys: ["sentences", "intent", "parameters", "response"])
            let intentNode = try test.required("intent")
            var definition: IntentDefinition?
            if case .null = intentNode.kind {
                definition = nil
            } else {
                let name = try reader.string(intentNode, "'intent' (a name, or null)")
                guard let found = catalog.intent(named: name) else {
                    throw reader.error("unknown intent '\(name)'", at: intentNode.location)
                }
                definition = found
            }
            var parameters: [String: ParameterValue] = [:]
            if let node = test["parameters"] {
                guard let definition else { throw reader.error("a test without an intent has no parameters", at: node.location) }
                for member in try reader.object(node, "'parameters'", allowedKeys: nil).members {
                    guard let parameter = definition.parameter(named: member.key) else {
                        throw reader.error("'\(definition.name)' has no parameter '\(member.key)'", at: member.keyLocation)
                    }
                    parameters[member.key] = try value(member.value, for: parameter, reader: reader)
                }
            }
            let response = try test.optionalString("response")
            let sentenceNodes = try test.array("sentences")
            guard !sentenceNodes.isEmpty else { throw reader.error("a test needs at least one sentence", at: try test.required("sentences").location) }
            for node in sentenceNodes {
                cases.append(
                    Case(
                        sentence: try reader.string(node, "a sentence"), intent: definition?.name, parameters: parameters, response: response,
                        location: node.location))
            }
        }
        return IntentTestFile(path: source.path, cases: cases, vocabulary: vocabulary)
    }

    /// The typed value a test writes for a parameter.
    private static func value(_ node: JSONNode, for parameter: ParameterDefinition, reader: JSONSchemaReader) throws -> ParameterValue {
        func bad(_ expected: String) -> SourceError {
            reader.error("'\(parameter.name)' is \(parameter.type.name): expected \(expected), found \(node.kindName)", at: node.location)
        }
        switch (parameter.type, node.kind) {
        case (.integer, .number(let number)):
            guard number.rounded() == number, abs(number) < 1e15 else { throw bad("a whole number") }
            return .integer(Int(number))
        case (.number, .number(let number)):
            return .number(number)
        case (.boolean, .bool(let flag)):
            return .boolean(flag)
        case (.duration, .number(let seconds)):
            guard seconds.rounded() == seconds, seconds >= 0, seconds < 1e12 else { throw bad("whole seconds") }
            return .duration(seconds: Int(seconds))
        case (.ordinal, .number(let position)):
            guard position.rounded() == position, position >= 1, position < 1e15 else { throw bad("a position from 1") }
            return .ordinal(.position(Int(position)))
        case (.ordinal, .string("last")):
            return .ordinal(.last)
        case (.enumeration(let cases), .string(let text)):
            guard cases.contains(where: { $0.value == text }) else {
                throw reader.error(
                    "'\(text)' is not a case of '\(parameter.name)'; its cases are \(cases.map { "'\($0.value)'" }.joined(separator: ", "))",
                    at: node.location)
            }
            return .enumeration(text)
        case (.vocabulary, .string(let text)):
            return .vocabulary(text)
        case (.phrase, .string(let text)):
            return .phrase(text)
        case (.integer, _): throw bad("a whole number")
        case (.number, _): throw bad("a number")
        case (.boolean, _): throw bad("true or false")
        case (.duration, _): throw bad("a number of seconds")
        case (.ordinal, _): throw bad("a position from 1 or \"last\"")
        case (.enumeration, _), (.vocabulary, _), (.phrase, _): throw bad("a string")
        }
    }
}

/// What `heed grammar test` found.
public struct IntentTestReport: Sendable {
    /// A sentence that did not give what its test says.
    public struct Failure: Sendable, CustomStringConvertible {
        public var location: SourceLocation
        public var sentence: String
        public var expected: String
        public var got: String

        public var description: String { "\(location): \"\(sentence)\": expected \(expected), got \(got)" }
    }

    /// Sentences checked.
    public var count = 0
    /// Sentences checked per intent; sentences that must match no intent are under ``noIntent``.
    public var countByIntent: [String: Int] = [:]
    /// The key of ``countByIntent`` for sentences that must match no intent.
    public static let noIntent = "(none)"
    public var failures: [Failure] = []

    /// Checks every sentence of the files with the catalog's parser.
    public static func run(_ files: [IntentTestFile], catalog: IntentCatalog) -> IntentTestReport {
        var report = IntentTestReport()
        for file in files {
            let parser = catalog.parser(vocabulary: file.vocabulary)
            for test in file.cases {
                report.count += 1
                report.countByIntent[test.intent ?? noIntent, default: 0] += 1
                let match = parser.parse(test.sentence).first
                let expected = describe(test.intent, test.parameters)
                let got = match.map { describe($0.intent, $0.parameters) } ?? "no intent"
                if got != expected {
                    report.failures.append(Failure(location: test.location, sentence: test.sentence, expected: expected, got: got))
                    continue
                }
                if let response = test.response, let match, let definition = catalog.intent(named: match.intent) {
                    let said = definition.response("success", values: match.parameters) ?? "no success response"
                    if said != response {
                        report.failures.append(
                            Failure(location: test.location, sentence: test.sentence, expected: "the response \"\(response)\"", got: "\"\(said)\""))
                    }
                }
            }
        }
        return report
    }

    /// `setTimer(duration: 600, label: "pizza")`, parameters in name order; `no intent`.
    static func describe(_ intent: String?, _ parameters: [String: ParameterValue]) -> String {
        guard let intent else { return "no intent" }
        let values = parameters.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.jsonText)" }
        return "\(intent)(\(values.joined(separator: ", ")))"
    }
}
