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
        let ratio = Double(rate) / Double(audio.sampleRate)
        let cutoff = 0.95 * min(1, ratio)
        let halfWidth = zeroCrossings / cutoff
        let input = audio.samples.map(Double.init)
        let outputCount = Int((Double(input.count) * ratio).rounded(.down))
        var output = [Int16](repeating: 0, count: outputCount)
        for index in 0..<outputCount {
            let center = Double(index) / ratio
            let first = max(0, Int((center - halfWidth).rounded(.up)))
            let last = min(input.count - 1, Int((center + halfWidth).rounded(.down)))
            var sum = 0.0
            if first <= last {
                for k in first...last {
                    let x = Double(k) - center
                    sum += input[k] * kernel(x, cutoff: cutoff, halfWidth: halfWidth)
                }
            }
            output[index] = Int16(max(-32768, min(32767, sum.rounded())))
        }
        return AudioBuffer(samples: output, sampleRate: rate)
    }

    private static func kernel(_ x: Double, cutoff: Double, halfWidth: Double) -> Double {
        let window = 0.5 + 0.5 * cos(Double.pi * x / halfWidth)
        let argument = Double.pi * cutoff * x
        let sinc = abs(argument) < 1e-9 ? 1 : sin(argument) / argument
        return cutoff * sinc * window
    }
}
