// heed-client-example: a small program that asks `heed serve` to recognize speech, with the
// HeedClient library only. Its manifest is clients/example/client.json
// (appId org.heed.example-client); allow it with
//   heed auth speech-recognition grant org.heed.example-client

import Foundation
import HeedClient

let usage = """
    usage: heed-client-example [--socket PATH] authorize
           heed-client-example [--socket PATH] listen [--json] [--partial]
           heed-client-example [--socket PATH] transcribe FILE [--json] [--partial] [--stream]
                               [--grammar intents|NAME] [--phrases "lights on,lights off"]
                               [--dictation [--context "Dashwood,Norland"]]
                               [--finish-after SECONDS | --cancel-after SECONDS | --disconnect-after SECONDS]
           heed-client-example [--socket PATH] dictate --handoff [--json] [--partial] [--context "a,b"] [--leave]
           heed-client-example dictate --result

    authorize    ask for speech-recognition authorization; prints the status
                 (exit status 0 when authorized, 1 otherwise)
    listen       recognize what Heed's microphone hears with a grammar (a hand-off)
    transcribe   recognize a WAV file: the service reads it, or with --stream this program
                 reads it (16 kHz mono 16-bit) and streams it in 0.1 s messages
      --json       print every update as a JSON line
      --partial    ask for partial results while the audio goes
      --grammar    the shipped intents (default) or one of Heed's grammars by name
      --phrases    your own phrases, separated by commas
      --dictation  free speech (the task hint dictation): the formatted text is the last line
      --context    with --dictation: phrases to expect (contextual strings), separated by commas
      --finish-after, --cancel-after, --disconnect-after  (with --stream) finish early,
                   cancel, or drop the connection after that many seconds of audio
    dictate      dictation by hand-off: Heed's microphone records for this program, which
                 has none; the dictation's status goes by, the text is the last line
      --leave      go away once Heed records: the text is left in shared storage
      --result     read the last hand-off's result from shared storage (a client that went away)

    Exit status: 0 success, 1 refused or failed (the status is printed), 2 usage error.
    """

struct Arguments {
    var socket = HeedProtocol.defaultSocketPath()
    var command = ""
    var file: String?
    var json = false
    var partial = false
    var stream = false
    var grammar = GrammarChoice.intents
    var finishAfter: Double?
    var cancelAfter: Double?
    var disconnectAfter: Double?
    var dictation = false
    var contextualStrings: [String] = []
    var handoff = false
    var leave = false
    var result = false

    init(_ list: [String]) throws {
        var rest = list[...]
        func value(_ option: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError(message: "\(option) needs a value") }
            return next
        }
        func seconds(_ option: String) throws -> Double {
            let text = try value(option)
            guard let number = Double(text), number >= 0 else { throw UsageError(message: "\(option) takes seconds, not '\(text)'") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--socket": socket = try value(argument)
            case "--json": json = true
            case "--partial": partial = true
            case "--stream": stream = true
            case "--grammar":
                let name = try value(argument)
                grammar = name == "intents" ? .intents : .named(name)
            case "--phrases": grammar = .phrases(try value(argument).split(separator: ",").map(String.init))
            case "--finish-after": finishAfter = try seconds(argument)
            case "--cancel-after": cancelAfter = try seconds(argument)
            case "--disconnect-after": disconnectAfter = try seconds(argument)
            case "--dictation": dictation = true
            case "--context": contextualStrings = try value(argument).split(separator: ",").map(String.init)
            case "--handoff": handoff = true
            case "--leave": leave = true
            case "--result": result = true
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                if argument.hasPrefix("-") { throw UsageError(message: "unknown option \(argument)") }
                if command.isEmpty {
                    command = argument
                } else if file == nil {
                    file = argument
                } else {
                    throw UsageError(message: "unexpected argument \(argument)")
                }
            }
        }
        guard ["authorize", "listen", "transcribe", "dictate"].contains(command) else {
            throw UsageError(message: command.isEmpty ? "give a command: authorize, listen, transcribe or dictate" : "unknown command \(command)")
        }
        if command == "dictate" {
            guard handoff != result else { throw UsageError(message: "dictate takes --handoff or --result") }
            dictation = true
        }
        if leave, !handoff { throw UsageError(message: "--leave goes with dictate --handoff") }
        if !contextualStrings.isEmpty, !dictation { throw UsageError(message: "--context goes with --dictation or dictate") }
        if command == "transcribe", file == nil { throw UsageError(message: "transcribe needs a FILE") }
        if !stream, finishAfter != nil || cancelAfter != nil || disconnectAfter != nil {
            throw UsageError(message: "--finish-after, --cancel-after and --disconnect-after apply to --stream")
        }
    }
}

