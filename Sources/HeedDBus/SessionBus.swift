internal import CSystemd
import Foundation
import Synchronization

/// A value in a D-Bus message, as far as Heed needs them (MPRIS, desktop notifications).
package enum BusValue: Sendable, Hashable {
    case string(String)
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case array([BusValue])
    case dictionary([String: BusValue])

    package var string: String? { if case .string(let text) = self { text } else { nil } }
    package var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    package var double: Double? {
        switch self {
        case .double(let number): number
        case .integer(let number): Double(number)
        case .unsigned(let number): Double(number)
        default: nil
        }
    }
    package var strings: [String] { if case .array(let items) = self { items.compactMap(\.string) } else { string.map { [$0] } ?? [] } }
}

/// An argument of a method call.
package enum BusArgument {
    case string(String)
    case strings([String])
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    /// An empty `a{sv}` (hints, options).
    case noOptions
    /// A variant holding a double (`v` of `d`): what MPRIS's Volume property takes.
    case doubleVariant(Double)
}

/// A D-Bus error: the error name and message sd-bus gave, or the errno of a failed call.
package struct BusError: Error, CustomStringConvertible, Sendable {
    package var name: String
    package var message: String
    package var description: String { message.isEmpty ? name : "\(message) (\(name))" }

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }
}

