import Foundation
import HeedPluginProtocol
import HeedPlugins
import Testing

@Suite("Dispatch overhead")
struct OverheadMeasurement {
    /// Measures resolve round trips to a warm plugin and prints p50/p95. A measurement, not an assertion.
    @Test func resolveRoundTrip() async throws {
        let (host, _) = try Fixtures.host("media")
        _ = await host.start()
        let intent = PluginIntent.named("playMedia", ["playlist": "road trip classics"])
        for _ in 0..<50 { _ = await host.resolve(intent: intent, parameter: "playlist") }
        let count = ProcessInfo.processInfo.environment["HEED_OVERHEAD_COUNT"].flatMap(Int.init) ?? 1000
        var samples: [Duration] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            let reply = await host.resolve(intent: intent, parameter: "playlist")
            samples.append(clock.now - start)
            #expect(reply.outcome == .success("Road Trip Classics"))
        }
        samples.sort()
        func microseconds(_ duration: Duration) -> Int {
            Int(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        }
        let p50 = microseconds(samples[count / 2])
        let p95 = microseconds(samples[count * 95 / 100])
        print("dispatch overhead over \(count) warm resolve calls: p50 \(p50) µs, p95 \(p95) µs, max \(microseconds(samples[count - 1])) µs")
        await host.shutdown()
    }
}
