// WebRTC audio processing (noise suppression at a level 0-3, high-pass filter, AGC if asked) over
// 16 kHz mono 16-bit raw audio, standard input to standard output in 10 ms frames. Not part of
// Heed: scripts/denoise-comparison.py builds it to compare the library with Heed's speexdsp.
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>
#include <cstdio>
#include <cstring>
#include <cstdlib>
int main(int argc, char** argv) {
  int level = argc > 1 ? atoi(argv[1]) : 2;
  bool agc = argc > 2 && atoi(argv[2]);
  webrtc::AudioProcessing* apm = webrtc::AudioProcessing::Create();
  apm->high_pass_filter()->Enable(true);
  apm->noise_suppression()->set_level((webrtc::NoiseSuppression::Level)level);
  apm->noise_suppression()->Enable(true);
  if (agc) { apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital); apm->gain_control()->Enable(true); }
  webrtc::AudioFrame frame;
  frame.sample_rate_hz_ = 16000; frame.num_channels_ = 1; frame.samples_per_channel_ = 160;
  int16_t buf[160];
  size_t n;
  while ((n = fread(buf, 2, 160, stdin)) > 0) {
    memset(frame.data_, 0, sizeof(int16_t) * 160);
    memcpy(frame.data_, buf, n * 2);
    frame.sample_rate_hz_ = 16000; frame.num_channels_ = 1; frame.samples_per_channel_ = 160;
    if (apm->ProcessStream(&frame) != 0) { fprintf(stderr, "ProcessStream failed\n"); return 1; }
    fwrite(frame.data_, 2, n, stdout);
  }
  delete apm;
  return 0;
}
