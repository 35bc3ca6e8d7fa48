#!/usr/bin/env python3
"""WebRTC's noise suppression against Heed's (speexdsp) on barista orders in kitchen noise.

usage: scripts/denoise-comparison.py HEED CORPORA [--snr 6,12] [--levels 1,2,3]

Issue 13 asked for both libraries on the noise curve. Heed wraps libspeexdsp; this builds
scripts/webrtc-filter.cc (Debian's libwebrtc-audio-processing-dev and g++), mixes the kitchen
noise into the 309 Picovoice barista orders at each SNR (the loudest 2048-sample frame of speech
over that of the noise, a noise offset chosen by the file's name, peak-normalised: the same
recipe as `heed eval --noise`, in Python, so the three conditions decode the same files), and
runs `heed eval` with the coffee intents on: the mixes (`--denoise off`), the mixes through
speexdsp (`--denoise on`), and the mixes through WebRTC at each level (`--denoise off`). Prints
intent accuracy counting a rejection as not understood, ignoring rejection, and RTF. The work
folder goes at the end (KEEP=1 keeps it).
"""
import argparse, array, hashlib, json, os, random, subprocess, sys, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import read_mono16k, webrtc_filter, work_folder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("heed")
parser.add_argument("corpora")
parser.add_argument("--snr", default="6,12")
parser.add_argument("--levels", default="1,2,3")
args = parser.parse_args()
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
barista = os.path.join(args.corpora, "picovoice_barista")
work = work_folder("heed-denoise-")
print(f"work: {work}", file=sys.stderr)

webrtc = webrtc_filter(work)


def read(path):
    recording = read_mono16k(path)
    if recording is None:
        sys.exit(f"{path}: needs 16 kHz mono 16-bit")
    return array.array("h", recording[0])


def write(path, samples):
    with wave.open(path, "wb") as recording:
        recording.setnchannels(1), recording.setsampwidth(2), recording.setframerate(16000)
        recording.writeframes(samples.tobytes())


def loudest(samples):
    return max(sum(v * v for v in samples[i:i + 2048]) for i in range(0, len(samples), 2048))


noise = read(os.path.join(barista, "noise", "kitchen.wav"))
rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(barista, "manifest.tsv"))]
header, rows = rows[0], rows[1:]


def evaluate(manifest, denoise):
    output = subprocess.run([args.heed, "eval", manifest, "--intents", os.path.join(repo, "intents/examples/coffee.json"),
                             "--jobs", "2", "--json", "--denoise", denoise], capture_output=True, text=True, check=True).stdout
    report = json.loads(output)
    return report["intentAccuracy"], report["intentAccuracyIgnoringRejection"], report["rtf"]


print("| SNR | front end | intent accuracy | ignoring rejection | RTF |")
print("|---|---|---|---|---|")
for snr in [float(value) for value in args.snr.split(",")]:
    levels = [int(value) for value in args.levels.split(",")]
    folders = {name: os.path.join(work, f"{snr:g}dB-{name}") for name in ["mix"] + [f"webrtc{level}" for level in levels]}
    manifests = {name: open(os.path.join(folder + ".tsv"), "w") for name, folder in folders.items()}
    for name, folder in folders.items():
        os.makedirs(folder)
        print("\t".join(header), file=manifests[name])
    for row in rows:
        speech = read(os.path.join(barista, row[0]))
        start = random.Random(int(hashlib.md5(row[0].encode()).hexdigest()[:8], 16)).randrange(len(noise))
        segment = [noise[(start + i) % len(noise)] for i in range(len(speech))]
        noise_energy = loudest(segment)
        scale = (loudest(speech) / (noise_energy * 10 ** (snr / 10))) ** 0.5 if noise_energy > 0 else 0
        mixed = [a + scale * b for a, b in zip(speech, segment)]
        gain = 32767 / (max(abs(v) for v in mixed) or 1)
        mix = array.array("h", [int(round(v * gain)) for v in mixed])
        name = os.path.basename(row[0])
        outputs = {"mix": mix}
        for level in levels:
            cleaned = subprocess.run([webrtc, str(level)], input=mix.tobytes(), capture_output=True, check=True).stdout
            outputs[f"webrtc{level}"] = array.array("h", cleaned)
        for key, samples in outputs.items():
            path = os.path.join(folders[key], name)
            write(path, samples)
            print("\t".join([path] + row[1:]), file=manifests[key])
    for manifest in manifests.values():
        manifest.close()
    runs = [("none", folders["mix"], "off"), ("speexdsp (Heed's --denoise on)", folders["mix"], "on")]
    runs += [(f"WebRTC, level {level}", folders[f"webrtc{level}"], "off") for level in levels]
    for label, folder, denoise in runs:
        accuracy, ignoring, rtf = evaluate(folder + ".tsv", denoise)
        print(f"| {snr:g} dB | {label} | {accuracy:.1%} | {ignoring:.1%} | {rtf:.3f} |", flush=True)
