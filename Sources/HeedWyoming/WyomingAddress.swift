import Foundation
import HeedClient
import HeedService

/// Where a Wyoming listener is: `tcp://HOST:PORT` or `unix://PATH`.
public enum WyomingAddress: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// The port Home Assistant's Wyoming integration suggests for a speech-to-text service.
    public static let defaultPort = 10300

    /// Parses a listener URI.
    /// - Parameter uri: `tcp://HOST:PORT` (`[::1]:PORT` for an IPv6 address) or `unix://PATH`.
    /// - Throws: ``WyomingAddressError`` saying what is wrong with the URI.
    public init(parsing uri: String) throws(WyomingAddressError) {
        if uri.hasPrefix("unix://") {
            let path = String(uri.dropFirst("unix://".count))
            guard !path.isEmpty else { throw WyomingAddressError("'\(uri)': give the socket's path, e.g. unix:///run/user/1000/heed/wyoming.sock") }
            self = .unix(path: path)
            return
        }
        guard uri.hasPrefix("tcp://") else {
            throw WyomingAddressError("'\(uri)' is not a Wyoming listener: give tcp://HOST:PORT (e.g. tcp://127.0.0.1:10300) or unix://PATH")
        }
        let rest = String(uri.dropFirst("tcp://".count))
        guard let colon = rest.lastIndex(of: ":") else {
            throw WyomingAddressError("'\(uri)' has no port: give tcp://HOST:PORT, e.g. tcp://127.0.0.1:\(Self.defaultPort)")
        }
        var host = String(rest[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw WyomingAddressError("'\(uri)' has no host: give tcp://127.0.0.1:PORT for this machine only") }
        guard let port = Int(rest[rest.index(after: colon)...]), (0...65535).contains(port) else {
            throw WyomingAddressError("'\(uri)': the port must be a number from 0 to 65535")
        }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): "tcp://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .unix(let path): "unix://\(path)"
        }
    }

    /// Whether only this machine can connect: a loopback address or a Unix socket.
    public var isLocal: Bool {
        switch self {
        case .tcp(let host, _): UnixSocket.isLoopback(host)
        case .unix: true
        }
    }
}

/// A listener URI that cannot be used.
public struct WyomingAddressError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A Wyoming listener, open before the service runs so that a taken port or a bad path ends
/// `heed serve` at once with a clear error.
public struct WyomingListener: Sendable {
    /// Where it listens; a TCP port 0 is replaced by the port the kernel chose.
    public let address: WyomingAddress
    /// The client identity its peers speak for: an app id with a client manifest.
    public let clientAppID: String
    let descriptor: Int32
    /// The Unix socket, removed at the end.
    let unixSocket: ListeningSocket?

    /// Opens a listener.
    /// - Parameters:
    ///   - address: Where to listen.
    ///   - clientAppID: The identity of its peers.
    ///   - removedStale: Called when a stale Unix socket file was removed.
    /// - Throws: ``WyomingAddressError`` naming the address and the reason.
    public static func open(_ address: WyomingAddress, clientAppID: String, removedStale: () -> Void = {}) throws(WyomingAddressError)
        -> WyomingListener
    {
        switch address {
        case .tcp(let host, let port):
            do {
                let (descriptor, bound) = try UnixSocket.listen(host: host, port: port)
                return WyomingListener(address: .tcp(host: host, port: bound), clientAppID: clientAppID, descriptor: descriptor, unixSocket: nil)
            } catch {
                throw WyomingAddressError("cannot listen on \(address): \(error.description)")
            }
        case .unix(let path):
            do {
                let socket = try ListeningSocket.open(at: path, removedStale: removedStale)
                return WyomingListener(address: address, clientAppID: clientAppID, descriptor: socket.descriptor, unixSocket: socket)
            } catch {
                throw WyomingAddressError("cannot listen on \(address): \(error.message)")
            }
        }
    }

    /// Stops listening; a Unix socket's file is removed.
    public func close() {
        if let unixSocket { unixSocket.close() } else { UnixSocket.close(descriptor) }
    }
}
