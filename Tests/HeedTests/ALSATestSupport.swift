import Foundation
import HeedCore
import HeedTesting

/// ALSA devices without a sound card: the `file` PCM plugin over the `null` plugin, reading
/// captured audio from a raw file and writing played audio to one.
///
/// The `file` plugin's data is in whatever format the reader asks for; it is not paced to
/// real time, and after its file it delivers whatever was in the buffer, so tests read no
/// more than the file holds.
struct ALSAFixture {
    let directory: URL

    init() throws {
        directory = try TemporaryFolder.make()
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes samples as raw S16LE (interleaved when they are) and returns the path.
    @discardableResult
    func writeRaw(_ samples: [Int16], to name: String) throws -> String {
        let path = path(name)
        try Self.rawBytes(samples).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func rawBytes(_ samples: [Int16]) -> Data {
        var data = Data(capacity: samples.count * 2)
        for sample in samples { data.append(le: UInt16(bitPattern: sample)) }
        return data
    }

    /// A capture PCM named `name` that reads `infile` and accepts any format.
    static func capture(_ name: String, infile: String) -> String {
        "pcm.\(name) { type file  slave.pcm { type null }  file \"/dev/null\"  infile \"\(infile)\"  format \"raw\" }\n"
    }

    /// A playback PCM named `name` that writes to `file`.
    static func playback(_ name: String, file: String) -> String {
        "pcm.\(name) { type file  slave.pcm { type null }  file \"\(file)\"  format \"raw\" }\n"
    }

    /// A capture PCM that behaves like a sound card that records only `rate` Hz with `channels` channels.
    ///
    /// The `file` plugin on top reads `infile`. Its slave is a `plug` whose own slave is fixed at
    /// that rate and channel count. Opened with `SND_PCM_NO_AUTO_RESAMPLE`, `_CHANNELS` and
    /// `_FORMAT` (``ALSACapture``'s `alsaConverts: false`), the `plug` may not convert, so ALSA
    /// refuses 16 kHz mono exactly as a `hw:` device does; opened normally, it converts.
    static func fixedFormatCapture(_ name: String, infile: String, rate: Int, channels: Int) -> String {
        """
        pcm.\(name) {
            type file
            slave.pcm { type plug  slave { pcm { type null }  rate \(rate)  channels \(channels) } }
            file "/dev/null"  infile "\(infile)"  format "raw"
        }

        """
    }

    /// Interleaves channels sample by sample.
    static func interleave(_ channels: [[Int16]]) -> [Int16] {
        guard let frames = channels.first?.count else { return [] }
        return (0..<frames).flatMap { frame in channels.map { $0[frame] } }
    }

    /// A tone: `count` samples at `rate` Hz of `frequency` Hz with peak `amplitude`.
    static func tone(_ frequency: Double, count: Int, rate: Int, amplitude: Double = 8_000) -> [Int16] {
        (0..<count).map { Int16((amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))).rounded()) }
    }

    /// Upward zero crossings: a tone's frequency times its duration.
    static func crossings(_ samples: some Collection<Int16>) -> Int {
        zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
    }
}
