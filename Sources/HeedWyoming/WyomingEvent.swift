import Foundation
public import HeedClient

/// One Wyoming event: a type, JSON data and an optional binary payload.
///
/// On the wire (rhasspy/wyoming, README "Format"): a JSON header on one line —
/// `{"type": …, "version": …, "data_length": N, "payload_length": M}` — then `N` bytes of JSON
/// data (merged over the header's own `data`, the older inline form), then `M` bytes of payload.
public struct WyomingEvent: Sendable, Hashable {
    /// The event type, e.g. `transcribe`, `audio-chunk`.
    public var type: String
    /// The event's fields.
    public var data: [String: JSONValue]
    /// Raw bytes (PCM audio for `audio-chunk`), empty when there are none.
    public var payload: [UInt8]

    /// Creates an event.
    public init(_ type: String, _ data: [String: JSONValue] = [:], payload: [UInt8] = []) {
        self.type = type
        self.data = data
        self.payload = payload
    }

    /// The protocol version Heed writes in headers: the `wyoming` release whose definitions it follows.
    public static let protocolVersion = "1.10.2"

    /// The event as bytes: header line, data, payload, in one buffer so that it goes out in one write.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var header: [String: JSONValue] = ["type": .string(type), "version": .string(Self.protocolVersion)]
        var dataBytes: [UInt8] = []
        if !data.isEmpty, let encoded = try? encoder.encode(data) {
            dataBytes = Array(encoded)
            header["data_length"] = .number(Double(dataBytes.count))
        }
        if !payload.isEmpty { header["payload_length"] = .number(Double(payload.count)) }
        var bytes = (try? Array(encoder.encode(header))) ?? []
        bytes.append(UInt8(ascii: "\n"))
        bytes += dataBytes
        bytes += payload
        return bytes
    }

    /// A string field.
    public func string(_ key: String) -> String? {
        if case .string(let text)? = data[key] { text } else { nil }
    }

    /// An integer field (a JSON number without a fraction).
    public func integer(_ key: String) -> Int? {
        guard case .number(let number)? = data[key], number == number.rounded(), abs(number) < 1e15 else { return nil }
        return Int(number)
    }
}

/// Limits on what a peer may send in one event.
public struct WyomingLimits: Sendable, Hashable {
    /// The longest header line, in bytes.
    public var headerBytes: Int
    /// The most additional-data bytes.
    public var dataBytes: Int
    /// The most payload bytes: a longer payload is read past and answered with `error`.
    public var payloadBytes: Int

    /// 64 KiB of header, 1 MiB of data, 4 MiB of payload (about 10 s of 48 kHz stereo 32-bit audio
    /// in one chunk; satellites send 20–100 ms a chunk).
    public static let standard = WyomingLimits(headerBytes: 64 * 1024, dataBytes: 1 << 20, payloadBytes: 4 << 20)

    public init(headerBytes: Int, dataBytes: Int, payloadBytes: Int) {
        self.headerBytes = headerBytes
        self.dataBytes = dataBytes
        self.payloadBytes = payloadBytes
    }
}

/// Reads events from a connected socket, one at a time, within ``WyomingLimits``.
///
/// Nothing a peer sends makes it fail other than with a reason: a header that is not JSON,
/// lengths that are not counts, data that is not an object, a stream that ends inside an
/// event. An oversized data or payload is read past (never held) and reported, and the
/// connection goes on at the next event.
final class WyomingEventReader {
    /// What ``next()`` read.
    enum Outcome {
        case event(WyomingEvent)
        /// The event's data or payload was over the limit: it was read past; the connection goes on.
        case skipped(type: String, reason: String)
        /// The event's data was not a JSON object; its bytes were consumed, the connection goes on.
        case badData(type: String, reason: String)
        /// The stream can no longer be framed: the reason, for an `error` before closing.
        case malformed(String)
        /// The peer closed the connection between events.
        case end
        /// The peer closed the connection inside an event (after `offset` bytes of it).
        case truncated(String)
    }

    private let descriptor: Int32
    private let limits: WyomingLimits
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    /// Bytes of the stream consumed before the buffer's start, to say where a problem is.
    private var consumed = 0
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(descriptor: Int32, limits: WyomingLimits) {
        self.descriptor = descriptor
        self.limits = limits
    }

    /// The stream offset of the next unread byte.
    var offset: Int { consumed + start }

    /// Bytes received and not read yet: in this reader's buffer and in the socket's.
    var backlog: Int { available + UnixSocket.pendingBytes(descriptor) }

