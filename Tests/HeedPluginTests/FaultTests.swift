import Foundation
import HeedPluginProtocol
import HeedPlugins
import InMemoryLogging
import Logging
import Testing
import HeedTesting

@Suite("Plugin faults become failure values")
struct FaultTests {
    /// Runs a faulty operation, then checks that the next one works on a restarted process.
    func check(_ fault: String, expect kind: PluginFailure.Kind, reasonContains text: String) async throws {
        let (host, _) = Fixtures.faultHost()
        let ok = PluginIntent.named("ok", ["x": 1])
        #expect(await host.resolve(intent: ok, parameter: "x").outcome == .success(1))
        let firstPID = await host.processIdentifier
        let reply = await host.resolve(intent: .named(fault), parameter: "x")
        let failure = try #require(reply.failure, "\(fault) should fail")
        #expect(failure.kind == kind)
        #expect(failure.reason.contains(text), "\(failure.reason)")
        #expect(failure.appID == "org.heed.fault")
        #expect(await !host.isRunning)
        let again = await host.resolve(intent: ok, parameter: "x")
        #expect(again.outcome == .success(1))
        #expect(await host.launchCount == 2)
        #expect(await host.processIdentifier != firstPID)
        await host.shutdown()
    }

    @Test func crash() async throws {
        try await check("crash", expect: .crashed, reasonContains: "Fault stopped unexpectedly: it was killed by signal 6")
    }

    @Test func exitDuringOperation() async throws {
        try await check("exit", expect: .crashed, reasonContains: "exited with status 3")
    }

    @Test func hang() async throws {
        // The reply is a time-out failure, not a wait: no wall-clock assertion on a shared machine.
        try await check("hang", expect: .timedOut, reasonContains: "did not answer within 0.7 seconds")
    }

    @Test func garbage() async throws {
        try await check("garbage", expect: .malformedReply, reasonContains: "this is not json")
    }

    @Test func wrongReply() async throws {
        try await check("wrongReply", expect: .malformedReply, reasonContains: "wrong kind of reply")
    }

    @Test func hugeLine() async throws {
        try await check("huge", expect: .oversizedReply, reasonContains: "longer than 1048576 bytes")
    }

    @Test func exitAtStart() async throws {
        let marker = try TemporaryFolder.make().appendingPathComponent("once")
        let (host, logs) = Fixtures.faultHost(["exit-at-start", marker.path])
        let reply = await host.resolve(intent: .named("ok", ["x": 1]), parameter: "x")
        #expect(reply.failure?.kind == .exitedAtStart)
        #expect(reply.failure?.reason == "Fault exited while starting: it exited with status 2.")
        #expect(await host.resolve(intent: .named("ok", ["x": 1]), parameter: "x").outcome == .success(1))
        // The plugin's standard error went to the logger that was passed in.
        #expect(logs.entries.contains { $0.message.description == "fault plugin: exiting at start" && $0.metadata["plugin"] == "org.heed.fault" })
        await host.shutdown()
    }

    @Test func alwaysExitingPluginBacksOff() async throws {
        let (host, _) = Fixtures.faultHost(["exit-at-start"])

        for _ in 0..<4 {
            let reply = await host.start()
            #expect(reply?.kind == .exitedAtStart)
            
        }
        #expect(await host.launchCount == 4)
        let started = ContinuousClock.now
        _ = await host.start()
        // 20 ms doubled four times: the fifth start waits at least 160 ms.
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        await host.shutdown()
    }

    @Test func protocolMismatch() async throws {
        let marker = try TemporaryFolder.make().appendingPathComponent("once")
        let (host, _) = Fixtures.faultHost(["wrong-version", marker.path])
        let reply = await host.handle(.named("ok"))
        #expect(reply.failure?.kind == .protocolMismatch)
        #expect(reply.failure?.reason == "Fault speaks plugin protocol version 99; Heed speaks version 1.")
        #expect(await host.handle(.named("ok")).outcome == .success("Done."))
        await host.shutdown()
    }

