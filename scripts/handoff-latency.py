#!/usr/bin/env python3
"""Hand-off latency: how soon after the speaker stops the dictated text reaches the client.

usage: scripts/handoff-latency.py [HEED_BUILD_DIR]   (default .build/release)

Runs the real `heed serve` with Heed's microphone on ALSA's `file` PCM reading a FIFO, and
the real `heed-client-example dictate --handoff --json`. For each of Debian's LibriVox
sentences this script speaks into the FIFO in real time (20 ms chunks on the clock: one second
of room noise, the sentence, then room noise until the text comes) and measures, on the wall
clock:

  after speech   from the last sample of the sentence written to the final result read by the
                 client: what a user waits, the endpointer's second of quiet included;
  after the end  the service's own measure (its `handoff` event): from the endpointer's end
                 (1 s of quiet heard) to the result sent: decoding, confidence, delivery.

It also reports the hand-off's word errors (its text comes from the live pass, decoded while
the audio came) and the service's peak RSS (VmHWM). Nothing is mocked; the numbers include
ALSA's period buffering.
"""
import json, os, random, select, struct, subprocess, sys, tempfile, time, wave

build = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
heed, client = os.path.join(build, "heed"), os.path.join(build, "heed-client-example")
data = "/usr/share/pocketsphinx/test/data/librivox"
work = tempfile.mkdtemp(prefix="heed-handoff-")
runtime = os.path.join(work, "run")
os.makedirs(runtime, mode=0o700)
os.makedirs(os.path.join(work, "clients", "example"))
fifo = os.path.join(work, "in.raw")
os.mkfifo(fifo)
with open(os.path.join(work, ".asoundrc"), "w") as rc:
    rc.write(f'pcm.filein {{ type file slave.pcm {{ type null }} file "/dev/null" infile "{fifo}" format "raw" }}\n'
             f'pcm.fileout {{ type file slave.pcm {{ type null }} file "/dev/null" format "raw" }}\n'
             'pcm.!default { type asym capture.pcm "filein" playback.pcm "fileout" }\n')
with open(os.path.join(work, "clients", "example", "client.json"), "w") as manifest:
    json.dump({"appId": "org.heed.example-client", "displayName": "Example", "executable": os.path.abspath(client),
               "speechRecognitionUsageDescription": "Benchmark.", "microphoneUsageDescription": "Benchmark."}, manifest)
with open(os.path.join(work, "config.json"), "w") as config:
    config.write("{}")
common = ["--state-dir", os.path.join(work, "state"), "--config", os.path.join(work, "config.json"),
          "--clients", os.path.join(work, "clients")]
subprocess.run([heed, "auth", "speech-recognition", "grant", "org.heed.example-client"] + common, check=True, capture_output=True)
socket_path = os.path.join(runtime, "heed.sock")
env = dict(os.environ, HOME=work, XDG_RUNTIME_DIR=runtime)
service = subprocess.Popen([heed, "serve", "--json", "--socket", socket_path, "--device", "default", "--signal-device", "none"] + common,
                           env=env, stdout=subprocess.PIPE, text=True)
while "listening" not in service.stdout.readline():
    pass

random.seed(7)
def noise(seconds):
    return b"".join(struct.pack("<h", random.randint(-40, 40)) for _ in range(int(16000 * seconds)))

def reference(name):
    for line in open(os.path.join(data, "transcription")):
        if f"({name})" in line:
            return [w for w in line.split()[:-1] if w not in ("<s>", "</s>")]

def errors(ref, hyp):
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        previous, row[0] = row[:], i
        for j in range(1, len(hyp) + 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ref[i - 1] != hyp[j - 1]))
    return row[len(hyp)]

chunk = 640  # 20 ms of 16-bit samples
results = []
for name in open(os.path.join(data, "fileids")).read().split():
    with wave.open(os.path.join(data, name + ".wav")) as recording:
        speech = recording.readframes(recording.getnframes())
    proc = subprocess.Popen([client, "--socket", socket_path, "dictate", "--handoff", "--json"],
                            env=dict(os.environ, XDG_RUNTIME_DIR=runtime), stdout=subprocess.PIPE, text=True)
    writer = open(fifo, "wb", buffering=0)
    audio = noise(1) + speech
    start = time.monotonic()
    sent = 0
    final, speech_end = None, None
    while final is None and time.monotonic() - start < len(audio) / 32000 + 10:
        due = start + sent / 32000
        if time.monotonic() >= due:
            if sent >= len(audio):
                if speech_end is None:
                    speech_end = time.monotonic()
                audio += noise(0.02)
            writer.write(audio[sent:sent + chunk])
            sent += chunk
        ready, _, _ = select.select([proc.stdout], [], [], max(0, due - time.monotonic()) if sent < len(audio) else 0.005)
        if ready:
            line = proc.stdout.readline()
            if not line:
                break
            update = json.loads(line)
            if update.get("type") == "final":
                final = (time.monotonic(), update)
    writer.close()
    proc.wait()
    service_ms = None
    while service_ms is None:
        event = json.loads(service.stdout.readline())
        if event.get("event") == "handoff" and event.get("state") in ("finished", "failed"):
            service_ms = event.get("milliseconds")
    if final is None:
        print(f"{name}: no final result")
        continue
    words = final[1].get("spokenText", "").split()
    results.append(((final[0] - speech_end) * 1000, service_ms, errors(reference(name), words), len(reference(name))))
    print(f"{name}: {results[-1][0]:.0f} ms after speech, {service_ms:.0f} ms after the end; \"{final[1]['transcription']}\"")

with open(f"/proc/{service.pid}/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
service.terminate()
service.wait()
after_speech = sorted(r[0] for r in results)
after_end = sorted(r[1] for r in results)
print(f"hand-offs: {len(results)}; text after the end of speech: median {after_speech[len(after_speech) // 2]:.0f} ms, "
      f"max {after_speech[-1]:.0f} ms; after the endpointer's end: median {after_end[len(after_end) // 2]:.0f} ms, max {after_end[-1]:.0f} ms; "
      f"word errors {sum(r[2] for r in results)}/{sum(r[3] for r in results)}; the service's peak RSS {int(peak) // 1024} MB")