    /// Reads the next event, waiting for it.
    func next() -> Outcome {
        var headerOffset = offset
        var text: [UInt8] = []
        // Blank lines between events are skipped (a loop: a peer may send any number of them).
        while text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            headerOffset = offset
            guard let line = readLine() else {
                if available == 0 { return .end }
                return available > limits.headerBytes
                    ? .malformed("a header line longer than \(limits.headerBytes) bytes at byte \(headerOffset); a header is one JSON object on one line")
                    : .truncated("the peer closed the connection inside a header line at byte \(headerOffset)")
            }
            text = line
        }
        let line = text
        let header: [String: JSONValue]
        do {
            header = try JSONDecoder().decode([String: JSONValue].self, from: Data(line))
        } catch {
            return .malformed("the header at byte \(headerOffset) is not a JSON object: \(Self.excerpt(line))")
        }
        guard case .string(let type)? = header["type"], !type.isEmpty else {
            return .malformed("the header at byte \(headerOffset) has no \"type\" string: \(Self.excerpt(line))")
        }
        var lengths: [String: Int] = [:]
        for key in ["data_length", "payload_length"] {
            switch header[key] {
            case nil, .null?: lengths[key] = 0
            case .number(let number)? where number >= 0 && number == number.rounded() && number < 1e15:
                lengths[key] = Int(number)
            default:
                return .malformed("'\(key)' of the '\(type)' header at byte \(headerOffset) is not a count of bytes: \(Self.excerpt(line))")
            }
        }
        let dataLength = lengths["data_length"] ?? 0
        let payloadLength = lengths["payload_length"] ?? 0
        var data: [String: JSONValue] = [:]
        switch header["data"] {
        case nil, .null?: break
        case .object(let members)?: data = members
        default: return .malformed("'data' of the '\(type)' header at byte \(headerOffset) is not an object")
        }
        var problem: Outcome?
        if dataLength > limits.dataBytes {
            guard skip(dataLength) else { return .truncated("the peer closed the connection inside the data of '\(type)'") }
            problem = .skipped(type: type, reason: "its data is \(dataLength) bytes, more than the limit of \(limits.dataBytes)")
        } else if dataLength > 0 {
            guard let bytes = read(dataLength) else {
                return .truncated("the peer closed the connection inside the data of '\(type)' (data_length \(dataLength))")
            }
            if case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) {
                data.merge(members) { _, new in new }
            } else {
                problem = .badData(type: type, reason: "its \(dataLength) bytes of data are not a JSON object")
            }
        }
        if payloadLength > limits.payloadBytes {
            guard skip(payloadLength) else { return .truncated("the peer closed the connection inside the payload of '\(type)'") }
            return .skipped(type: type, reason: "its payload is \(payloadLength) bytes, more than the limit of \(limits.payloadBytes)")
        }
        var payload: [UInt8] = []
        if payloadLength > 0 {
            guard let bytes = read(payloadLength) else {
                return .truncated(
                    "the peer closed the connection inside the payload of '\(type)' (payload_length \(payloadLength), "
                        + "\(available) bytes came)")
            }
            payload = bytes
        }
        if let problem { return problem }
        return .event(WyomingEvent(type, data, payload: payload))
    }

    private var available: Int { buffer.count - start }

    /// A header line without its newline; `nil` at the end of the stream or past the limit.
    private func readLine() -> [UInt8]? {
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                advance(to: newline + 1)
                return line
            }
            searched = buffer.count
            if available > limits.headerBytes || !fill() { return nil }
        }
    }

    /// Exactly `count` bytes; `nil` when the stream ends first.
    private func read(_ count: Int) -> [UInt8]? {
        while available < count {
            guard fill() else { return nil }
        }
        let bytes = Array(buffer[start..<start + count])
        advance(to: start + count)
        return bytes
    }

    /// Reads past `count` bytes without keeping them; `false` when the stream ends first.
    private func skip(_ count: Int) -> Bool {
        var left = count
        while left > 0 {
            if available == 0, !fill() { return false }
            let taken = min(left, available)
            left -= taken
            advance(to: start + taken)
        }
        return true
    }

    private func advance(to index: Int) {
        start = index
        if start == buffer.count || start > 256 * 1024 {
            consumed += start
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Receives what is there; `false` at the end of the stream or on a reset connection.
    private func fill() -> Bool {
        guard !ended else { return false }
        let received = chunk.withUnsafeMutableBytes { raw in
            Result { () throws(SocketError) in try UnixSocket.receive(descriptor, into: raw) }
        }
        guard let count = try? received.get(), count > 0 else {
            ended = true
            return false
        }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// The start of a bad line, printable, for the error text.
    static func excerpt(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(80), as: UTF8.self)
        let printable = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return "'" + printable + (bytes.count > 80 ? "…" : "") + "'"
    }
}
