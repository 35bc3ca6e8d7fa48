import Foundation
import HeedPluginProtocol
import HeedPlugins
import HeedTesting
import InMemoryLogging
import Logging

/// Finds the built plugin executables and makes hosts for them.
enum Fixtures {
    /// The build products directory: on Linux `Bundle.main.bundleURL` is it, or its parent.
    static let productsDirectory: URL = {
        let bundle = Bundle.main.bundleURL
        for candidate in [bundle, bundle.deletingLastPathComponent()]
        where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("heed-plugin-timer").path) {
            return candidate
        }
        return bundle
    }()

    /// The package's `plugins/` folder with the example manifests.
    static let pluginsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("plugins")

    static func manifest(_ name: String) throws -> PluginManifest {
        try PluginManifest.load(from: pluginsDirectory.appendingPathComponent(name).appendingPathComponent("plugin.json"))
    }

    static func logger() -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        return (Logger(label: "test", factory: { _ in handler }), handler)
    }

    /// A host of an example plugin from its manifest.
    static func host(_ name: String, limits: PluginLimits = .standard) throws -> (PluginHost, InMemoryLogHandler) {
        let manifest = try manifest(name)
        let (logger, handler) = logger()
        let host = PluginHost(
            manifest: manifest, executableURL: manifest.executableURL(productsDirectory: productsDirectory),
            limits: limits, logger: logger)
        return (host, handler)
    }

    /// A host of the fault plugin, started with `arguments`.
    static func faultHost(_ arguments: [String] = [], limits: PluginLimits = faultLimits) -> (PluginHost, InMemoryLogHandler) {
        let manifest = PluginManifest(
            appID: "org.heed.fault", displayName: "Fault", usageDescription: "Misbehaves for tests.",
            executable: "heed-fault-plugin", arguments: arguments, intents: ["ok"], directory: productsDirectory)
        let (logger, handler) = logger()
        let host = PluginHost(
            manifest: manifest, executableURL: manifest.executableURL(productsDirectory: productsDirectory),
            limits: limits, logger: logger)
        return (host, handler)
    }

    static let faultLimits = PluginLimits(
        operationTimeLimit: .milliseconds(700), startTimeLimit: .seconds(3), initialRestartDelay: .milliseconds(20))
}

extension PluginIntent {
    static func named(_ name: String, _ parameters: [String: PluginValue] = [:]) -> PluginIntent {
        PluginIntent(name: name, parameters: parameters)
    }
}
