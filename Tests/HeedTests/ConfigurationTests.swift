import Foundation
import HeedCore
import HeedRuntime
import Testing
import HeedState
import HeedTesting

/// `config.json`, the XDG folders and the state file's safety rules.
@Suite("Configuration and state files")
struct ConfigurationTests {
    static func directories(_ root: URL) -> HeedDirectories {
        HeedDirectories(
            config: root.appendingPathComponent("config/heed"), state: root.appendingPathComponent("state/heed"),
            data: root.appendingPathComponent("data/heed"), home: root.appendingPathComponent("home"))
    }

    @Test func xdgVariablesWinAndRelativeOnesAreIgnored() {
        let standard = HeedDirectories.standard(environment: ["HOME": "/home/ada"])
        #expect(standard.config.path == "/home/ada/.config/heed")
        #expect(standard.state.path == "/home/ada/.local/state/heed")
        #expect(standard.data.path == "/home/ada/.local/share/heed")
        #expect(standard.configFile.path == "/home/ada/.config/heed/config.json")

        let set = HeedDirectories.standard(environment: [
            "HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st", "XDG_DATA_HOME": "relative/data",
        ])
        #expect(set.config.path == "/cfg/heed")
        #expect(set.state.path == "/st/heed")
        #expect(set.data.path == "/home/ada/.local/share/heed")  // a relative value is invalid: ignored
    }

    @Test func aMissingDefaultConfigGivesTheDefaults() throws {
        let root = try TemporaryFolder.make()
        let directories = Self.directories(root)
        let configuration = try HeedConfiguration.load(directories: directories)
        #expect(configuration.policyFile.path == "/etc/heed/policy.json")
        #expect(configuration.spokenResponses == false)
        #expect(configuration.keepHeard == false)
        #expect(configuration.stateDirectory == directories.state)
        #expect(configuration.dataDirectory == directories.data)
        #expect(configuration.configFile == nil)
    }

    @Test func keysAreReadAndPathsResolved() throws {
        let root = try TemporaryFolder.make()
        let directories = Self.directories(root)
        try FileManager.default.createDirectory(at: directories.config, withIntermediateDirectories: true)
        try """
        {
          "policyFile": "policy.json",
          "keepHeard": true,
          "spokenResponses": true,
          "stateDirectory": "~/my-state"
        }
        """.write(to: directories.configFile, atomically: true, encoding: .utf8)
        let configuration = try HeedConfiguration.load(directories: directories)
        #expect(configuration.policyFile.path == directories.config.appendingPathComponent("policy.json").path)
        #expect(configuration.spokenResponses)
        #expect(configuration.keepHeard)
        #expect(configuration.stateDirectory.path == root.appendingPathComponent("home/my-state").path)
        #expect(configuration.configFile == directories.configFile)

        // The caller's override (the CLI's --state-dir) beats the file.
        let overridden = try HeedConfiguration.load(directories: directories, stateDirectory: root.appendingPathComponent("s"))
        #expect(overridden.stateDirectory.path == root.appendingPathComponent("s").path)
        #expect(overridden.authorizationStore.stateDirectory.path == root.appendingPathComponent("s").path)
    }

    @Test(arguments: [
        ("{\n  \"spokenResponse\": true\n}", 2, 3, "unknown key 'spokenResponse'"),
        ("{\n  \"spokenResponses\": \"yes\"\n}", 2, 22, "expected 'spokenResponses' (true or false), found a string"),
        ("{\n  \"keepHeard\": 1\n}", 2, 16, "expected 'keepHeard' (true or false), found a number"),
        ("{\"policyFile\": 3}", 1, 16, "expected 'policyFile' (a path) (a string), found a number"),
        ("{\"stateDirectory\": \"\"}", 1, 20, "'stateDirectory' must not be empty"),
        ("{\n  \"policyFile\": \"/etc/heed/policy.json\",\n}", 3, 1, "expected a string key"),
        ("[]", 1, 1, "expected the Heed config (an object), found an array"),
    ])
    func configErrorsAreLocated(text: String, line: Int, column: Int, message: String) throws {
        let root = try TemporaryFolder.make()
        let file = root.appendingPathComponent("config.json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let error = try #require(throws: SourceError.self) { try HeedConfiguration.load(file: file, directories: Self.directories(root)) }
        #expect(error.location == SourceLocation(path: file.path, line: line, column: column))
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.description.hasPrefix("\(file.path):\(line):\(column): error: "))
        #expect(error.description.hasSuffix("^"))
    }

    @Test func anExplicitConfigFileMustExist() throws {
        let root = try TemporaryFolder.make()
        let file = root.appendingPathComponent("nope.json")
        let error = try #require(throws: SourceError.self) { try HeedConfiguration.load(file: file, directories: Self.directories(root)) }
        #expect(error.code == .unreadableFile)
        #expect(error.description.contains("\(file.path):1:1: error: cannot read the config file: no such file"))
    }

    // MARK: State file