struct UsageError: Error {
    var message: String
}

/// Reads a 16 kHz mono 16-bit PCM WAV file (what streaming sends as it is).
func readWAV(_ path: String) throws -> [Int16] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let bytes = [UInt8](data)
    func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
    guard bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x41, 0x56, 0x45] else {
        throw UsageError(message: "\(path) is not a WAV file")
    }
    var offset = 12
    var format: (channels: Int, rate: Int, bits: Int)?
    while offset + 8 <= bytes.count {
        let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        let size = u32(offset + 4)
        let body = offset + 8
        if id == "fmt ", body + 16 <= bytes.count {
            format = (u16(body + 2), u32(body + 4), u16(body + 14))
        } else if id == "data" {
            guard let format, format.channels == 1, format.rate == 16_000, format.bits == 16 else {
                throw UsageError(message: "\(path): --stream sends 16 kHz mono 16-bit audio; convert it: sox IN -r 16000 -c 1 -b 16 OUT.wav")
            }
            let end = min(bytes.count, body + size)
            return stride(from: body, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(u16($0))) }
        }
        offset = body + size + (size & 1)
    }
    throw UsageError(message: "\(path) has no audio data")
}

func printLine(_ value: some Encodable) {
    if let line = try? MessageCoding.line(value) { FileHandle.standardOutput.write(line) }
}

func fail(_ status: ServiceStatus, _ message: String) -> Never {
    FileHandle.standardError.write(Data("heed-client-example: \(status.rawValue): \(message)\n".utf8))
    exit(1)
}

/// One update as `--json` prints it.
struct UpdateLine: Encodable {
    var type: String
    var state: String?
    var status: String?
    var message: String?
    var isFinal: Bool?
    var transcription: String?
    var confidence: Double?
    var rejected: Bool?
    var alternatives: [String]?
    var segments: [TranscriptionSegment]?
    var intent: JSONValue?
    var spokenText: String?
    var resultFile: String?

    init(_ update: RecognitionUpdate) {
        switch update {
        case .state(let state):
            type = "state"
            self.state = state.rawValue
        case .failed(let error):
            type = "error"
            status = error.status.rawValue
            message = error.message
        case .result(let result):
            type = result.isFinal ? "final" : "partial"
            isFinal = result.isFinal
            transcription = result.transcription
            if result.isFinal {
                confidence = result.confidence
                rejected = result.rejected
                alternatives = result.alternatives
                segments = result.segments
                intent = result.intent ?? .null
                spokenText = result.spokenText
                resultFile = result.resultFile
            }
        }
    }
}

