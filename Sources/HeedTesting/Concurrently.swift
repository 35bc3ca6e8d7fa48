import Foundation

/// Work that a test means to run at the same time on several threads.
///
/// `DispatchQueue.concurrentPerform` may run its iterations one after another when the machine's
/// workers are busy (as they are with suites running side by side), and a test of concurrent
/// writers or clients then shows nothing about concurrency. These threads are Heed's own, and
/// start together once each is ready.
public enum Concurrently {
    /// Runs `body(index, prepare(index))` on a thread of its own for each index below `count`,
    /// and returns when every one has. Every thread runs `prepare` first; the bodies start
    /// together once all have (what `prepare` makes stays on its thread).
    public static func run<Prepared>(
        _ count: Int, prepare: @escaping @Sendable (Int) -> Prepared, _ body: @escaping @Sendable (Int, Prepared) -> Void
    ) {
        let ready = DispatchGroup()
        let finished = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for index in 0..<count {
            ready.enter()
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                let prepared = prepare(index)
                ready.leave()
                start.wait()
                body(index, prepared)
            }
        }
        ready.wait()
        for _ in 0..<count { start.signal() }
        finished.wait()
    }

    /// Runs `body(index)` on a thread of its own for each index below `count`, all started
    /// together, and returns when every one has.
    public static func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        run(count, prepare: { _ in () }) { index, _ in body(index) }
    }
}
