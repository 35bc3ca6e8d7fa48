import Foundation
import HeedAudio
import HeedCore
import HeedIntents
import HeedPluginProtocol
import HeedPlugins
import HeedRuntime
import Logging
import Synchronization
import Testing
import HeedState
import HeedTesting

/// Fuzz targets: every input must end in a value or a clear error, never a signal or a hang.
///
/// Each target mutates valid seeds (shipped files, documented examples, valid plugin replies) with
/// a seeded generator, so a run is repeatable. CI runs a few hundred cases a target;
/// `scripts/fuzz.sh` runs many more (`HEED_FUZZ_CASES`, `HEED_FUZZ_SEED`). Before each case the
/// input is written to `HEED_FUZZ_LAST` when set, so that the script can keep the input that
/// crashed the process. Inputs that once crashed Heed live in `Tests/Fixtures/fuzz-corpus` and
/// are replayed on every run.
@Suite("Fuzzing")
struct FuzzTests {
    static let cases = ProcessInfo.processInfo.environment["HEED_FUZZ_CASES"].flatMap(Int.init) ?? 300
    static let seed = ProcessInfo.processInfo.environment["HEED_FUZZ_SEED"].flatMap(UInt64.init) ?? 19
    static let corpus = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/fuzz-corpus")

    /// Runs `body` on the corpus files of `target`, the seeds, then `cases` mutations of the seeds.
    static func fuzz(_ target: String, seeds: [[UInt8]], cases: Int = cases, _ body: ([UInt8]) async throws -> Void) async throws {
        let last = ProcessInfo.processInfo.environment["HEED_FUZZ_LAST"].map { URL(fileURLWithPath: "\($0)-\(target)") }
        let saved = ((try? FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent(target).path)) ?? [])
            .filter { !$0.hasPrefix(".") }
        var inputs = try saved.sorted().map { try [UInt8](Data(contentsOf: corpus.appendingPathComponent("\(target)/\($0)"))) }
        var mutator = Mutator(seed: seed &+ UInt64(target.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        // The seeds as they are, then mutations of them.
        inputs += seeds
        for index in 0..<cases { inputs.append(mutator.mutate(seeds[index % seeds.count])) }
        for input in inputs {
            if let last { try Data(input).write(to: last) }
            try await body(input)
        }
        print("fuzz \(target): \(inputs.count) inputs (\(saved.count) from the corpus, \(seeds.count) seeds), seed \(seed), none crashed or hung")
    }

    // MARK: WAV headers

    @Test func wavHeaders() async throws {
        var stereo = WAVBuilder()
        stereo.channels = 2
        stereo.sampleRate = 44_100
        var chunky = WAVBuilder()
        chunky.extraChunk = true
        let seeds = [WAVBuilder().data, stereo.data, chunky.data].map { [UInt8]($0) }
        try await Self.fuzz("wav", seeds: seeds) { input in
            do {
                let audio = try AudioFile.decode(Data(input), format: .wav, source: "fuzz.wav")
                #expect(audio.sampleRate == 16_000)
            } catch {
                #expect(!"\(error)".isEmpty)
            }
        }
    }

    // MARK: Intent and rule files

    @Test func intentAndRuleFiles() async throws {
        let root = Fixtures.packageRoot
        let intentFiles = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("intents").path)
            .filter { $0.hasSuffix(".json") }.sorted()
            .map { (name: $0, text: try String(contentsOf: root.appendingPathComponent("intents/\($0)"), encoding: .utf8)) }
        let rules = try String(contentsOf: root.appendingPathComponent("grammars/intent-phrases.gram"), encoding: .utf8)
        let seeds = intentFiles.map { [UInt8]($0.text.utf8) } + [[UInt8](rules.utf8)]
        // Fewer cases: each builds a catalog and parses with it.
        try await Self.fuzz("intents", seeds: seeds, cases: max(1, Self.cases / 3)) { input in
            let text = String(decoding: input, as: UTF8.self)
            // The mutated text stands in for one intent file or for the rule file.
            let asRules = text.contains("#JSGF") || text.contains("public <")
            let intents = intentFiles.map { ($0.name, $0.text) }.filter { asRules || $0.0 != intentFiles[0].name }
            do {
                let catalog = try IntentCatalog(
                    intentSources: asRules ? intents : [("fuzz.json", text)] + intents,
                    ruleSources: [("intent-phrases.gram", asRules ? text : rules)])
                _ = catalog.parser(vocabulary: [:]).parse("set a timer for ten minutes")
            } catch let error as SourceError {
                #expect(error.description.hasPrefix("fuzz.json:") || error.description.hasPrefix("intent-phrases.gram:") || error.description.contains(".json:"))
            }
        }
    }

