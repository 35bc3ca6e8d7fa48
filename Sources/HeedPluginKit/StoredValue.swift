internal import Foundation

/// A value a plugin keeps between runs: a JSON file in its state folder
/// (``PluginContext/stateDirectory``). `heed run` starts a plugin for one command, so a workout in
/// progress or a running timer lives here.
///
/// ```swift
/// let stored = StoredValue<[KitchenTimer]>("timers.json")
/// var timers = stored.load() ?? []
/// timers.append(timer)
/// stored.save(timers)
/// ```
///
/// Without a state folder (a plugin run by hand) nothing is loaded or saved. A file that cannot be
/// read as the value is left alone and `load()` gives `nil`; a failed save is said on standard
/// error, which Heed logs.
public struct StoredValue<Value: Codable & Sendable>: Sendable {
    /// The file, or `nil` without a state folder.
    public let path: String?

    /// The value kept in `name` inside the plugin's state folder.
    /// - Parameter name: A file name such as `timers.json`.
    public init(_ name: String) {
        path = PluginContext.stateDirectory.map { URL(fileURLWithPath: $0).appendingPathComponent(name).path }
    }

    /// The value last saved, or `nil` when there is none (or no state folder).
    public func load() -> Value? {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }

    /// Saves the value, replacing the file at once (a reader never sees half of it).
    public func save(_ value: Value) {
        guard let path else { return }
        do {
            try JSONEncoder().encode(value).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            FileHandle.standardError.write(Data("cannot save \(path): \(error)\n".utf8))
        }
    }
}
