import Foundation
import HeedCore
import Synchronization

/// Second decoders that run the free phone loop on another core while a recognizer's own
/// decoder runs the grammar pass and the alignment over the same utterance.
///
/// The phone loop needs nothing from the grammar pass, so decoding it beside that pass takes its
/// time out of the wait for a result (docs/RECOGNITION.md, "The phone loop beside the grammar
/// pass"). The CPU is the same; the second decoder costs its acoustic model's memory (6–8 MB of
/// RSS). Its segments are those the recognizer's own decoder would give: the same model, flags
/// and seeded dither, the same whole-utterance cepstral mean.
///
/// A recognizer takes a helper for one utterance from the pool its configuration names
/// (``PocketSphinxRecognizer/Configuration/phoneLoopHelpers``); one that finds none free decodes
/// the phone loop itself, after the alignment, as it does without a pool.
public final class PhoneLoopHelpers: Sendable {
    /// The pool every recognizer uses by default: one helper fewer than the cores.
    public static let shared = PhoneLoopHelpers(limit: ProcessInfo.processInfo.activeProcessorCount - 1)

    private struct State {
        var idle: [Helper] = []
        var busy = 0
    }

    private let state = Mutex(State())

    /// How many helpers the pool may hold, each a decoder of its own.
    public let limit: Int

    /// A pool of at most `limit` helpers, made when first needed.
    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Starts the phone loop over `samples` on a helper decoder of the model `arguments` describe,
    /// or returns `nil` when no helper is free and no other may be made. A helper made for this
    /// utterance loads its model on its own thread, beside the grammar pass.
    func start(_ samples: [Int16], arguments: [String: String]) -> Job? {
        let taken: Helper?? = state.withLock { state in
            if let index = state.idle.firstIndex(where: { $0.arguments == arguments }) {
                state.busy += 1
                return .some(state.idle.remove(at: index))
            }
            guard state.idle.count + state.busy < limit || !state.idle.isEmpty else { return nil }
            // An idle helper of another model makes way for this one.
            if state.idle.count + state.busy >= limit { state.idle.removeFirst() }
            state.busy += 1
            return .some(nil)
        }
        guard let taken else { return nil }
        let job = Job()
        let thread = Thread { [self] in
            // A helper that cannot load or decode is dropped; the recognizer decodes the loop itself.
            var helper = taken
            if helper == nil { helper = try? Helper(arguments: arguments) }
            let started = threadCPUSeconds()
            let segments = helper.flatMap { helper in
                // One utterance at a time: PocketSphinx's decoder is not thread-safe.
                let claimed = helper.inUse.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
                assert(claimed, "a phone-loop helper was handed to two utterances at once")
                defer { helper.inUse.store(false, ordering: .releasing) }
                return try? helper.decoder.decodeUtterance(samples, search: Helper.search).segments
            }
            let cpuSeconds = threadCPUSeconds() - started
            // Back in the pool before the recognizer hears of it, so that its next utterance finds
            // the helper free.
            state.withLock { state in
                state.busy -= 1
                if let helper, segments != nil { state.idle.append(helper) }
            }
            job.finish(segments.map { ($0, cpuSeconds) })
        }
        thread.name = "heed phone loop"
        thread.start()
        return job
    }

    /// One helper: a decoder with the phone loop as its only search.
    private final class Helper: @unchecked Sendable {
        static let search = PocketSphinxRecognizer.phoneLoopSearch
        let arguments: [String: String]
        /// Driven by one job's thread at a time (the pool hands a helper to one job).
        let decoder: SphinxDecoder
        /// Whether a job's thread is decoding with it (checked in debug builds).
        let inUse = Atomic(false)

        init(arguments: [String: String]) throws(RecognizerError) {
            self.arguments = arguments
            decoder = try SphinxDecoder(arguments: arguments)
            try decoder.addPhoneLoopSearch(name: Self.search)
            try decoder.selectSearch(Self.search)
        }
    }

    /// A phone loop under way on a helper.
    final class Job: Sendable {
        private let outcome = Mutex<(segments: [RawSegment], cpuSeconds: Double)??>(nil)
        private let done = DispatchSemaphore(value: 0)

        fileprivate func finish(_ result: (segments: [RawSegment], cpuSeconds: Double)?) {
            outcome.withLock { $0 = .some(result) }
            done.signal()
        }

        /// Waits for the phone loop's segments and the CPU seconds its decode took; `nil` when
        /// the helper could not decode it.
        func wait() -> (segments: [RawSegment], cpuSeconds: Double)? {
            done.wait()
            done.signal()
            return outcome.withLock { $0! }
        }
    }
}
