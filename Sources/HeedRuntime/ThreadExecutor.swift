import Foundation

/// A serial executor that runs its jobs on one thread of its own.
///
/// The listener blocks: it waits for the microphone (`snd_pcm_readi`), decodes with
/// PocketSphinx and plays speech. None of that belongs on Swift's cooperative thread pool,
/// and PocketSphinx objects must stay on one thread; an actor whose executor is this runs
/// all of its code here (as GRDB's `DispatchQueueActor` does with a queue).
final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []

    /// Starts the thread. It keeps the executor alive and runs for the rest of the process.
    init(name: String) {
        let thread = Thread { self.runJobs() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}
