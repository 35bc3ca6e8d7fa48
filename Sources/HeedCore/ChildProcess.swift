package import Foundation
import Glibc

/// Child processes of Heed: plugins, the programs `heed serve` runs for a hand-off
/// (`notify-send`, a client's callback), avahi's announcement, sphinxtrain's tools for `heed
/// adapt`, `aplay` for `heed vocab say --play`. One way to start them, `posix_spawn`.
package enum ChildProcess {
    /// Starts `executable` with `posix_spawn` as the leader of a new process group, its standard
    /// input, output and error on the given descriptors and Heed's environment with `environment` on top.
    ///
    /// A process group of its own lets Heed end whatever a plugin started (the plugin's connection
    /// kills the group when the plugin ends). `posix_spawn` rather than Foundation's `Process`,
    /// which opens two AF_INET UDP sockets in Heed for every launch (seen with
    /// `strace -f -e trace=socket`): Heed keeps to Unix sockets unless a Wyoming TCP door is asked for.
    /// - Returns: The process id.
    /// - Throws: `POSIXError` with the spawn's error (`ENOENT`, `EACCES`, …).
    package static func spawn(
        _ executable: URL, arguments: [String], environment: [String: String], input: Int32, output: Int32, error: Int32
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, error, 2)
        posix_spawnattr_setpgroup(&attributes, 0)
        // The child starts with the default signal dispositions and nothing blocked, whatever Heed set.
        var defaults = sigset_t()
        var none = sigset_t()
        sigfillset(&defaults)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var processIdentifier: pid_t = 0
        // "Text file busy": some process still holds the executable open for writing. That is
        // usually brief — a package manager or editor finishing the file, or a child forked by
        // another thread of this process at the moment the file was written, which keeps the
        // descriptor until it runs its own program — so Heed tries again for up to about a second.
        var status = posix_spawn(&processIdentifier, executable.path, &actions, &attributes, argv, envp)
        var retries = 0
        while status == ETXTBSY, retries < 14 {
            retries += 1
            usleep(useconds_t(10_000 * retries))
            status = posix_spawn(&processIdentifier, executable.path, &actions, &attributes, argv, envp)
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        return processIdentifier
    }

    /// Starts `executable` with its standard input, output and error on `/dev/null`, and reaps
    /// it on a thread of its own when it ends: for programs whose output nobody reads.
    /// - Throws: `POSIXError` when it cannot be started.
    package static func launch(_ executable: URL, arguments: [String], environment: [String: String] = [:]) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(null) }
        let processIdentifier = try spawn(executable, arguments: arguments, environment: environment, input: null, output: null, error: null)
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) < 0, errno == EINTR {}
        }
        reaper.name = "heed reap \(executable.lastPathComponent)"
        reaper.start()
    }

    /// Runs `executable` to its end: `input` on its standard input (`/dev/null` when empty), its
    /// standard output and error into `output`, or, when `output` is `nil`, read and returned.
    /// - Parameter started: Called with the process id once it runs (to signal it from elsewhere).
    /// - Returns: The exit status (128 + the signal's number when a signal ended it) and the
    ///   output read (empty when it went to `output`).
    /// - Throws: `POSIXError` when it cannot be started.
    package static func run(
        _ executable: URL, arguments: [String], input: [UInt8] = [], output: Int32? = nil, started: (pid_t) -> Void = { _ in }
    ) throws -> (status: Int32, output: String) {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(null) }
        // Sockets rather than pipes: a child that stops reading (it failed) gives `EPIPE` under
        // `MSG_NOSIGNAL`, where a pipe would raise `SIGPIPE` in Heed.
        let inputPair = input.isEmpty ? nil : try socketPair()
        let outputPair: [Int32]?
        do {
            outputPair = output == nil ? try socketPair() : nil
        } catch {
            closeAll(inputPair ?? [])
            throw error
        }
        let processIdentifier: pid_t
        do {
            let out = output ?? outputPair![1]
            processIdentifier = try spawn(executable, arguments: arguments, environment: [:], input: inputPair?[1] ?? null, output: out, error: out)
        } catch {
            closeAll((inputPair ?? []) + (outputPair ?? []))
            throw error
        }
        started(processIdentifier)
        // The child has its copies; ours would keep end-of-file from ever arriving.
        closeAll([inputPair?[1], outputPair?[1]].compactMap { $0 })
        // The output is read on a thread of its own while the input is written: a child that
        // writes much before it reads cannot block on a full socket.
        let collected = Collected()
        if let outputPair {
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 16_384)
                while true {
                    let count = read(outputPair[0], &buffer, buffer.count)
                    if count > 0 { collected.append(buffer[..<count]) } else if count < 0, errno == EINTR { continue } else { break }
                }
                close(outputPair[0])
                collected.finish()
            }
            thread.name = "heed read \(executable.lastPathComponent)"
            thread.start()
        }
        if let inputPair {
            var offset = 0
            input.withUnsafeBytes { bytes in
                while offset < bytes.count {
                    let count = send(inputPair[0], bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if count > 0 { offset += count } else if count < 0, errno == EINTR { continue } else { break }
                }
            }
            close(inputPair[0])
        }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0, errno == EINTR {}
        if outputPair != nil { collected.wait() }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, String(decoding: collected.bytes, as: UTF8.self))
    }

    /// A connected pair of close-on-exec Unix stream sockets; the child gets index 1, Heed keeps 0.
    package static func socketPair() throws -> [Int32] {
        var descriptors: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return descriptors
    }

    private static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors { close(descriptor) }
    }

    /// The output a reader thread collects, handed over when it is done.
    private final class Collected: @unchecked Sendable {
        // Written by the reader thread only, read after `done` is signalled.
        private(set) var bytes: [UInt8] = []
        private let done = DispatchSemaphore(value: 0)
        func append(_ more: ArraySlice<UInt8>) { bytes += more }
        func finish() { done.signal() }
        func wait() { done.wait() }
    }
}
