internal import CEspeakNG
import Foundation
import HeedCore
import Synchronization

// MARK: - libespeak-ng

/// The process-wide espeak-ng instance. Every `espeak_*` call of Heed is in this file.
///
/// libespeak-ng is loaded (`dlopen`) on first use, not linked: through libpcaudio it brings
/// PulseAudio, X11 and audio codecs, which cost every Heed process memory and which only spoken
/// responses and pronunciations of unknown words need. It is initialised once per process and
/// never terminated (Initialize → Terminate → Initialize deadlocks in espeak-ng 1.51); every call
/// is serialised by one lock, because espeak-ng is not thread-safe.
final class Espeak: @unchecked Sendable {
    /// Initialised on first use, never terminated.
    static let shared = Mutex(Espeak())

    /// The library's soname (Debian's libespeak-ng1).
    static let library = "libespeak-ng.so.1"

    /// The five functions Heed calls, looked up in the loaded library.
    private struct Functions {
        typealias Initialize = @convention(c) (espeak_AUDIO_OUTPUT, Int32, UnsafePointer<CChar>?, Int32) -> Int32
        typealias SetVoiceByName = @convention(c) (UnsafePointer<CChar>?) -> espeak_ERROR
        typealias Callback = @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?) -> Int32
        typealias SetSynthCallback = @convention(c) (Callback?) -> Void
        typealias TextToPhonemes = @convention(c) (UnsafeMutablePointer<UnsafeRawPointer?>?, Int32, Int32) -> UnsafePointer<CChar>?
        typealias Synth = @convention(c) (
            UnsafeRawPointer?, Int, UInt32, espeak_POSITION_TYPE, UInt32, UInt32, UnsafeMutablePointer<UInt32>?, UnsafeMutableRawPointer?
        ) -> espeak_ERROR

        let initialize: Initialize
        let setVoiceByName: SetVoiceByName
        let setSynthCallback: SetSynthCallback
        let textToPhonemes: TextToPhonemes
        let synth: Synth

        /// `nil` when the library or one of the functions is missing.
        init?() {
            guard let handle = dlopen(Espeak.library, RTLD_NOW | RTLD_LOCAL) else { return nil }
            func function<T>(_ name: String, _: T.Type) -> T? { dlsym(handle, name).map { unsafeBitCast($0, to: T.self) } }
            guard let initialize = function("espeak_Initialize", Initialize.self),
                let setVoiceByName = function("espeak_SetVoiceByName", SetVoiceByName.self),
                let setSynthCallback = function("espeak_SetSynthCallback", SetSynthCallback.self),
                let textToPhonemes = function("espeak_TextToPhonemes", TextToPhonemes.self),
                let synth = function("espeak_Synth", Synth.self)
            else { return nil }
            (self.initialize, self.setVoiceByName, self.setSynthCallback, self.textToPhonemes, self.synth) =
                (initialize, setVoiceByName, setSynthCallback, textToPhonemes, synth)
        }
    }

    private var functions: Functions?
    private var sampleRate = 22_050

    private init() {}

    /// Loads the library and calls `espeak_Initialize` (with `AUDIO_OUTPUT_SYNCHRONOUS`) the first time.
    private func initialize() -> Functions? {
        if let functions { return functions }
        guard let loaded = Functions() else { return nil }
        let rate = loaded.initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else { return nil }
        sampleRate = Int(rate)
        guard loaded.setVoiceByName("en-us") == EE_OK else { return nil }
        loaded.setSynthCallback(synthesisCallback)
        functions = loaded
        return loaded
    }

    /// The corresponding C function is `espeak_TextToPhonemes` (ASCII names, `_` between phonemes).
    func textToPhonemes(_ text: String) -> String {
        guard let espeak = initialize() else { return "" }
        let mode = Int32(UInt8(ascii: "_")) << 8
        var parts: [String] = []
        text.withCString { start in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(start)
            while pointer != nil {
                guard let result = espeak.textToPhonemes(&pointer, espeakCHARS_UTF8, mode) else { break }
                let part = String(cString: result)
                if !part.isEmpty { parts.append(part) }
            }
        }
        return parts.joined(separator: " ")
    }

    /// The corresponding C function is `espeak_Synth`.
    func synthesize(_ text: String, phonemeInput: Bool) throws -> AudioBuffer {
        guard let espeak = initialize() else {
            throw PronunciationError(.synthesis, "espeak-ng could not be loaded (\(Self.library)) or initialised: are libespeak-ng1 and espeak-ng-data installed?")
        }
        let sink = SampleSink()
        let flags = UInt32(espeakCHARS_UTF8) | (phonemeInput ? UInt32(espeakPHONEMES) : 0)
        let status = text.withCString { start in
            espeak.synth(start, strlen(start) + 1, 0, POS_CHARACTER, 0, flags, nil, Unmanaged.passUnretained(sink).toOpaque())
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
