// WebRTC audio processing over 16 kHz mono 16-bit raw audio, standard input to standard output in
// 10 ms frames. Not part of Heed: scripts that compare the library with Heed's speexdsp build it.
//
//   webrtc-filter LEVEL [AGC]   noise suppression at LEVEL 0-3 and a high-pass filter, AGC if 1
//                               (scripts/denoise-comparison.py)
//   webrtc-filter --echo FAR    echo cancellation (AEC, extended filter, delay-agnostic, low
//                               suppression) of the far end FAR (raw, as played) from standard
//                               input, with a high-pass filter (scripts/echo-benchmark.py)
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>
#include <cstdio>
#include <cstring>
#include <cstdlib>

static void frame16k(webrtc::AudioFrame& frame, const int16_t* samples) {
  frame.sample_rate_hz_ = 16000; frame.num_channels_ = 1; frame.samples_per_channel_ = 160;
  memcpy(frame.data_, samples, sizeof(int16_t) * 160);
}

int main(int argc, char** argv) {
  bool echo = argc > 2 && strcmp(argv[1], "--echo") == 0;
  FILE* far = echo ? fopen(argv[2], "rb") : nullptr;
  if (echo && !far) { fprintf(stderr, "webrtc-filter: cannot open %s\n", argv[2]); return 1; }
  webrtc::Config config;
  if (echo) {
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
  }
  webrtc::AudioProcessing* apm = webrtc::AudioProcessing::Create(config);
  apm->high_pass_filter()->Enable(true);
  if (echo) {
    apm->echo_cancellation()->enable_drift_compensation(false);
    apm->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kLowSuppression);
    apm->echo_cancellation()->Enable(true);
  } else {
    int level = argc > 1 ? atoi(argv[1]) : 2;
    apm->noise_suppression()->set_level((webrtc::NoiseSuppression::Level)level);
    apm->noise_suppression()->Enable(true);
    if (argc > 2 && atoi(argv[2])) {
      apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital);
      apm->gain_control()->Enable(true);
    }
  }
  webrtc::AudioFrame frame, reverse;
  int16_t near[160], played[160];
  size_t n;
  while ((n = fread(near, 2, 160, stdin)) > 0) {
    if (n < 160) memset(near + n, 0, sizeof(int16_t) * (160 - n));
    if (echo) {
      if (fread(played, 2, 160, far) != 160) memset(played, 0, sizeof played);
      frame16k(reverse, played);
      if (apm->AnalyzeReverseStream(&reverse) != 0) { fprintf(stderr, "AnalyzeReverseStream failed\n"); return 1; }
      apm->set_stream_delay_ms(20);
    }
    frame16k(frame, near);
    if (apm->ProcessStream(&frame) != 0) { fprintf(stderr, "ProcessStream failed\n"); return 1; }
    fwrite(frame.data_, 2, n, stdout);
  }
  delete apm;
  return 0;
}
