public import HeedCore
import Foundation

/// Sample-rate conversion with a Hann-windowed sinc filter.
///
/// The filter is low-passed at 0.95 of the lower Nyquist frequency, so downsampling
/// (44.1 or 48 kHz to 16 kHz) does not alias; 16 zero crossings each side.
public enum Resampler {
    private static let zeroCrossings = 16.0

    /// Converts `audio` to `rate` samples a second; returns it unchanged when it is at that rate.
    public static func resample(_ audio: AudioBuffer, to rate: Int) -> AudioBuffer {
        guard audio.sampleRate != rate, !audio.samples.isEmpty else { return audio }
        var stream = Stream(from: audio.sampleRate, to: rate)
        return AudioBuffer(samples: stream.process(audio.samples) + stream.finish(), sampleRate: rate)
    }

    /// Resampling a block at a time, with the same output as resampling the whole at once: each
    /// output sample is computed once the input under its filter has arrived, and input no later
    /// sample needs is dropped, so memory stays that of a block.
    public struct Stream {
        private let ratio: Double
        private let cutoff: Double
        private let halfWidth: Double
        /// Input not yet dropped; `input[0]` is input sample number `inputStart`.
        private var input: [Double] = []
        private var inputStart = 0
        /// Input samples seen.
        private var total = 0
        /// The number of the next output sample.
        private var produced = 0

        /// A stream from `rate` to `target` samples a second.
        public init(from rate: Int, to target: Int) {
            ratio = Double(target) / Double(rate)
            cutoff = 0.95 * min(1, ratio)
            halfWidth = zeroCrossings / cutoff
        }

        /// Takes the next input samples and returns the output samples now complete.
        public mutating func process(_ samples: [Int16]) -> [Int16] {
            if ratio == 1 { return samples }
            input += samples.map(Double.init)
            total += samples.count
            return produce(final: false)
        }

        /// The output samples left once the input has ended.
        public mutating func finish() -> [Int16] {
            ratio == 1 ? [] : produce(final: true)
        }

        private mutating func produce(final: Bool) -> [Int16] {
            let limit = final ? Int((Double(total) * ratio).rounded(.down)) : Int.max
            var output: [Int16] = []
            while produced < limit {
                let center = Double(produced) / ratio
                let reach = Int((center + halfWidth).rounded(.down))
                if !final, reach > total - 1 { break }
                let first = max(0, Int((center - halfWidth).rounded(.up)))
                let last = min(total - 1, reach)
                var sum = 0.0
                if first <= last {
                    for k in first...last {
                        sum += input[k - inputStart] * kernel(Double(k) - center, cutoff: cutoff, halfWidth: halfWidth)
                    }
                }
                output.append(Int16(max(-32768, min(32767, sum.rounded()))))
                produced += 1
            }
            let needed = max(0, Int((Double(produced) / ratio - halfWidth).rounded(.up)))
            let drop = min(input.count, needed - inputStart)
            if drop > 0 {
                input.removeFirst(drop)
                inputStart += drop
            }
            return output
        }
    }

    private static func kernel(_ x: Double, cutoff: Double, halfWidth: Double) -> Double {
        let window = 0.5 + 0.5 * cos(Double.pi * x / halfWidth)
        let argument = Double.pi * cutoff * x
        let sinc = abs(argument) < 1e-9 ? 1 : sin(argument) / argument
        return cutoff * sinc * window
    }
}
