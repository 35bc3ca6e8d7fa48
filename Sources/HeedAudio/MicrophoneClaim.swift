public import Foundation
import HeedCore
import Glibc
import Synchronization

/// One owner of a microphone at a time among Heed's processes: `heed listen` holds its claim
/// for as long as it listens, `heed serve` for each hand-off.
///
/// A claim is an exclusive advisory lock (`flock(2)`) on a file per capture device in Heed's
/// runtime folder (`$XDG_RUNTIME_DIR/heed/microphone-DEVICE.lock`); the holder writes who it
/// is into the file. The kernel lets go of the lock when the holder's process ends, however it
/// ends, so a crash leaves no stale claim. Two ALSA names for one card ("default" and
/// "plughw:0") are two claims: Heed cannot tell that they are the same microphone.
public final class MicrophoneClaim: Sendable {
    /// The capture device claimed.
    public let device: String
    private let descriptor: Mutex<Int32?>

    private init(device: String, descriptor: Int32) {
        self.device = device
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Claims `device` for `owner` (a few words: "heed listen", "heed serve, a hand-off for
    /// org.example.notes").
    ///
    /// - Parameter folder: Heed's runtime folder; made (0700) when missing.
    /// - Throws: ``MicrophoneClaimError/inUse(device:holder:)`` when another process holds
    ///   it, ``MicrophoneClaimError/unusable(path:reason:)`` when the file cannot be made.
    public static func take(device: String, owner: String, folder: String) throws(MicrophoneClaimError) -> MicrophoneClaim {
        let path = lockPath(device: device, folder: folder)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .unusable(path: folder, reason: String(cString: strerror(errno)))
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unusable(path: path, reason: String(cString: strerror(errno))) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            let holder = code == EWOULDBLOCK ? Holder(reading: descriptor) : nil
            close(descriptor)
            if let holder { throw .inUse(device: device, holder: holder) }
            throw .unusable(path: path, reason: String(cString: strerror(code)))
        }
        let record = "\(getpid())\t\(Int(Date().timeIntervalSince1970))\t\(owner)\n"
        _ = ftruncate(descriptor, 0)
        _ = record.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return MicrophoneClaim(device: device, descriptor: descriptor)
    }

    /// Gives the microphone back; the second call does nothing.
    public func release() {
        descriptor.withLock { descriptor in
            guard let open = descriptor else { return }
            // Emptied first: a reader never names a process that no longer holds it.
            _ = ftruncate(open, 0)
            close(open)
            descriptor = nil
        }
    }

    /// The lock file of a device: its name with every byte but letters, digits, `.`, `_` and
    /// `-` written as `%XX`.
    static func lockPath(device: String, folder: String) -> String {
        let safe = device.utf8.map { byte -> String in
            let plain = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F
                || byte == 0x2D
            return plain ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }.joined()
        return folder + "/microphone-\(safe).lock"
    }

    /// Who holds a claim, as its holder wrote it.
    public struct Holder: Sendable, Hashable {
        public var pid: Int32?
        public var since: Date?
        public var owner: String

        init(reading descriptor: Int32) {
            var bytes = [UInt8](repeating: 0, count: 512)
            let count = pread(descriptor, &bytes, bytes.count, 0)
            let fields = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
                .trimmed.split(separator: "\t", maxSplits: 2).map(String.init)
            pid = fields.first.flatMap { Int32($0) }
            since = fields.count > 1 ? Double(fields[1]).map { Date(timeIntervalSince1970: $0) } : nil
            owner = fields.count > 2 ? fields[2] : "another program"
        }
    }
}

/// A microphone could not be claimed.
public enum MicrophoneClaimError: Error, CustomStringConvertible, Sendable {
    /// Another of Heed's processes records from it.
    case inUse(device: String, holder: MicrophoneClaim.Holder)
    /// The claim's folder or file cannot be made or locked.
    case unusable(path: String, reason: String)

    public var description: String {
        switch self {
        case .inUse(let device, let holder):
            let process = holder.pid.map { " (pid \($0))" } ?? ""
            let since = holder.since.map { " since " + $0.iso8601Text } ?? ""
            return "the microphone '\(device)' is in use by \(holder.owner)\(process)\(since): one of Heed's programs records from it at a time"
        case .unusable(let path, let reason):
            return "cannot claim the microphone: \(path): \(reason)"
        }
    }
}