/// The user's session bus, through libsystemd's sd-bus. Every raw `sd_bus_*` call of Heed is in
/// this file.
///
/// sd-bus objects are not thread-safe: a mutex serialises every use. A thread of its own waits
/// for incoming messages (`sd_bus_wait`'s poll on the bus's descriptor and an eventfd that calls
/// use to wake it, since a method call may read signals into sd-bus's queue) and dispatches signals
/// to the handlers registered with ``onSignal(path:interface:member:_:)``.
///
/// Why sd-bus: it is libsystemd's, present on every systemd system (Debian's libsystemd-dev), small,
/// with a message API Swift can call without variadic functions (`sd_bus_message_read_basic`,
/// `sd_bus_message_append_basic`) — libdbus-1 calls itself a low-level API not meant for
/// applications, and GDBus brings GLib's main loop.
package final class SessionBus: @unchecked Sendable {
    /// Called on the bus thread with the signal's sender, path and arguments.
    package typealias SignalHandler = @Sendable (_ sender: String, _ path: String, _ arguments: [BusValue]) -> Void

    private let lock = Mutex(())
    private let bus: OpaquePointer
    /// A pipe: calls write a byte to `wakeWriter` to wake the dispatch thread's poll.
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private var handlers: [UnsafeMutableRawPointer] = []
    private var slots: [OpaquePointer?] = []
    /// The time limit of one method call: 2 s.
    static let callTimeLimit: UInt64 = 2_000_000

    /// Connects to the session bus at `address`, or to the user's (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`).
    /// - Throws: ``BusError`` when there is no session bus to connect to.
    package init(address: String? = nil) throws(BusError) {
        var raw: OpaquePointer?
        var status: Int32
        if let address {
            status = sd_bus_new(&raw)
            if status >= 0 { status = sd_bus_set_address(raw, address) }
            if status >= 0 { status = sd_bus_set_bus_client(raw, 1) }
            if status >= 0 { status = sd_bus_start(raw) }
            if status < 0, raw != nil { sd_bus_unref(raw) }
        } else {
            status = sd_bus_open_user(&raw)
        }
        guard status >= 0, let raw else {
            let which = address.map { "at \($0)" } ?? "(DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus)"
            throw BusError(name: "connect", message: "cannot connect to the D-Bus session bus \(which): \(String(cString: strerror(-status)))")
        }
        bus = raw
        var pipe: [Int32] = [-1, -1]
        _ = Glibc.pipe(&pipe)
        for descriptor in pipe {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
        }
        wakeReader = pipe[0]
        wakeWriter = pipe[1]
        let thread = Thread { [self] in self.dispatchLoop() }
        thread.name = "heed-dbus"
        thread.start()
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
        for slot in slots { sd_bus_slot_unref(slot) }
        for handler in handlers { Unmanaged<HandlerBox>.fromOpaque(handler).release() }
        sd_bus_flush_close_unref(bus)
    }

    // MARK: Calls

    /// Calls a method and returns its reply's arguments.
    /// - Throws: ``BusError``: the D-Bus error the peer answered, or the call's failure (no such
    ///   name, time-out).
    package func call(
        _ destination: String, path: String, interface: String, member: String, arguments: [BusArgument] = []
    ) throws(BusError) -> [BusValue] {
        let result: Result<[BusValue], BusError> = lock.withLock { _ in
            defer { wake() }
            var message: OpaquePointer?
            var status = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
            guard status >= 0, let message else { return .failure(Self.errno(status, "create a call to \(member)")) }
            defer { sd_bus_message_unref(message) }
            for argument in arguments {
                status = Self.append(argument, to: message)
                guard status >= 0 else { return .failure(Self.errno(status, "write the arguments of \(member)")) }
            }
            var error = sd_bus_error()
            var reply: OpaquePointer?
            status = sd_bus_call(bus, message, Self.callTimeLimit, &error, &reply)
            defer { sd_bus_error_free(&error) }
            guard status >= 0, let reply else {
                let name = error.name.map { String(cString: $0) } ?? "call"
                let text = error.message.map { String(cString: $0) } ?? String(cString: strerror(-status))
                return .failure(BusError(name: name, message: text))
            }
            defer { sd_bus_message_unref(reply) }
            return .success(Self.readAll(reply))
        }
        return try result.get()
    }

    /// `org.freedesktop.DBus.Properties.GetAll`: every property of an interface.
    package func properties(of destination: String, path: String, interface: String) throws(BusError) -> [String: BusValue] {
        let reply = try call(
            destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll", arguments: [.string(interface)])
        guard case .dictionary(let properties)? = reply.first else { return [:] }
        return properties
    }

    /// `org.freedesktop.DBus.Properties.Set` with a double value.
    package func setProperty(_ name: String, of destination: String, path: String, interface: String, to value: Double) throws(BusError) {
        _ = try call(
            destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
            arguments: [.string(interface), .string(name), .doubleVariant(value)])
    }

    /// The names on the bus (`org.freedesktop.DBus.ListNames`).
    package func names() throws(BusError) -> [String] {
        try call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames")
            .first?.strings ?? []
    }

    // MARK: Signals

    private final class HandlerBox {
        let handler: SignalHandler
        init(_ handler: @escaping SignalHandler) { self.handler = handler }
    }

    /// Calls `handler` on the bus thread for each signal that matches (a `nil` part matches any).
    package func onSignal(path: String?, interface: String, member: String, _ handler: @escaping SignalHandler) throws(BusError) {
        let box = Unmanaged.passRetained(HandlerBox(handler)).toOpaque()
        let status: Int32 = lock.withLock { _ in
            defer { wake() }
            var slot: OpaquePointer?
            let status = sd_bus_match_signal(
                bus, &slot, nil, path, interface, member,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                    let sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
                    let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
                    box.handler(sender, path, SessionBus.readAll(message))
                    return 0
                }, box)
            if status >= 0 { slots.append(slot) }
            return status
        }
        guard status >= 0 else {
            Unmanaged<HandlerBox>.fromOpaque(box).release()
            throw Self.errno(status, "listen for \(interface).\(member)")
        }
        handlers.append(box)
    }

    /// Reads and dispatches what arrives, until the connection closes.
    private func dispatchLoop() {
        while true {
            let open: Bool = lock.withLock { _ in
                while true {
                    let status = sd_bus_process(bus, nil)
                    if status < 0 { return false }
                    if status == 0 { return true }
                }
            }
            guard open else { return }
            var events = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(lock.withLock { _ in sd_bus_get_events(bus) }), revents: 0),
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&events, 2, -1)
            var drain = [UInt8](repeating: 0, count: 64)
            _ = Glibc.read(wakeReader, &drain, drain.count)
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWriter, &byte, 1)
    }

    // MARK: Messages

    private static func errno(_ status: Int32, _ what: String) -> BusError {
        BusError(name: "errno", message: "cannot \(what): \(String(cString: strerror(-status)))")
    }

    private static func append(_ argument: BusArgument, to message: OpaquePointer) -> Int32 {
        switch argument {
        case .string(let text):
            return text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .strings(let texts):
            var status = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s")
            for text in texts where status >= 0 {
                status = text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            }
            guard status >= 0 else { return status }
            return sd_bus_message_close_container(message)
        case .int32(var number):
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "i")), &number)
        case .uint32(var number):
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &number)
        case .int64(var number):
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &number)
        case .noOptions:
            let status = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}")
            guard status >= 0 else { return status }
            return sd_bus_message_close_container(message)
        case .doubleVariant(var number):
            var status = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "d")
            guard status >= 0 else { return status }
            status = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "d")), &number)
            guard status >= 0 else { return status }
            return sd_bus_message_close_container(message)
        }
    }

    /// Every argument of a message, from where it is read to the end.
    fileprivate static func readAll(_ message: OpaquePointer) -> [BusValue] {
        var values: [BusValue] = []
        while let value = readValue(message) { values.append(value) }
        return values
    }

    /// The next value of a message, or `nil` at the end of the message or container (or when it
    /// cannot be read: a type Heed does not use is skipped as a string of its signature).
    private static func readValue(_ message: OpaquePointer) -> BusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contentsPointer) > 0 else { return nil }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        func basic<T: BitwiseCopyable>(_ initial: T) -> T? {
            var value = initial
            return sd_bus_message_read_basic(message, type, &value) > 0 ? value : nil
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type, &pointer) > 0, let pointer else { return nil }
            return .string(String(cString: pointer))
        case UInt8(ascii: "b"): return basic(Int32(0)).map { .bool($0 != 0) }
        case UInt8(ascii: "y"): return basic(UInt8(0)).map { .unsigned(UInt64($0)) }
        case UInt8(ascii: "n"): return basic(Int16(0)).map { .integer(Int64($0)) }
        case UInt8(ascii: "q"): return basic(UInt16(0)).map { .unsigned(UInt64($0)) }
        case UInt8(ascii: "i"), UInt8(ascii: "h"): return basic(Int32(0)).map { .integer(Int64($0)) }
        case UInt8(ascii: "u"): return basic(UInt32(0)).map { .unsigned(UInt64($0)) }
        case UInt8(ascii: "x"): return basic(Int64(0)).map { .integer($0) }
        case UInt8(ascii: "t"): return basic(UInt64(0)).map { .unsigned($0) }
        case UInt8(ascii: "d"): return basic(Double(0)).map { .double($0) }
        case UInt8(ascii: "v"):
            guard sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
            let value = readValue(message)
            sd_bus_message_exit_container(message)
            return value ?? .array([])
        case UInt8(ascii: "a"):
            guard sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
            defer { sd_bus_message_exit_container(message) }
            if contents.hasPrefix("{") {
                var dictionary: [String: BusValue] = [:]
                let entry = String(contents.dropFirst().dropLast())
                while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), entry) > 0 {
                    if let key = readValue(message)?.string, let value = readValue(message) { dictionary[key] = value }
                    sd_bus_message_exit_container(message)
                }
                return .dictionary(dictionary)
            }
            return .array(readAll(message))
        case UInt8(ascii: "r"):
            guard sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
            defer { sd_bus_message_exit_container(message) }
            return .array(readAll(message))
        default:
            let signature = String(UnicodeScalar(UInt8(bitPattern: type)))
            guard sd_bus_message_skip(message, signature) >= 0 else { return nil }
            return .string(signature)
        }
    }
}
