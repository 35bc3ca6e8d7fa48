#!/usr/bin/env -S python3 -u
"""Hand-off latency: how soon after the speaker stops the dictated text is sent to the client.

usage: scripts/handoff-latency.py [HEED_BUILD_DIR [HEED_SERVE_FLAGS...]]   (default .build/release)

Runs the real `heed serve` with Heed's microphone on ALSA's `file` PCM and the real
`heed-client-example dictate --handoff --json`, once for each of Debian's LibriVox sentences
(the microphone hears one second of room noise, the sentence, three seconds of room noise).
It reports the service's own measure (its `handoff` event): from the moment the endpointer
decides that the speaker has stopped (a second of quiet heard) to the result sent: the live
pass's end, the confidence passes, the shared-storage file and the socket.

ALSA's file PCM is not paced to real time (a FIFO does not pace it either: a short read is
padded with silence), so the microphone is read as fast as the service can decode. That does
not change this measure: reading, endpointing and the live pass run on one thread, so when the
endpointer decides, everything before it has been decoded, as with a real microphone whose
audio comes slower than the decoder. What a user waits after their last word is this plus the
second of quiet the endpointer waits for (docs/DICTATION.md).

It also reports the hand-off's word errors (its text comes from the live pass) and the
service's peak RSS (VmHWM). Nothing is mocked.
"""
import json, os, random, struct, subprocess, sys, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import LIBRIVOX, librivox_references, start_service, word_errors, work_folder

build = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
heed, client = os.path.join(build, "heed"), os.path.join(build, "heed-client-example")
data = LIBRIVOX
references = librivox_references()
work = work_folder("heed-handoff-")
runtime = os.path.join(work, "run")
os.makedirs(runtime, mode=0o700)
infile = os.path.join(work, "in.raw")
with open(os.path.join(work, ".asoundrc"), "w") as rc:
    rc.write(f'pcm.filein {{ type file slave.pcm {{ type null }} file "/dev/null" infile "{infile}" format "raw" }}\n'
             f'pcm.fileout {{ type file slave.pcm {{ type null }} file "/dev/null" format "raw" }}\n'
             'pcm.!default { type asym capture.pcm "filein" playback.pcm "fileout" }\n')
socket_path = os.path.join(runtime, "heed.sock")
service = start_service(
    heed, work,
    {"appId": "org.heed.example-client", "displayName": "Example", "executable": os.path.abspath(client),
     "speechRecognitionUsageDescription": "Benchmark.", "microphoneUsageDescription": "Benchmark."},
    ["--socket", socket_path, "--device", "default", "--signal-device", "none"] + sys.argv[2:],
    dict(os.environ, HOME=work, XDG_RUNTIME_DIR=runtime))

random.seed(7)
def noise(seconds):
    return b"".join(struct.pack("<h", random.randint(-40, 40)) for _ in range(int(16000 * seconds)))

results = []
for name in references:
    with wave.open(os.path.join(data, name + ".wav")) as recording:
        speech = recording.readframes(recording.getnframes())
    with open(infile, "wb") as microphone:
        microphone.write(noise(1) + speech + noise(3))
    done = subprocess.run([client, "--socket", socket_path, "dictate", "--handoff", "--json"],
                          env=dict(os.environ, XDG_RUNTIME_DIR=runtime), capture_output=True, text=True)
    final = next((json.loads(line) for line in done.stdout.splitlines() if json.loads(line).get("type") == "final"), None)
    service_ms = None
    while service_ms is None:
        event = json.loads(service.stdout.readline())
        if event.get("event") == "handoff" and event.get("state") in ("finished", "failed"):
            service_ms = event.get("milliseconds", -1)
    if final is None:
        print(f"{name}: no final result: {done.stderr.strip()}")
        continue
    words = final.get("spokenText", "").split()
    results.append((service_ms, word_errors(references[name], words), len(references[name])))
    print(f"{name}: {service_ms:.0f} ms after the end; \"{final['transcription']}\"")

with open(f"/proc/{service.pid}/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
service.terminate()
service.wait()
after_end = sorted(r[0] for r in results)
print(f"hand-offs: {len(results)}; result sent after the endpointer's end: median {after_end[len(after_end) // 2]:.0f} ms, "
      f"max {after_end[-1]:.0f} ms; word errors {sum(r[1] for r in results)}/{sum(r[2] for r in results)}; "
      f"the service's peak RSS {int(peak) // 1024} MB")