    // MARK: State files

    @Test func stateFiles() async throws {
        let folder = try TemporaryFolder.make()
        let authorization = #"{"apps": {"org.heed.timer": {"status": "authorized", "decided": "2026-01-01T09:30:00Z"}}, "speech": {"org.heed.timer": {"permission": "granted", "decided": "2026-01-01T09:30:00Z"}}, "version": 1}"#
        let vocabulary = #"{"apps": {"org.heed.media": {"playlistTitle": {"overrides": {"quixotiq": {"kind": "soundsLike", "phones": [["K", "W", "IH", "K"]], "text": "quick so tick"}}, "terms": ["Road Trip", "Quixotiq"]}}}, "generation": 3, "version": 1}"#
        let config = #"{"policyFile": "/etc/heed/policy.json", "spokenResponses": true, "stateDirectory": "/tmp/x"}"#
        let policy = #"{"restricted": ["org.heed.media", "com.example.recorder"]}"#
        let seeds = [authorization, vocabulary, config, policy].map { [UInt8]($0.utf8) }
        let media = PluginManifest(
            appID: "org.heed.media", displayName: "Music", executable: "x", intents: ["playMedia"], vocabularyTypes: ["playlistTitle"],
            directory: folder)
        try await Self.fuzz("state", seeds: seeds) { input in
            let data = Data(input)
            let state = folder.appendingPathComponent("state")
            try? FileManager.default.removeItem(at: state)
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            try data.write(to: state.appendingPathComponent("authorization.json"))
            try data.write(to: state.appendingPathComponent("vocabulary.json"))
            try data.write(to: state.appendingPathComponent("config.json"))
            try data.write(to: state.appendingPathComponent("policy.json"))
            let store = AuthorizationStore(stateDirectory: state, policyFile: state.appendingPathComponent("policy.json"))
            let vocabularyStore = VocabularyStore(dataDirectory: state, manifests: [media])
            // Each reader returns or throws; none may trap.
            _ = try? store.records(.siri)
            _ = try? store.records(.spokenResponses)
            _ = try? store.policy()
            _ = try? vocabularyStore.entries()
            _ = try? HeedConfiguration.load(file: state.appendingPathComponent("config.json"))
            do {
                _ = try store.records(.siri)
            } catch {
                #expect("\(error)".contains("authorization.json") || "\(error)".contains("policy.json"), "\(error)")
            }
        }
    }

    // MARK: Plugin protocol messages, through a real child process

