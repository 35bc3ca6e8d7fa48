internal import CEspeakNG
import Foundation
import HeedCore
import Synchronization

// MARK: - libespeak-ng

/// The process-wide espeak-ng instance. Every `espeak_*` call of Heed is in this file.
///
/// libespeak-ng is initialised once per process and never terminated (Initialize → Terminate →
/// Initialize deadlocks in espeak-ng 1.51); every call is serialised by one lock, because
/// espeak-ng is not thread-safe.
final class Espeak: @unchecked Sendable {
    /// Initialised on first use, never terminated.
    static let shared = Mutex(Espeak())

    private var initialized = false
    private var sampleRate = 22_050

    private init() {}

    /// The corresponding C function is `espeak_Initialize`, with `AUDIO_OUTPUT_SYNCHRONOUS`.
    private func initialize() -> Bool {
        if initialized { return true }
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else { return false }
        sampleRate = Int(rate)
        guard espeak_SetVoiceByName("en-us") == EE_OK else { return false }
        espeak_SetSynthCallback(synthesisCallback)
        initialized = true
        return true
    }

    /// The corresponding C function is `espeak_TextToPhonemes` (ASCII names, `_` between phonemes).
    func textToPhonemes(_ text: String) -> String {
        guard initialize() else { return "" }
        let mode = Int32(UInt8(ascii: "_")) << 8
        var parts: [String] = []
        text.withCString { start in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(start)
            while pointer != nil {
                guard let result = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, mode) else { break }
                let part = String(cString: result)
                if !part.isEmpty { parts.append(part) }
            }
        }
        return parts.joined(separator: " ")
    }

    /// The corresponding C function is `espeak_Synth`.
    func synthesize(_ text: String, phonemeInput: Bool) throws -> AudioBuffer {
        guard initialize() else { throw PronunciationError(.synthesis, "espeak-ng could not be initialised (is espeak-ng-data installed?)") }
        let sink = SampleSink()
        let flags = UInt32(espeakCHARS_UTF8) | (phonemeInput ? UInt32(espeakPHONEMES) : 0)
        let status = text.withCString { start in
            espeak_Synth(start, strlen(start) + 1, 0, POS_CHARACTER, 0, flags, nil, Unmanaged.passUnretained(sink).toOpaque())
        }
        withExtendedLifetime(sink) {}
        guard status == EE_OK else { throw PronunciationError(.synthesis, "espeak-ng could not synthesize \(text)") }
        return AudioBuffer(samples: sink.samples, sampleRate: sampleRate)
    }
}

/// Collects the samples of one `espeak_Synth` call.
private final class SampleSink {
    var samples: [Int16] = []
}

/// The synth callback: appends the chunk to the call's ``SampleSink`` (its `user_data`).
private func synthesisCallback(_ samples: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let samples, count > 0, let userData = events?.pointee.user_data else { return 0 }
    let sink = Unmanaged<SampleSink>.fromOpaque(userData).takeUnretainedValue()
    sink.samples.append(contentsOf: UnsafeBufferPointer(start: samples, count: Int(count)))
    return 0
}
