import Foundation

/// Turns what a capture device or a network peer delivers (any rate, interleaved channels) into
/// mono audio at the rate asked for, chunk by chunk, keeping the resampler's state from one chunk
/// to the next.
public struct CaptureConverter {
    /// Channels per frame of the input.
    public let channels: Int
    private var resampler: StreamingResampler?

    /// Creates a converter, or returns `nil` when the input is mono at the output rate already.
    public init?(inputRate: Int, channels: Int, outputRate: Int) {
        guard inputRate != outputRate || channels != 1 else { return nil }
        self.channels = channels
        self.resampler = inputRate == outputRate ? nil : StreamingResampler(inputRate: inputRate, outputRate: outputRate)
    }

    /// Converts interleaved frames; a partial frame at the end is ignored.
    public mutating func convert(_ interleaved: [Int16]) -> [Int16] {
        let mono = InterleavedPCM(samples: interleaved, channels: channels, sampleRate: 0).downmixed()
        return resampler?.process(mono) ?? mono
    }
}

/// Sample-rate conversion of an endless stream, with the filter of ``Resampler``: a
/// Hann-windowed sinc, 16 zero crossings each side, low-passed at 0.95 of the lower Nyquist
/// frequency.
///
/// Output sample `n` is centred on input position `n · inputRate / outputRate`, kept as a whole
/// sample index plus a phase in steps of `1 / (outputRate / gcd)` so that it never drifts. The
/// filter taps of each phase are computed once (one phase for 48 → 16 kHz, 160 for 44.1 → 16 kHz).
/// The stream starts in silence, as ``Resampler`` treats samples before the start, and output
/// lags input by the filter's half width (about 1 ms at 48 kHz).
struct StreamingResampler {
    let inputRate: Int
    let outputRate: Int

    private static let zeroCrossings = 16.0
    private let cutoff: Double
    private let halfWidth: Double
    /// Input samples per output sample, as `wholeStep + phaseStep / phases`.
    private let wholeStep: Int
    private let phaseStep: Int
    private let phases: Int
    /// Samples of history kept before the current position, and the silence the stream starts with.
    private let padding: Int

    /// Input not yet consumed, preceded by `padding` samples of history.
    private var history: [Double]
    /// The index in `history` of the input sample at or before the next output's centre.
    private var position: Int
    private var phase = 0
    /// The filter of each phase: the offset of its first tap from `position`, and the weights.
    private var taps: [(first: Int, weights: [Double])?]

    init(inputRate: Int, outputRate: Int) {
        precondition(inputRate > 0 && outputRate > 0, "sample rates must be positive")
        self.inputRate = inputRate
        self.outputRate = outputRate
        var (a, b) = (inputRate, outputRate)
        while b != 0 { (a, b) = (b, a % b) }
        phases = outputRate / a
        let inputStep = inputRate / a
        wholeStep = inputStep / phases
        phaseStep = inputStep % phases
        cutoff = 0.95 * min(1, Double(outputRate) / Double(inputRate))
        halfWidth = Self.zeroCrossings / cutoff
        padding = Int(halfWidth.rounded(.up)) + 1
        history = Array(repeating: 0, count: padding)
        position = padding
        taps = Array(repeating: nil, count: phases)
    }

    /// Takes the next input samples and returns every output sample they complete.
    mutating func process(_ input: [Int16]) -> [Int16] {
        history.reserveCapacity(history.count + input.count)
        for sample in input { history.append(Double(sample)) }
        var output: [Int16] = []
        output.reserveCapacity(input.count * outputRate / inputRate + 1)
        while true {
            let (first, weights) = filter(phase)
            let start = position + first
            guard start + weights.count <= history.count else { break }
            let sum = history.withUnsafeBufferPointer { samples in
                var sum = 0.0
                for index in 0..<weights.count { sum += samples[start + index] * weights[index] }
                return sum
            }
            output.append(Int16(max(-32768, min(32767, sum.rounded()))))
            phase += phaseStep
            position += wholeStep + phase / phases
            phase %= phases
        }
        let consumed = position - padding
        if consumed > 4096 {
            history.removeFirst(consumed)
            position -= consumed
        }
        return output
    }

    /// The taps of `phase`, computed on first use.
    private mutating func filter(_ phase: Int) -> (first: Int, weights: [Double]) {
        if let known = taps[phase] { return known }
        let fraction = Double(phase) / Double(phases)
        let first = Int((fraction - halfWidth).rounded(.up))
        let last = Int((fraction + halfWidth).rounded(.down))
        let weights = (first...last).map { offset in kernel(Double(offset) - fraction) }
        taps[phase] = (first, weights)
        return (first, weights)
    }

    private func kernel(_ x: Double) -> Double {
        let window = 0.5 + 0.5 * cos(Double.pi * x / halfWidth)
        let argument = Double.pi * cutoff * x
        let sinc = abs(argument) < 1e-9 ? 1 : sin(argument) / argument
        return cutoff * sinc * window
    }
}

/// Little-endian PCM samples of 1 to 4 bytes, as network audio carries them, as 16-bit samples.
public enum PCMSamples {
    /// Converts bytes to 16-bit samples, keeping each sample's top 16 bits.
    ///
    /// Width 1 is unsigned 8-bit (as in WAV files), widths 2, 3 and 4 are signed. Bytes of an
    /// incomplete last sample are ignored.
    /// - Parameters:
    ///   - bytes: The samples, channels interleaved.
    ///   - width: Bytes per sample, 1 to 4.
    /// - Returns: One 16-bit sample per input sample.
    public static func int16(littleEndian bytes: [UInt8], width: Int) -> [Int16] {
        precondition((1...4).contains(width), "sample width must be 1 to 4 bytes")
        let count = bytes.count / width
        var samples = [Int16](repeating: 0, count: count)
        bytes.withUnsafeBufferPointer { input in
            for index in 0..<count {
                let base = index * width
                switch width {
                case 1: samples[index] = Int16(Int(input[base]) - 128) << 8
                default:
                    // The two most significant bytes, little-endian, are the last two of the sample.
                    let low = UInt16(input[base + width - 2])
                    let high = UInt16(input[base + width - 1])
                    samples[index] = Int16(bitPattern: low | high << 8)
                }
            }
        }
        return samples
    }
}
