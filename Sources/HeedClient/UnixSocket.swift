import Foundation
import Glibc

// The one file of raw socket calls (`socket`, `bind`, `listen`, `accept`, `connect`,
// `getsockopt(SO_PEERCRED)`, `send`, `recv`, `poll`), for the client and for `heed serve`,
// which reaches them through `package` access.

/// A socket call failed.
package struct SocketError: Error, CustomStringConvertible, Sendable {
    /// The call, e.g. `connect`.
    package var operation: String
    /// The socket's path, when it has one.
    package var path: String
    /// The `errno` value. The corresponding C constants are `ECONNREFUSED`, `ENOENT`, …
    package var code: Int32

    package init(_ operation: String, path: String = "", code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    package var description: String {
        let reason = String(cString: strerror(code))
        return path.isEmpty ? "\(operation): \(reason)" : "\(path): \(operation): \(reason)"
    }
}

/// The kernel's credentials of the process at the other end of a socket, as `SO_PEERCRED`
/// gives them (C `struct ucred`, which Swift's Glibc module does not export).
package struct PeerCredentials: Sendable, Hashable {
    package var processID: Int32
    package var userID: UInt32
    package var groupID: UInt32
}

/// Raw calls on Unix stream sockets. Descriptors are plain `Int32`s, opened close-on-exec.
package enum UnixSocket {
    /// The longest path a `sockaddr_un` holds, without the terminating NUL.
    package static let maximumPathLength = MemoryLayout<sockaddr_un>.size - MemoryLayout<sa_family_t>.size - 1

    private static func withAddress<Result>(
        _ path: String, _ operation: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) throws(SocketError) -> Result {
        var bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength else {
            throw SocketError(operation, path: path, code: ENAMETOOLONG)
        }
        // "@name" is Linux's abstract namespace (systemd's NOTIFY_SOCKET may be one): a leading
        // zero byte, and an address exactly as long as the name.
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    private static func makeSocket(_ path: String) throws(SocketError) -> Int32 {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket", path: path) }
        return descriptor
    }

    /// Sends one datagram to the Unix datagram socket at `path` (`@name`: the abstract namespace).
    /// - Throws: ``SocketError`` when there is no such socket or it refuses the datagram.
    package static func sendDatagram(_ bytes: [UInt8], to path: String) throws(SocketError) {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket", path: path) }
        defer { _ = Glibc.close(descriptor) }
        let sent = try withAddress(path, "sendto") { address, length in
            bytes.withUnsafeBytes { Glibc.sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
        }
        guard sent == bytes.count else { throw SocketError("sendto", path: path) }
    }

    /// The file a listening Unix stream socket is bound to, or `nil` when `descriptor` is not
    /// one (a socket handed over by systemd is checked before it is used).
    package static func listeningPath(_ descriptor: Int32) -> String? {
        var accepting: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) == 0, accepting != 0 else { return nil }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard named, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix(Int(length) - MemoryLayout<sa_family_t>.size).prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.hasPrefix("/") ? path : nil
    }

    /// Connects to a listening socket.
    /// - Parameter path: The socket file.
    /// - Returns: The connected descriptor.
    /// - Throws: ``SocketError``; `ECONNREFUSED` when the file is there but nobody listens
    ///   (a stale socket), `ENOENT` when there is no file.
    package static func connect(to path: String) throws(SocketError) -> Int32 {
        let descriptor = try makeSocket(path)
        let result = try withAddress(path, "connect") { address, length in
            var result: Int32
            repeat { result = Glibc.connect(descriptor, address, length) } while result != 0 && errno == EINTR
            return result == 0 ? 0 : errno
        }
        guard result == 0 else {
            _ = Glibc.close(descriptor)
            throw SocketError("connect", path: path, code: result)
        }
        return descriptor
    }

    /// Creates a listening socket file readable and writable by its owner only (0600).
    /// - Parameters:
    ///   - path: The socket file; it must not exist.
    ///   - backlog: Connections the kernel queues before ``accept(_:)`` takes them.
    /// - Returns: The listening descriptor.
    /// - Throws: ``SocketError`` (`EADDRINUSE` when the file exists).
    package static func listen(at path: String, backlog: Int32 = 64) throws(SocketError) -> Int32 {
        let descriptor = try makeSocket(path)
        let bound = try withAddress(path, "bind") { address, length in Glibc.bind(descriptor, address, length) == 0 ? 0 : errno }
        guard bound == 0 else {
            _ = Glibc.close(descriptor)
            throw SocketError("bind", path: path, code: bound)
        }
        // bind(2) applies the umask; the folder is 0700 already, so nobody else can use the file meanwhile.
        guard chmod(path, 0o600) == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let code = errno
            _ = Glibc.close(descriptor)
            unlink(path)
            throw SocketError("listen", path: path, code: code)
        }
        return descriptor
    }

    /// Accepts a connection, waiting for one.
    /// - Returns: The connection's descriptor (close-on-exec).
    /// - Throws: ``SocketError`` when `accept4` fails for another reason than an interruption.
    package static func accept(_ descriptor: Int32) throws(SocketError) -> Int32 {
        while true {
            // accept4(SOCK_CLOEXEC) is not in Swift's Glibc module; the service starts no
            // process of its own, so setting the flag just after is as good.
            let connection = Glibc.accept(descriptor, nil, nil)
            if connection >= 0 {
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                return connection
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            throw SocketError("accept")
        }
    }

    /// The credentials of the peer process, from the kernel (`getsockopt(SO_PEERCRED)`).
    /// - Returns: The peer's process, user and group ids, or `nil` when the kernel gives none.
    package static func peerCredentials(_ descriptor: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0, raw.0 > 0 else { return nil }
        return PeerCredentials(processID: raw.0, userID: raw.1, groupID: raw.2)
    }

    /// Makes ``send(_:_:)`` fail (`EAGAIN`) when the peer has read nothing for `seconds` and
    /// the socket buffer stays full (`SO_SNDTIMEO`).
    package static func setSendTimeout(_ descriptor: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`, waiting while the socket buffer is full.
    ///
    /// `MSG_NOSIGNAL`: a peer that went away gives `EPIPE`, never `SIGPIPE`.
    /// - Throws: ``SocketError`` when the peer is gone or the socket was shut down.
    package static func send(_ descriptor: Int32, _ bytes: some Collection<UInt8>) throws(SocketError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let count = array.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SocketError("send")
            }
            offset += count
        }
    }

    /// Reads what is there, waiting for at least one byte.
    /// - Returns: The number of bytes read; 0 at the end of the stream (the peer closed or
    ///   the socket was shut down).
    /// - Throws: ``SocketError`` for a reset connection and other failures.
    package static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> Int {
        while true {
            let count = Glibc.recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw SocketError("recv")
        }
    }

    /// Waits until one of `descriptors` is readable (or hung up).
    /// - Returns: For each descriptor, whether it is.
    package static func waitReadable(_ descriptors: [Int32]) -> [Bool] {
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while Glibc.poll(&polled, nfds_t(polled.count), -1) < 0 && errno == EINTR {}
        return polled.map { $0.revents != 0 }
    }

    /// Ends both directions: a thread blocked reading the descriptor sees the end of the stream.
    package static func shutdown(_ descriptor: Int32) {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Closes a descriptor.
    package static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// A close-on-exec pipe: read end, write end. The service wakes its accept loop with one.
    package static func pipe() throws(SocketError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw SocketError("pipe") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }
}

/// Splits what a socket delivers into lines, with a limit on their length.
///
/// A line longer than the limit is reported once as ``Line/tooLong(_:)`` and the rest of it
/// is skipped up to its newline, so one oversized message costs its sender one error and
/// the connection goes on.
package final class LineReader {
    /// What ``next()`` read.
    package enum Line {
        /// A complete line, without its newline.
        case line([UInt8])
        /// A line longer than the limit; the argument is how many bytes had arrived when it was given up.
        case tooLong(Int)
        /// The end of the stream.
        case end
    }

    private let descriptor: Int32
    private let maximumLength: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var skipping = false
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    package init(descriptor: Int32, maximumLength: Int) {
        self.descriptor = descriptor
        self.maximumLength = maximumLength
    }

    /// Reads the next line, waiting for it.
    /// - Throws: ``SocketError`` when reading fails (a reset connection).
    package func next() throws(SocketError) -> Line {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                compact()
                if skipping {
                    skipping = false
                    continue
                }
                if line.count > maximumLength { return .tooLong(line.count) }
                return .line(line)
            }
            if !skipping, buffer.count - start > maximumLength {
                let count = buffer.count - start
                buffer.removeAll(keepingCapacity: true)
                start = 0
                skipping = true
                return .tooLong(count)
            }
            if skipping {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            let received = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SocketError) in try UnixSocket.receive(descriptor, into: raw) }
            }
            let count = try received.get()
            if count == 0 { return .end }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    private func compact() {
        if start > 64 * 1024 || start == buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }
}

// MARK: TCP, for the Wyoming door of `heed serve`

extension UnixSocket {
    /// Creates a listening TCP socket (`getaddrinfo`, `socket`, `bind`, `listen`) with `SO_REUSEADDR`.
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 address, or a host name that resolves to one.
    ///   - port: The port; 0 lets the kernel pick one.
    ///   - backlog: Connections the kernel queues before ``accept(_:)`` takes them.
    /// - Returns: The listening descriptor and the port it is bound to.
    /// - Throws: ``SocketError`` naming `host:port` (`EADDRINUSE` when the port is taken).
    package static func listen(host: String, port: Int, backlog: Int32 = 64) throws(SocketError) -> (descriptor: Int32, port: Int) {
        let name = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let found = getaddrinfo(host, String(port), &hints, &list)
        guard found == 0, let first = list else {
            throw SocketError("resolve (\(String(cString: gai_strerror(found))))", path: name, code: found == EAI_SYSTEM ? errno : EINVAL)
        }
        defer { freeaddrinfo(list) }
        let descriptor = Glibc.socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket", path: name) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard Glibc.bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            _ = Glibc.close(descriptor)
            throw SocketError("bind", path: name, code: code)
        }
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let code = errno
            _ = Glibc.close(descriptor)
            throw SocketError("listen", path: name, code: code)
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var boundPort = port
        if bound == 0 {
            // sin_port and sin6_port sit at the same offset, in network byte order.
            boundPort = withUnsafeBytes(of: &address) { raw in Int(UInt16(raw[2]) << 8 | UInt16(raw[3])) }
        }
        return (descriptor, boundPort)
    }

    /// Sends small messages at once (`TCP_NODELAY`): an event's reply should not wait for the
    /// peer's acknowledgement of the previous one.
    package static func setNoDelay(_ descriptor: Int32) {
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Ends the sending direction only (`shutdown(SHUT_WR)`): the peer reads what was sent, then the end.
    package static func shutdownWriting(_ descriptor: Int32) {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Makes ``receive(_:into:)`` fail (`EAGAIN`) when nothing comes for `seconds` (`SO_RCVTIMEO`).
    package static func setReceiveTimeout(_ descriptor: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Bytes received and not read yet (`ioctl(FIONREAD)`): how far a reader is behind its peer.
    package static func pendingBytes(_ descriptor: Int32) -> Int {
        var count: Int32 = 0
        guard ioctl(descriptor, UInt(FIONREAD), &count) == 0 else { return 0 }
        return Int(count)
    }

    /// Whether a host name or address is the loopback interface (`127.0.0.0/8`, `::1`, `localhost`).
    package static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
