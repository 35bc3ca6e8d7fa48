#!/usr/bin/env -S python3 -u
"""The hands-free listener in a noisy kitchen: real barista orders in one stream with kitchen noise.

usage: scripts/listen-noise.py HEED CORPORA [--snr clean,24,12,6] [--orders 60] [--modes off,auto,on]
       scripts/listen-noise.py HEED CORPORA --talk SETS [--snr clean,12] [--modes off]

Builds one recording per SNR from the first --orders orders of CORPORA/picovoice_barista (sorted by
file name; 0 for all 309), each followed by 1.5 s of nothing, with the benchmark's kitchen noise
running under the whole stream (looped). The noise is scaled once for the stream, the way the
Picovoice benchmark scales it per recording: the median over the orders of their loudest
2048-sample frame energy, over the loudest frame energy of the noise, is the SNR. Then for each
--denoise mode it runs `HEED listen --input STREAM --dry-run --json --intents
intents/examples/coffee.json` (always-on activation, the shipped defaults otherwise) and matches
each `final` event to the order it falls in. An order is understood when an accepted final of it
holds every labelled slot phrase ("triple shot", "light roast"; the label's words, in order);
"heard" ignores rejection.

With --talk, the stream is other speech instead: every recording of the sets of SETS
(scripts/rejection-sets.py) that are only negatives for the shipped intents (read sentences,
coffee orders, runs of words and of home-assistant commands, digits; about 56 minutes), in the
order of their manifests, each followed by 1.5 s of nothing, heard with the shipped intents
(`--intents intents`, nothing going on). Every accepted final counts as a false accept; the script
prints how many, per hour, and their words by set. (The runs of real commands are negatives as
a whole; a listener that hears one command of a run on its own hears something that was said.)

Prints one JSON object a line. Needs only Python's standard library and a release heed.
"""
import argparse, json, math, os, random, statistics, struct, subprocess, sys, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import work_folder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("heed")
parser.add_argument("corpora")
parser.add_argument("--snr", default="clean,24,12,6", help="dB values, and clean for no noise")
parser.add_argument("--orders", type=int, default=60, help="the first N orders; 0 for all")
parser.add_argument("--talk", metavar="SETS", help="hear other speech from these rejection sets instead of orders")
parser.add_argument("--modes", default="off,auto,on")
args = parser.parse_args()

RATE, GAP, FRAME = 16000, 24000, 2048
barista = os.path.join(args.corpora, "picovoice_barista")

def read(path):
    with wave.open(path) as recording:
        if recording.getframerate() != RATE or recording.getnchannels() != 1 or recording.getsampwidth() != 2:
            sys.exit(f"{path}: needs 16 kHz mono 16-bit")
        data = recording.readframes(recording.getnframes())
    return list(struct.unpack(f"<{len(data) // 2}h", data))

def peak_energy(samples):
    return max((sum(x * x for x in samples[i:i + FRAME]) / FRAME for i in range(0, max(1, len(samples) - FRAME + 1), FRAME)), default=0)

def words(text):
    return "".join(c if c.isalnum() or c == " " else " " for c in text.lower()).split()

rows = []
if args.talk:
    with open(os.path.join(args.talk, "sets.tsv")) as sets:
        for line in list(sets)[1:]:
            name, _, grammar, purpose = line.rstrip("\n").split("\t")[:4]
            if grammar == "--intents intents" and purpose.startswith("negatives"):
                with open(os.path.join(args.talk, name + ".tsv")) as manifest:
                    rows += [(line.split("\t")[0], name) for line in list(manifest)[1:]]
else:
    with open(os.path.join(barista, "manifest.tsv")) as manifest:
        header = manifest.readline().rstrip("\n").split("\t")
        for line in manifest:
            fields = dict(zip(header, line.rstrip("\n").split("\t")))
            rows.append((os.path.join(barista, fields["wav"]), json.loads(fields["intent_slots_json"])))
    rows.sort()
    rows = rows[:args.orders] if args.orders else rows

speech, spans, peaks = [], [], []
for path, label in rows:
    samples = read(path)
    peaks.append(peak_energy(samples))
    spans.append((len(speech) / RATE, (len(speech) + len(samples) + GAP) / RATE, label))
    speech += samples + [0] * GAP
speech_peak = statistics.median(peaks)
noise = read(os.path.join(barista, "noise", "kitchen.wav"))
noise_peak = peak_energy(noise)
work = work_folder("heed-listen-noise-")

for snr in [None if s == "clean" else float(s) for s in args.snr.split(",")]:
    gain = 0.0 if snr is None else math.sqrt(speech_peak / (noise_peak * 10 ** (snr / 10)))
    offset = random.Random(2026).randrange(len(noise))
    mixed = [speech[i] + gain * noise[(offset + i) % len(noise)] for i in range(len(speech))]
    scale = min(1.0, 32767 / max(1.0, max(abs(x) for x in mixed)))
    stream = os.path.join(work, f"{'talk' if args.talk else 'orders'}-{'clean' if snr is None else f'{snr:g}'}.wav")
    with wave.open(stream, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(struct.pack(f"<{len(mixed)}h", *(int(round(x * scale)) for x in mixed)))
    for mode in args.modes.split(","):
        run = subprocess.run(
            [args.heed, "listen", "--input", stream, "--dry-run", "--json", "--intents",
             "intents" if args.talk else "intents/examples/coffee.json", "--denoise", mode], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"heed listen failed: {run.stderr}")
        events = [json.loads(line) for line in run.stdout.splitlines()]
        finals = [e for e in events if e["event"] == "final"]
        endings = {}
        for e in events:
            if e["event"] == "speechEnded":
                endings[e["mode"]] = endings.get(e["mode"], 0) + 1
        condition = {"snr": "clean" if snr is None else snr, "denoise": mode}
        if args.talk:
            accepted = {}
            for f in finals:
                if f["text"] and not f["rejected"]:
                    name = next((label for start, end, label in spans if start <= f["time"] < end), "?")
                    accepted.setdefault(name, []).append(f["text"])
            count = sum(len(texts) for texts in accepted.values())
            hours = len(mixed) / RATE / 3600
            print(json.dumps(condition | {"false_accepts": count, "per_hour": round(count / hours, 2), "finals": len(finals),
                                          "endings": endings, "hours": round(hours, 3), "accepted_by_set": accepted}))
            continue
        understood = heard = denoised = 0
        for start, end, label in spans:
            wanted = [words(value) for value in label.get("slots", {}).values()]
            mine = [f for f in finals if start <= f["time"] < end]

            def holds(final):
                text = " ".join(words(final["text"]))
                return bool(text) and all(" ".join(w) in text for w in wanted)
            heard += any(holds(f) for f in mine)
            understood += any(holds(f) and not f["rejected"] for f in mine)
            denoised += any(f.get("denoised") for f in mine)
        print(json.dumps(condition | {"orders": len(spans), "understood": understood, "heard_ignoring_rejection": heard,
                                      "orders_denoised": denoised if mode == "auto" else None, "finals": len(finals),
                                      "endings": endings, "stream_seconds": round(len(mixed) / RATE, 1)}))
