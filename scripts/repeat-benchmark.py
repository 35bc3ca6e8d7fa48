#!/usr/bin/env -S python3 -u
"""Saying it again: real commands said twice by the same person, heard by the always-on listener.

usage: scripts/repeat-benchmark.py HEED CORPORA [--windows 0,5] [--gap 1.5] [--snr clean,12,6]

People say a command again when it was not acted on. This builds one stream per corpus of real
pairs of recordings in which one person (or one recording set-up) says the same command twice:
- FSDD digits (CORPORA/fsdd_digits): each speaker's repetitions 0 and 1, 2 and 3, … of each digit
  (150 pairs), heard with a one-intent grammar of the ten digit words;
- Picovoice barista orders (CORPORA/picovoice_barista): two orders of one recording cluster with
  the same intent and slots (27 pairs), heard with intents/examples/coffee.json.
In each stream the second recording of a pair follows the first after --gap seconds of nothing,
and pairs are 8 s apart. With --snr, the benchmark's kitchen noise runs under each stream, scaled
as scripts/listen-noise.py scales it (the median peak energy of the stream's recordings over the
noise's). For each SNR and --repeat-window value it runs `HEED listen --input STREAM
--dry-run --json --repeat-window W` (always-on, the shipped thresholds) and counts, per pair,
whether the command was acted on at the first saying, by the second at the latest, by the second
through the repeat rule (`"repeated": true` on its final), and how many accepted finals were wrong.
A digit is right when the accepted final's words are the digit's; an order when the accepted final
holds every labelled slot phrase (as scripts/listen-noise.py counts).

What the repeat rule costs on other talk is counted by scripts/listen-noise.py --talk, which runs
the listener with its defaults. Prints one JSON object a line. Python's standard library only.
"""
import argparse, collections, json, os, re, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import manifest_rows, peak_energy, samples_16k, with_noise, words, work_folder, write_16k

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("heed")
parser.add_argument("corpora")
parser.add_argument("--windows", default="0,5", help="--repeat-window values to compare")
parser.add_argument("--gap", type=float, default=1.5, help="seconds between the two sayings")
parser.add_argument("--snr", default="clean", help="dB values of kitchen noise, and clean for none")
args = parser.parse_args()

RATE, BETWEEN = 16000, 8.0
work = work_folder("heed-repeat-")

def manifest(folder):
    return manifest_rows(os.path.join(folder, "manifest.tsv"))

# FSDD: (speaker, digit) → recordings by repetition; pairs of repetitions 2k and 2k+1.
fsdd = os.path.join(args.corpora, "fsdd_digits")
takes = {}
for row in manifest(fsdd):
    repetition = int(re.search(r"_(\d+)\.wav$", row["wav"]).group(1))
    takes[(row["speaker"], row["transcript"], repetition)] = os.path.join(fsdd, row["wav"])
digit_pairs = [((takes[key], takes[(key[0], key[1], key[2] + 1)]), key[1]) for key in sorted(takes)
               if key[2] % 2 == 0 and (key[0], key[1], key[2] + 1) in takes]
digits_intents = os.path.join(work, "digits.json")
with open(digits_intents, "w") as out:
    json.dump({"domain": "digits", "description": "One spoken digit.", "intents": [{
        "name": "sayDigit", "description": "A digit.",
        "parameters": [{"name": "digit", "type": "enumeration", "cases": [{"value": w} for w in
                        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]]}],
        "templates": ["{digit}"], "responses": {"success": "{digit}."}}]}, out)

# Barista: orders of one cluster with the same intent and slots, two at a time.
barista = os.path.join(args.corpora, "picovoice_barista")
same = collections.defaultdict(list)
for row in sorted(manifest(barista), key=lambda row: row["wav"]):
    same[(row["speaker"], json.dumps(json.loads(row["intent_slots_json"]), sort_keys=True))].append(os.path.join(barista, row["wav"]))
order_pairs = [((paths[i], paths[i + 1]), json.loads(label)) for (_, label), paths in sorted(same.items())
               for i in range(0, len(paths) - 1, 2)]

def digit_right(text, label):
    return words(text) == [label]

def order_right(text, label):
    heard = " ".join(words(text))
    return all(" ".join(words(value)) in heard for value in label.get("slots", {}).values())

noise = samples_16k(os.path.join(barista, "noise", "kitchen.wav"))

def streams(name, pairs):
    """Writes the stream at each SNR; returns their paths by SNR and each pair's two (start, end)
    spans in seconds."""
    samples, spans, peaks = [0] * int(RATE * 1.0), [], []
    for (first, second), _ in pairs:
        spans.append([])
        for path, after in ((first, args.gap), (second, BETWEEN)):
            audio = samples_16k(path)
            peaks.append(peak_energy(audio))
            start = len(samples) / RATE
            samples += audio
            spans[-1].append((start, len(samples) / RATE))
            samples += [0] * int(RATE * after)
    paths = {}
    for snr in args.snr.split(","):
        paths[snr] = os.path.join(work, f"{name}-{snr}.wav")
        write_16k(paths[snr], samples if snr == "clean" else with_noise(samples, statistics.median(peaks), noise, float(snr)))
    return paths, spans

def listen(path, intents, window):
    run = subprocess.run([args.heed, "listen", "--input", path, "--dry-run", "--json", "--intents", intents,
                          "--repeat-window", str(window)], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"heed listen failed: {run.stderr}")
    return [json.loads(line) for line in run.stdout.splitlines()]

for name, pairs, intents, right in (("fsdd-digits", digit_pairs, digits_intents, digit_right),
                                     ("barista-orders", order_pairs, "intents/examples/coffee.json", order_right)):
    paths, spans = streams(name, pairs)
    for (snr, path), window in [(item, float(w)) for item in paths.items() for w in args.windows.split(",")]:
        events = listen(path, intents, window)
        # Each accepted final, placed in the saying its speech ended in (or just after).
        accepted = collections.defaultdict(list)
        for event in events:
            if event["event"] != "final" or event["rejected"]:
                continue
            for index, pair in enumerate(spans):
                for take, (start, end) in enumerate(pair):
                    if start < event["time"] <= end + 1.0:
                        accepted[(index, take)].append(event)
        first = second = by_repeat = wrong = 0
        for index, (_, label) in enumerate(pairs):
            ok = [any(right(e["text"], label) for e in accepted[(index, take)]) for take in (0, 1)]
            wrong += sum(1 for take in (0, 1) for e in accepted[(index, take)] if not right(e["text"], label))
            first += ok[0]
            second += ok[0] or ok[1]
            by_repeat += (not ok[0]) and any(right(e["text"], label) and e.get("repeated") for e in accepted[(index, 1)])
        print(json.dumps({"corpus": name, "snr": snr, "repeatWindow": window, "pairs": len(pairs), "actedOnFirst": first,
                          "actedOnBySecond": second, "bySecondThroughRepeat": by_repeat, "wrongAccepted": wrong,
                          "repeatedFinals": sum(1 for e in events if e.get("repeated"))}))
