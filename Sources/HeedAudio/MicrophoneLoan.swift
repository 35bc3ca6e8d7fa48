import Foundation
public import HeedCore

/// Heed's microphone lent by the one who holds it (the listener of `heed serve --listen`) to a
/// hand-off, for as long as the hand-off records: one owner of the device, and the borrower
/// reads what the owner captures.
///
/// The owner calls ``deliver(_:)`` with each chunk it reads until ``isReturned``, then
/// ``end(_:)``; the borrower reads it as any ``AudioSource`` and calls ``giveBack()`` when it
/// is done. A borrower reading after the owner stopped gets an ``AudioError`` (code `device`).
/// Its state is guarded by one lock, hence `@unchecked Sendable`.
public final class MicrophoneLoan: AudioSource, @unchecked Sendable {
    public let sampleRate = Endpointer.sampleRate
    /// The device, for messages.
    public let name: String
    /// Who borrows it: an app id, for the owner's events.
    public let borrower: String

    /// At most this many samples wait for the borrower: two minutes; older ones are dropped.
    static let capacity = 120 * Endpointer.sampleRate

    // Guarded by `condition`, which also wakes a waiting reader.
    private let condition = NSCondition()
    private var waiting: [Int16] = []
    private var returned = false
    /// Set by ``end(_:)``: the owner reads no more; why reads fail from then on.
    private var ended: AudioError?

    /// A loan of `device` to `borrower`.
    public init(device: String, borrower: String) {
        name = device
        self.borrower = borrower
    }

    // MARK: The owner

    /// Whether the borrower has given the microphone back.
    public var isReturned: Bool { locked { returned } }

    /// Hands a chunk the owner captured to the borrower.
    public func deliver(_ chunk: [Int16]) {
        locked {
            guard !returned else { return }
            waiting.append(contentsOf: chunk)
            if waiting.count > Self.capacity { waiting.removeFirst(waiting.count - Self.capacity) }
            condition.signal()
        }
    }

    /// The owner reads no more for this loan: after what waits, reads fail with `reason` (by
    /// default, that the owner stopped); only the first call counts.
    public func end(_ reason: AudioError? = nil) {
        locked {
            if ended == nil {
                ended = reason ?? AudioError(.device, source: name, reason: "the listener that holds the microphone stopped listening")
            }
            condition.signal()
        }
    }

    // MARK: The borrower

    /// Waits until the owner captured something, and returns up to `maximumFrames` of it.
    public func read(maximumFrames: Int) throws(AudioError) -> [Int16] {
        let taken: Result<[Int16], AudioError> = locked {
            while waiting.isEmpty && ended == nil { condition.wait() }
            if waiting.isEmpty, let ended { return .failure(ended) }
            let count = min(maximumFrames, waiting.count)
            defer { waiting.removeFirst(count) }
            return .success(Array(waiting.prefix(count)))
        }
        return try taken.get()
    }

    /// Drops what the owner captured while nobody read.
    public func discard(seconds: Double) throws(AudioError) {
        locked { waiting.removeAll() }
    }

    /// Gives the microphone back to its owner; the second call does nothing.
    public func giveBack() {
        locked {
            returned = true
            waiting = []
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