    @Test func theStateFolderIsCreatedPrivateAndNoTemporaryFilesStay() throws {
        let root = try TemporaryFolder.make()
        let state = root.appendingPathComponent("deep/state/heed")
        let store = AuthorizationStore(stateDirectory: state, policyFile: nil)
        #expect(try store.status(of: "org.heed.timer", .siri) == .notDetermined)
        #expect(!FileManager.default.fileExists(atPath: state.path), "reading must not create anything")

        try store.record(.authorized, for: "org.heed.timer", .siri)
        try store.record(.denied, for: "org.heed.media", .siri)
        try store.reset("org.heed.media", .siri)
        try store.record(.granted, for: "org.heed.timer", .spokenResponses)

        let attributes = try FileManager.default.attributesOfItem(atPath: state.path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o700)
        let fileAttributes = try FileManager.default.attributesOfItem(atPath: store.stateFile.path)
        #expect((fileAttributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        let entries = try FileManager.default.contentsOfDirectory(atPath: state.path).sorted()
        #expect(entries == ["authorization.json", "authorization.json.lock"])
    }

    @Test func theStateFileIsReadableJSON() throws {
        let root = try TemporaryFolder.make()
        let store = AuthorizationStore(stateDirectory: root, policyFile: nil)
        try store.record(.authorized, for: "org.heed.timer", .siri)
        try store.record(.denied, for: "org.heed.timer", .spokenResponses)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: store.stateFile)) as? [String: Any]
        #expect(object?["version"] as? Int == 1)
        let apps = object?["apps"] as? [String: [String: String]]
        #expect(apps?["org.heed.timer"]?["status"] == "authorized")
        #expect(apps?["org.heed.timer"]?["decided"]?.hasSuffix("Z") == true)
        let speech = object?["speech"] as? [String: [String: String]]
        #expect(speech?["org.heed.timer"]?["permission"] == "denied")
    }

    @Test(arguments: [
        ("{\"apps\": {\"org.heed.timer\": {\"status\": \"authorized\", \"decided\": \"2025-05-01T09:30:00Z\"}", 1, 88, "expected ',' or '}'"),
        ("{\n  \"apps\": {\n    \"org.heed.timer\": {\"status\": \"maybe\", \"decided\": \"2025-05-01T09:30:00Z\"}\n  }\n}", 3, 34, "'status' must be 'authorized' or 'denied', found 'maybe'"),
        ("{\"apps\": {\"timer\": {\"status\": \"denied\", \"decided\": \"2025-05-01T09:30:00Z\"}}}", 1, 11, "'timer' is not an app id"),
        ("{\"apps\": {\"org.heed.timer\": {\"status\": \"denied\", \"decided\": \"yesterday\"}}}", 1, 61, "'decided' must be an ISO 8601 date"),
        ("{\"version\": 2}", 1, 13, "version 2.0 is not one this Heed reads"),
        ("{\"speech\": {\"org.heed.timer\": {\"permission\": \"authorized\", \"decided\": \"2025-05-01T09:30:00Z\"}}}", 1, 46, "'permission' must be 'granted' or 'denied'"),
        ("", 1, 1, "unexpected end of file"),
    ])
    func aCorruptStateFileIsReportedAndLeftUntouched(text: String, line: Int, column: Int, message: String) throws {
        let root = try TemporaryFolder.make()
        let store = AuthorizationStore(stateDirectory: root, policyFile: nil)
        try text.write(to: store.stateFile, atomically: true, encoding: .utf8)
        let before = try Data(contentsOf: store.stateFile)

        for attempt in [
            { _ = try store.status(of: "org.heed.timer", .siri) },
            { try store.record(.authorized, for: "org.heed.media", .siri) },
            { try store.reset("org.heed.timer", .siri) },
            { try store.record(.granted, for: "org.heed.media", .spokenResponses) },
            { _ = try store.records(.siri) },
        ] as [() throws -> Void] {
            let error = try #require(throws: SourceError.self) { try attempt() }
            #expect(error.location == SourceLocation(path: store.stateFile.path, line: line, column: column), "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.message.contains("Heed left it as it is"))
            #expect(error.description.hasPrefix("\(store.stateFile.path):\(line):\(column): error: "))
        }
        #expect(try Data(contentsOf: store.stateFile) == before)
        let entries = try FileManager.default.contentsOfDirectory(atPath: root.path)
        #expect(!entries.contains { $0.contains(".tmp-") })
    }

    @Test func aStateFileThatIsNotTextIsReported() throws {
        let root = try TemporaryFolder.make()
        let store = AuthorizationStore(stateDirectory: root, policyFile: nil)
        let bytes = Data([0xFF, 0xFE, 0x00, 0x7B])
        try bytes.write(to: store.stateFile)
        let error = try #require(throws: SourceError.self) { try store.record(.authorized, for: "org.heed.timer", .siri) }
        #expect(error.description.hasPrefix("\(store.stateFile.path):1:1: error: the state file is not UTF-8 text"))
        #expect(try Data(contentsOf: store.stateFile) == bytes)
    }

    @Test func aStateFolderThatIsAFileIsAClearError() throws {
        let root = try TemporaryFolder.make()
        let blocker = root.appendingPathComponent("state")
        try Data("x".utf8).write(to: blocker)
        let store = AuthorizationStore(stateDirectory: blocker.appendingPathComponent("heed"), policyFile: nil)
        let error = try #require(throws: StateFileError.self) { try store.record(.authorized, for: "org.heed.timer", .siri) }
        #expect(error.code == .directory)
        #expect(error.description.contains("cannot create the state folder"))
    }
}