    @Test func missingExecutable() async throws {
        let manifest = PluginManifest(
            appID: "org.heed.none", displayName: "Nothing", executable: "no-such-plugin", intents: ["x"],
            directory: Fixtures.productsDirectory)
        let (logger, _) = Fixtures.logger()
        let host = PluginHost(
            manifest: manifest, executableURL: manifest.executableURL(productsDirectory: Fixtures.productsDirectory),
            logger: logger)
        let reply = await host.handle(.named("x"))
        #expect(reply.failure?.kind == .launchFailed)
        #expect(reply.failure?.reason.hasPrefix("Nothing could not be started") == true)
    }

    /// An executable someone still has open for writing ("Text file busy") starts once they let
    /// go; one held for good is a launch failure that says why.
    @Test(arguments: [true, false])
    func anExecutableBusyBeingWritten(released: Bool) async throws {
        let folder = try TemporaryFolder.make()
        let wrapper = folder.appendingPathComponent("busy-plugin")
        let plugin = Fixtures.productsDirectory.appendingPathComponent("heed-fault-plugin").path
        try "#!/bin/sh\nexec '\(plugin)' \"$@\"\n".write(to: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper.path, 0o755)
        let writer = open(wrapper.path, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        if released {
            Thread.detachNewThread {
                usleep(150_000)
                close(writer)
            }
        }
        let manifest = PluginManifest(
            appID: "org.heed.fault", displayName: "Fault", executable: wrapper.path, intents: ["ok"], directory: folder)
        let (logger, _) = Fixtures.logger()
        let host = PluginHost(manifest: manifest, executableURL: wrapper, limits: Fixtures.faultLimits, logger: logger)
        let reply = await host.handle(.named("ok"))
        if released {
            #expect(reply.outcome == .success("Done."), "\(reply)")
        } else {
            close(writer)
            #expect(reply.failure?.kind == .launchFailed)
            #expect(reply.failure?.reason.contains("busy") == true, "\(String(describing: reply.failure?.reason))")
        }
        await host.shutdown()
    }

    @Test func notificationsAndStandardError() async throws {
        let (host, logs) = Fixtures.faultHost()
        #expect(await host.handle(.named("notify")).outcome == .success("Done."))
        var iterator = host.notifications.makeAsyncIterator()
        #expect(await iterator.next() == PluginNotification(text: "Something happened.", event: "fault"))
        #expect(await host.handle(.named("stderr")).outcome == .success("Done."))
        try await Task.sleep(for: .milliseconds(100))
        #expect(logs.entries.contains { $0.message.description == "fault plugin: a diagnostic line" })
        await host.shutdown()
        #expect(await iterator.next() == nil)
    }

    @Test func gracefulShutdown() async throws {
        let (host, _) = Fixtures.faultHost()
        _ = await host.start()
        let pid = try #require(await host.processIdentifier)
        await host.shutdown()
        #expect(kill(pid, 0) != 0, "the plugin process is gone")
        #expect(await host.handle(.named("ok")).failure?.kind == .shutDown)
    }

    /// Waits until `pid` is gone (killed and reaped), at most two seconds.
    func isGone(_ pid: Int32) async -> Bool {
        for _ in 0..<200 {
            if kill(pid, 0) != 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func hungPluginIsKilled() async throws {
        let (host, _) = Fixtures.faultHost(limits: PluginLimits(operationTimeLimit: .milliseconds(200)))
        _ = await host.start()
        let pid = try #require(await host.processIdentifier)
        #expect(await host.handle(.named("hang")).failure?.kind == .timedOut)
        #expect(await isGone(pid))
        await host.shutdown()
    }

    @Test func pluginIgnoringShutdownIsKilled() async throws {
        let (host, logs) = Fixtures.faultHost(["ignore-shutdown"], limits: PluginLimits(shutdownGracePeriod: .milliseconds(100)))
        _ = await host.start()
        let pid = try #require(await host.processIdentifier)
        // Killed after the grace period: shutdown returns and the process is gone (no
        // wall-clock bound: the machines are shared).
        await host.shutdown()
        #expect(await isGone(pid))
        #expect(logs.entries.contains { $0.message.description == "plugin did not exit after shutdown; terminating" })
    }
}
