import Foundation
import HeedCore
import HeedPlugins
import Testing
import HeedTesting

@Suite("Manifests and discovery")
struct ManifestTests {
    func parse(_ text: String) throws -> PluginManifest {
        try PluginManifest.parse(SourceText(path: "plugins/x/plugin.json", text: text), directory: URL(fileURLWithPath: "/p/x"))
    }

    func manifestError(_ text: String) -> SourceError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error as? SourceError
        }
    }

    @Test func examplesLoad() throws {
        for name in ["timer", "media", "workout", "notes"] {
            let manifest = try Fixtures.manifest(name)
            #expect(manifest.appID == "org.heed.\(name)")
            #expect(!manifest.intents.isEmpty)
            #expect(manifest.usageDescription != nil)
        }
        #expect(try Fixtures.manifest("media").vocabularyTypes == ["playlistTitle"])
        #expect(try Fixtures.manifest("notes").vocabularyTypes == ["listItem", "listName", "noteTitle"])
    }

    @Test func unknownKeyIsLocated() throws {
        let error = try #require(
            manifestError(
                """
                {
                  "appId": "org.heed.x",
                  "displayName": "X",
                  "executabel": "x",
                  "intents": ["a"]
                }
                """))
        #expect(error.code == .schema)
        #expect(error.location.line == 4 && error.location.column == 3)
        #expect(error.description.hasPrefix("plugins/x/plugin.json:4:3: error: unknown key 'executabel'"))
        #expect(error.description.hasSuffix("  \"executabel\": \"x\",\n  ^"))
    }

    @Test func spokenResponseModeDefaultsToSpokenAudio() throws {
        let base = #""appId": "a.b", "displayName": "T", "executable": "t", "intents": ["a"]"#
        #expect(try parse("{\(base)}").spokenResponseMode == .spokenAudio)
        #expect(try parse("{\(base), \"spokenResponseMode\": \"none\"}").spokenResponseMode == PluginManifest.SpokenResponseMode.none)
        let error = try #require(manifestError("{\(base),\n \"spokenResponseMode\": \"loud\"}"))
        #expect("\(error.location)" == "plugins/x/plugin.json:2:24")
        #expect(error.message.contains("\"spokenAudio\" or \"none\""))
    }

    @Test func appIDMustBeReverseDNS() throws {
        let error = try #require(manifestError(#"{"appId": "timer", "displayName": "T", "executable": "t", "intents": ["a"]}"#))
        #expect("\(error.location)" == "plugins/x/plugin.json:1:11")
        #expect(error.message.contains("reverse-DNS"))
        #expect(PluginManifest.isReverseDNS("org.heed.timer"))
        #expect(!PluginManifest.isReverseDNS("org..timer"))
        #expect(!PluginManifest.isReverseDNS("org.9lives"))
    }

    @Test func intentsMustNotBeEmpty() throws {
        let error = try #require(manifestError("{\"appId\": \"a.b\", \"displayName\": \"T\",\n\"executable\": \"t\",\n  \"intents\": []}"))
        #expect("\(error.location)" == "plugins/x/plugin.json:3:14")
    }

    @Test func executableIsRequired() throws {
        let error = try #require(manifestError(#"{"appId": "a.b", "displayName": "T", "intents": ["x"]}"#))
        #expect(error.message == "missing key 'executable' in a plugin manifest")
        #expect("\(error.location)" == "plugins/x/plugin.json:1:1")
    }

    @Test func syntaxErrorsAreLocated() throws {
        let error = try #require(manifestError("{\n  \"appId\": \"a.b\",\n  \"displayName\": \"T\" \"executable\": \"t\"\n}"))
        #expect(error.code == .jsonSyntax)
        #expect("\(error.location)" == "plugins/x/plugin.json:3:22")
    }

    @Test func usageDescriptionIsOptional() throws {
        let manifest = try parse(
            #"{"appId": "a.b", "displayName": "T", "executable": "t", "intents": ["x"], "extensionOf": "a.c"}"#)
        #expect(manifest.usageDescription == nil)
        #expect(manifest.extensionOf == "a.c")
    }

    @Test func executableLookup() throws {
        let manifest = try parse(#"{"appId": "a.b", "displayName": "T", "executable": "heed-plugin-timer", "intents": ["x"]}"#)
        #expect(manifest.executableURL(productsDirectory: Fixtures.productsDirectory).path
            == Fixtures.productsDirectory.appendingPathComponent("heed-plugin-timer").path)
        var relative = manifest
        relative.executable = "bin/run"
        #expect(relative.executableURL().path == "/p/x/bin/run")
        relative.executable = "/usr/bin/env"
        #expect(relative.executableURL().path == "/usr/bin/env")
    }

    @Test func discoveryCollectsEveryError() throws {
        let root = try TemporaryFolder.make()
        defer { try? FileManager.default.removeItem(at: root) }
        func write(_ name: String, _ text: String) throws {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try text.write(to: folder.appendingPathComponent("plugin.json"), atomically: true, encoding: .utf8)
        }
        try write("a-good", #"{"appId": "org.x.good", "displayName": "Good", "executable": "g", "intents": ["x"]}"#)
        try write("b-broken", "{\n  \"appId\": \"org.x.broken\",\n  \"intents\": [1]\n}")
        try write("c-dup", #"{"appId": "org.x.good", "displayName": "Again", "executable": "g", "intents": ["x"]}"#)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("d-empty"), withIntermediateDirectories: true)

        let discovery = PluginCatalog.discover(
            in: [root, Fixtures.pluginsDirectory, root.appendingPathComponent("missing")])
        // Two plugins claim org.x.good: neither is used, and each is reported naming the other.
        #expect(discovery.manifests.map(\.appID) == ["org.heed.media", "org.heed.mpris", "org.heed.notes", "org.heed.timer", "org.heed.workout"])
        #expect(discovery.duplicates.map(\.directory.lastPathComponent) == ["a-good", "c-dup"])
        #expect(discovery.errors.count == 3)
        let messages = discovery.errors.map(\.description)
        #expect(messages[0].contains("b-broken/plugin.json:1:1: error: missing key 'displayName'"))
        #expect(messages[1].contains("a-good/plugin.json:1:11: error: app id 'org.x.good' is also claimed by"))
        #expect(messages[1].contains("c-dup/plugin.json; Heed dispatches to neither"))
        #expect(messages[2].contains("c-dup/plugin.json:1:11: error: app id 'org.x.good' is also claimed by"))
    }
}