func transcribe(_ arguments: Arguments, client: HeedClient) async throws {
    let options =
        arguments.dictation
        ? RecognitionOptions.dictation(contextualStrings: arguments.contextualStrings, partialResults: arguments.partial)
        : RecognitionOptions(grammar: arguments.grammar, partialResults: arguments.partial)
    let task: RecognitionTask
    if arguments.command == "listen" || arguments.handoff {
        task = try client.recognizeMicrophone(options: options)
    } else if arguments.stream, let file = arguments.file {
        let samples = try readWAV(file)
        task = try client.recognizeStream(options: options)
        let chunk = 1600  // 0.1 s
        var sent = 0
        while sent < samples.count {
            let seconds = Double(sent) / 16_000
            if let limit = arguments.disconnectAfter, seconds >= limit {
                client.close()
                print("disconnected after \(String(format: "%.1f", seconds)) s of audio")
                // Give the connection's reader a moment to see its end, then go without a word.
                exit(0)
            }
            if let limit = arguments.cancelAfter, seconds >= limit { break }
            if let limit = arguments.finishAfter, seconds >= limit { break }
            try task.append(samples: Array(samples[sent..<min(samples.count, sent + chunk)]))
            sent += chunk
        }
        if arguments.cancelAfter != nil, sent < samples.count { try task.cancel() } else { try task.finish() }
    } else {
        task = try client.recognize(file: arguments.file ?? "", options: options)
    }
    // Who the service says this program is: where a hand-off's result is left for it.
    let appID = arguments.leave ? (try await client.hello().appId ?? "org.heed.example-client") : ""
    var heardFinal = false
    var dictation = DictationContext()
    for await update in task.updates {
        if arguments.json { printLine(UpdateLine(update)) }
        if arguments.dictation {
            let before = dictation.status
            dictation.apply(update)
            if arguments.handoff, dictation.status == .recording, arguments.leave {
                client.close()
                print("left while Heed records; the result will be in \(HeedProtocol.dictationResultPath(appID: appID))")
                exit(0)
            }
            if !arguments.json, dictation.status != before, arguments.handoff {
                switch dictation.status {
                case .recording: print("[recording: speak, then pause]")
                case .processing: print("[processing]")
                default: break
                }
            }
        }
        switch update {
        case .state(let state):
            if !arguments.json, state == .canceling { print("canceled") }
        case .result(let result):
            if result.isFinal { heardFinal = true }
            guard !arguments.json else { continue }
            if !result.isFinal {
                print("… \(result.transcription)")
                continue
            }
            let confidence = String(format: "%.2f", result.confidence ?? 0)
            if arguments.dictation {
                // The text is the last line, for scripts.
                print("  confidence \(confidence)")
                print(result.transcription.isEmpty ? "(nothing heard)" : result.transcription)
                continue
            }
            print(result.transcription.isEmpty ? "(nothing heard)" : result.transcription)
            print("  confidence \(confidence)\(result.rejected ? ", rejected: not a sentence of the grammar" : "")")
            if let intent = result.intent, let line = try? MessageCoding.line(intent) {
                print("  intent: \(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .newlines))")
            }
        case .failed(let error):
            fail(error.status, error.message)
        }
    }
    if !heardFinal, arguments.cancelAfter == nil { fail(.unavailable, "the task ended without a final result") }
}

let arguments: Arguments
do {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    FileHandle.standardError.write(Data("heed-client-example: \(error.message)\n\n\(usage)\n".utf8))
    exit(2)
}

/// `dictate --result`: the last hand-off's record, as a client that went away finds it.
func printStoredResult(appID: String?) -> Never {
    let path = HeedProtocol.dictationResultPath(appID: appID ?? "org.heed.example-client")
    guard let record = DictationRecord.read(path: path) else { fail(.unavailable, "no hand-off result in \(path)") }
    print("\(record.status) at \(record.timestamp)")
    guard record.status == "finished" else { fail(.init(rawValue: record.status), record.reason ?? "the hand-off has not finished") }
    print(record.text)
    exit(0)
}

if arguments.result { printStoredResult(appID: ProcessInfo.processInfo.environment["HEED_APP_ID"]) }

do {
    let client = try HeedClient(socketPath: arguments.socket)
    switch arguments.command {
    case "authorize":
        let authorization = try await client.requestAuthorization()
        print(authorization.status.rawValue)
        if authorization.status != .authorized { fail(authorization.status, authorization.message ?? "not authorized") }
    default:
        try await transcribe(arguments, client: client)
    }
    client.close()
} catch let error as ServiceError {
    fail(error.status, error.message)
} catch let error as UsageError {
    FileHandle.standardError.write(Data("heed-client-example: \(error.message)\n".utf8))
    exit(1)
} catch {
    fail(.unavailable, "\(error)")
}
