import Foundation
import HeedAudio
import HeedCore
@testable import HeedEvaluation
import HeedIntents
import HeedRuntime
import HeedSpeech
import HeedTesting
import Logging

/// Where the test fixtures of this machine are, and what is installed.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let testData = "/usr/share/pocketsphinx/test/data"
    static let model = PocketSphinxRecognizer.Configuration.default.modelDirectory

    /// Debian's pocketsphinx-en-us and pocketsphinx-testdata.
    static let hasPocketSphinx =
        FileManager.default.fileExists(atPath: model + "/mdef")
        && FileManager.default.fileExists(atPath: testData + "/cards/001.wav")

    /// How many AF_INET or AF_INET6 sockets process `pid` holds open: its descriptors'
    /// `socket:[INODE]` links matched against the kernel's tables in `/proc/PID/net`.
    static func internetSockets(of pid: Int32) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(descriptors.compactMap { name -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)"),
                target.hasPrefix("socket:[")
            else { return nil }
            return String(target.dropFirst("socket:[".count).dropLast())
        })
        var count = 0
        for table in ["tcp", "tcp6", "udp", "udp6", "raw", "raw6"] {
            let lines = (KernelFile.read("/proc/\(pid)/net/\(table)") ?? "").split(separator: "\n").dropFirst()
            // The inode is the tenth column.
            count += lines.filter { line in
                let columns = line.split(separator: " ")
                return columns.count > 9 && inodes.contains(String(columns[9]))
            }.count
        }
        return count
    }

    /// The shared corpora: `HEED_CORPORA`, or `../shared/corpora` beside the checkout.
    static let corpora: String? = {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["HEED_CORPORA"],
            packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpora").path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0 + "/README.md") }
    }()

    static let hasEspeak = FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng")

    /// A real recognizer of the shipped intents as the hearing commands load it, without n-best
    /// alternatives; `configure` changes its configuration first.
    static func shippedIntentsRecognizer(
        _ configure: (inout PocketSphinxRecognizer.Configuration) -> Void = { _ in }
    ) throws -> PocketSphinxRecognizer {
        let catalog = try IntentCatalog.load(
            intents: [packageRoot.appendingPathComponent("intents")], grammars: [packageRoot.appendingPathComponent("grammars")])
        var configuration = PocketSphinxRecognizer.Configuration.default
        configuration.maximumAlternatives = 0
        configure(&configuration)
        return try PocketSphinxRecognizer(grammar: try RecognitionSetup(catalog: catalog).grammar, configuration: configuration, logger: Logger(label: "test"))
    }

    static func grammar(_ name: String) -> String {
        packageRoot.appendingPathComponent("grammars/\(name)").path
    }

    /// The built `heed` executable, next to the test bundle.
    static var heedBinary: URL {
        let here = Bundle.main.bundleURL
        let candidates = [here.appendingPathComponent("heed"), here.deletingLastPathComponent().appendingPathComponent("heed")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    static func recognizer(grammar path: String, _ configure: (inout PocketSphinxRecognizer.Configuration) -> Void = { _ in }) throws -> PocketSphinxRecognizer {
        var configuration = PocketSphinxRecognizer.Configuration.default
        configure(&configuration)
        return try PocketSphinxRecognizer(grammar: try Grammar.file(path), configuration: configuration, logger: Logger(label: "test"))
    }

    /// A recording given to `recognizer` as a stream, as `heed eval --live` gives it, then the live
    /// pass's result.
    static func decodedLive(_ audio: AudioBuffer, by recognizer: PocketSphinxRecognizer) throws -> RecognitionResult {
        try Evaluation.decodeLive(audio, with: recognizer).result
    }

    /// Writes an executable script (0755). The file is written through a descriptor closed on
    /// exec: a process another test starts meanwhile does not inherit it open for writing, which
    /// would make starting the script fail with "Text file busy" for as long as that process runs.
    static func writeExecutable(_ text: String, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, chmod(url.path, 0o755) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Runs a program and returns its exit status, standard output and standard error.
    ///
    /// Standard input is empty; `directory` is the working directory (default: this process's).
    @discardableResult
    static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
    }

    /// Speaks `text` with espeak-ng into a WAV file (22050 Hz, as espeak-ng writes it).
    static func speak(_ text: String, voice: String = "en-us", to url: URL) throws {
        let result = try run(URL(fileURLWithPath: "/usr/bin/espeak-ng"), ["-v", voice, "-w", url.path, text])
        guard result.status == 0 else { throw AudioError(.unreadable, source: url.path, reason: "espeak-ng failed: \(result.error)") }
    }
}

/// Builds WAV files byte by byte, to test the reader on every header field.
struct WAVBuilder {
    var formatTag: UInt16 = 1
    var channels: UInt16 = 1
    var sampleRate: UInt32 = 16_000
    var bitsPerSample: UInt16 = 16
    var samples: [Int16] = [0, 1000, -1000, 32767, -32768]
    var declaredDataSize: UInt32?
    var extraChunk = false

    var data: Data {
        var body = Data()
        var format = Data()
        format.append(le: formatTag)
        format.append(le: channels)
        format.append(le: sampleRate)
        format.append(le: sampleRate * UInt32(channels) * UInt32(bitsPerSample / 8))
        format.append(le: channels * bitsPerSample / 8)
        format.append(le: bitsPerSample)
        body.append(contentsOf: Array("WAVE".utf8))
        if extraChunk {
            body.append(contentsOf: Array("LIST".utf8))
            body.append(le: UInt32(3))
            body.append(contentsOf: [1, 2, 3, 0])  // odd size, padded
        }
        body.append(contentsOf: Array("fmt ".utf8))
        body.append(le: UInt32(format.count))
        body.append(format)
        var audio = Data()
        for sample in samples { audio.append(le: UInt16(bitPattern: sample)) }
        body.append(contentsOf: Array("data".utf8))
        body.append(le: declaredDataSize ?? UInt32(audio.count))
        body.append(audio)
        var file = Data(Array("RIFF".utf8))
        file.append(le: UInt32(body.count))
        file.append(body)
        return file
    }
}

extension Data {
    mutating func append<T: FixedWidthInteger>(le value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

/// Feeds samples to a stream in chunks of random sizes (1 to `largest`) and collects what it returns.
func inRandomChunks(_ samples: [Int16], largest: Int, using generator: inout SeededGenerator, _ process: ([Int16]) -> [Int16]) -> [Int16] {
    var output: [Int16] = []
    var offset = 0
    while offset < samples.count {
        let count = Int.random(in: 1...largest, using: &generator)
        output += process(Array(samples[offset..<min(samples.count, offset + count)]))
        offset += count
    }
    return output
}
