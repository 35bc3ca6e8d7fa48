import Foundation
import HeedAudio
import Testing
import HeedTesting

/// Claims on a microphone: real files and real `flock(2)` locks in a temporary runtime folder.
struct MicrophoneClaimTests {
    @Test func oneHolderAtATimeNamedToTheNext() throws {
        let folder = try TemporaryFolder.make().appendingPathComponent("heed").path
        let claim = try MicrophoneClaim.take(device: "plughw:CARD=PCH,DEV=0", owner: "heed listen", folder: folder)
        #expect(FileManager.default.fileExists(atPath: folder + "/microphone-plughw%3ACARD%3DPCH%2CDEV%3D0.lock"))
        #expect(throws: MicrophoneClaimError.self) {
            try MicrophoneClaim.take(device: "plughw:CARD=PCH,DEV=0", owner: "heed serve", folder: folder)
        }
        do {
            _ = try MicrophoneClaim.take(device: "plughw:CARD=PCH,DEV=0", owner: "heed serve", folder: folder)
        } catch {
            #expect("\(error)".hasPrefix("the microphone 'plughw:CARD=PCH,DEV=0' is in use by heed listen (pid \(getpid())) since "), "\(error)")
        }
        // Another device is another claim.
        let other = try MicrophoneClaim.take(device: "default", owner: "heed serve", folder: folder)
        other.release()
        claim.release()
        claim.release()
        let next = try MicrophoneClaim.take(device: "plughw:CARD=PCH,DEV=0", owner: "heed serve", folder: folder)
        next.release()
    }

    /// The holder's line is another process's bytes: a time that is no date is named, not a crash.
    @Test(arguments: ["1e300", "nan", "-inf", "soon"])
    func aHoldersTimeThatIsNoDateIsNamed(time: String) throws {
        let folder = try TemporaryFolder.make().appendingPathComponent("heed").path
        let claim = try MicrophoneClaim.take(device: "default", owner: "heed listen", folder: folder)
        defer { claim.release() }
        try "4242\t\(time)\tsomething odd\n".write(toFile: folder + "/microphone-default.lock", atomically: false, encoding: .utf8)
        do {
            _ = try MicrophoneClaim.take(device: "default", owner: "heed serve", folder: folder)
            Issue.record("a held claim was taken again")
        } catch {
            #expect("\(error)".hasPrefix("the microphone 'default' is in use by something odd (pid 4242)"), "\(error)")
        }
    }

    @Test func aFolderThatCannotBeMadeIsUnusableNotBusy() throws {
        let file = try TemporaryFolder.make().appendingPathComponent("a-file")
        try Data().write(to: file)
        do {
            _ = try MicrophoneClaim.take(device: "default", owner: "heed listen", folder: file.path + "/heed")
            Issue.record("a claim under a file was taken")
        } catch {
            guard case .unusable(let path, _) = error else {
                Issue.record("not unusable: \(error)")
                return
            }
            #expect(path == file.path + "/heed")
        }
    }
}
