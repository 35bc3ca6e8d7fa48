import Foundation
import Glibc
package import HeedClient

/// Accepts connections on listening sockets, on a thread of its own, until it is stopped.
///
/// The speech service's socket and the Wyoming door's listeners both use one: a blocking
/// `poll` over the sockets and a wake-up pipe, so ``stop()`` ends the wait from any thread
/// without a timeout.
package final class AcceptLoop: Sendable {
    private let wake: (read: Int32, write: Int32)

    /// - Throws: ``SocketError`` when the wake-up pipe cannot be made.
    package init() throws(SocketError) {
        wake = try UnixSocket.pipe()
    }

    deinit {
        UnixSocket.close(wake.read)
        UnixSocket.close(wake.write)
    }

    /// Accepts on `sockets` until ``stop()``; returns once the accepting thread has ended.
    ///
    /// - Parameters:
    ///   - threadName: The accepting thread's name, as `ps -L` shows it.
    ///   - failed: Gets an error of `accept`; the loop goes on.
    ///   - accepted: Gets the index in `sockets` a connection came on and its new descriptor,
    ///     which it owns from then on. Called on the accepting thread: it must not block.
    package func run(
        _ sockets: [Int32], threadName: String, failed: @escaping @Sendable (SocketError) -> Void,
        accepted: @escaping @Sendable (_ socket: Int, _ descriptor: Int32) -> Void
    ) async {
        let wakeUp = wake.read
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                let descriptors = sockets + [wakeUp]
                while true {
                    let ready = UnixSocket.waitReadable(descriptors)
                    if ready[sockets.count] { break }
                    for (index, socket) in sockets.enumerated() where ready[index] {
                        do throws(SocketError) {
                            accepted(index, try UnixSocket.accept(socket))
                        } catch {
                            failed(error)
                        }
                    }
                }
                done.resume()
            }
            thread.name = threadName
            thread.start()
        }
    }

    /// Ends ``run(_:threadName:failed:accepted:)``; safe from any thread, any number of times.
    package func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }
}