    @Test func pluginReplies() async throws {
        let folder = try TemporaryFolder.make()
        let store = try DispatchTests.store(authorized: ["org.heed.fault"])
        let valid = [
            #"{"type":"resolve","id":$ID,"outcome":"success","value":90}"#,
            #"{"type":"resolve","id":$ID,"outcome":"disambiguation","values":[1,2,"last"]}"#,
            #"{"type":"resolve","id":$ID,"outcome":"confirmationRequired","value":3}"#,
            #"{"type":"resolve","id":$ID,"outcome":"needsValue"}"#,
            #"{"type":"resolve","id":$ID,"outcome":"unsupported","reason":"no"}"#,
            #"{"type":"confirm","id":$ID,"outcome":"ready"}"#,
            #"{"type":"confirm","id":$ID,"outcome":"failure","reason":"not now"}"#,
            #"{"type":"handle","id":$ID,"outcome":"success","response":"Done {x}."}"#,
            #"{"type":"notification","text":"Ding."}"#,
        ]
        let endings = Mutex<[String: Int]>([:])
        // Each case starts a plugin process: fewer cases than the in-process targets.
        // Well-formed replies with values of every kind, for the type checks behind the parser.
        let values = ["90", "1.5", "-0", "0", "1e19", "-1e300", "\"ten\"", "\"last\"", "true", "null", "[]", "[1,[2]]", "{\"minutes\":5}", "\"\\u001b[8m\""]
        let typed = values.flatMap { value in
            [
                #"{"type":"resolve","id":$ID,"outcome":"success","value":\#(value)}"#,
                #"{"type":"resolve","id":$ID,"outcome":"confirmationRequired","value":\#(value)}"#,
                #"{"type":"resolve","id":$ID,"outcome":"disambiguation","values":[\#(value),3]}"#,
            ]
        }
        try await Self.fuzz("plugin", seeds: (valid + typed).map { [UInt8]($0.utf8) }, cases: max(1, Self.cases / 6)) { input in
            // The mutated line, then valid lines so that a conversation can go on past it.
            var lines = [String(decoding: input.filter { $0 != 0x0A }, as: UTF8.self)]
            lines += [valid[0], valid[5], valid[7]]
            let manifest = try ProbingRegressionTests.scriptedPlugin(lines, in: folder)
            // A reply with the wrong id is waited for until the time limit: keep it short.
            let limits = PluginLimits(operationTimeLimit: .milliseconds(300), startTimeLimit: .seconds(3), initialRestartDelay: .milliseconds(10))
            let (result, _, _) = await ProbingRegressionTests.dispatch(
                [manifest], store: store, answers: ["yes", "the first one", "ten minutes"], limits: limits)
            #expect(!result.message.unicodeScalars.contains { DisplayText.isUnsafe($0) })
            endings.withLock { $0[result.ending.description, default: 0] += 1 }
            if ProcessInfo.processInfo.environment["HEED_FUZZ_VERBOSE"] != nil { print("fuzz plugin: \(lines[0]) → \(result.ending): \(result.message)") }
        }
        // The cases really ran conversations with real processes, and some got through.
        #expect(try ProcessCounter.starts(in: folder) >= Self.cases / 6)
        #expect(endings.withLock { $0.filter { $0.key != "failure" }.values.reduce(0, +) } > 0)
        print("fuzz plugin endings: \(endings.withLock { $0 }.sorted { $0.key < $1.key })")
    }
}

/// Mutates bytes the way a fuzzer does: bit flips, interesting numbers and tokens, deletions,
/// duplications, truncation.
struct Mutator {
    private var generator: SeededGenerator

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    static let tokens: [[UInt8]] = [
        "1e19", "9.3e18", "-1e400", "1e308", "9223372036854775807", "-0", "0.5", "NaN", "null", "true", "\"\"", "[]", "{}",
        "[[[[[[[[", "]]]]", "{\"a\":", "\\u0000", "\\ud800", "\u{1B}[8m", "\r", "\"", "\\", "|", "(", ")", "[", "]", "{", "}",
        "<", ">", "*", "+", ";", "=", "#JSGF V1.0;", "{duration}", "<number>", "public <x> = ", String(repeating: "a", count: 300),
        "\"appId\"", "\"version\": 2", "\"generation\": 1e19", "\"status\": \"restricted\"",
    ].map { [UInt8]($0.utf8) }

    static let numbers: [UInt32] = [0, 1, 2, 15, 16, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF]

    mutating func mutate(_ seed: [UInt8]) -> [UInt8] {
        var bytes = seed
        for _ in 0...Int.random(in: 0...2, using: &generator) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<8, using: &generator) {
            case 0 where !bytes.isEmpty:
                bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 1 where !bytes.isEmpty:
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            case 2:
                let number = Self.numbers.randomElement(using: &generator)!
                let end = min(bytes.count, position + 4)
                bytes.replaceSubrange(position..<end, with: (0..<4).map { UInt8(truncatingIfNeeded: number >> (8 * $0)) })
            case 3:
                bytes.insert(contentsOf: Self.tokens.randomElement(using: &generator)!, at: position)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &generator))
                bytes.removeSubrange(position..<end)
            case 5 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...64, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            case 6:
                bytes = Array(bytes.prefix(position))
            default:
                let end = min(bytes.count, position + Int.random(in: 0...8, using: &generator))
                bytes.replaceSubrange(position..<end, with: Self.tokens.randomElement(using: &generator)!)
            }
        }
        return bytes
    }
}
