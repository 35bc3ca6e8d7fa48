#!/usr/bin/env python3
"""Adaptation across recording set-ups and in kitchen noise, on the Picovoice barista orders.

usage: scripts/barista-adaptation.py [HEED_BINARY] [CORPORA_DIR] [--jobs N]
(defaults: .build/release/heed, $HEED_CORPORA or ../shared/corpora). Needs sphinxtrain.

The orders are split by recording cluster as in scripts/rejection-sets.py (the clusters of
the train split adapt, the others test: other voices, microphones and rooms). The corpus has
no transcripts, so the adaptation is lightly supervised: the train orders Heed hears right
(clean, coffee intents, any confidence) are adapted on with the words it heard. The last row
needs no labels at all: the train orders joined into one recording with quiet between them are
heard by `heed listen --keep-heard` (always-on), and `heed adapt --heard` adapts on what it kept. The
benchmark's kitchen noise is cut in two halves: the first is what adaptation may hear
(`--room-noise`), the second is mixed into the test orders (`heed eval --noise`), so no
stretch of noise is both adapted on and tested on. Prints, for each adaptation, intent
accuracy counting a rejection as not understood (at the always-on point) and ignoring
rejection, clean and at 12 and 6 dB.
"""
import argparse
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("rejection_sets", os.path.join(HERE, "rejection-sets.py"))
rejection_sets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rejection_sets)

INTENTS = os.path.join(HERE, "..", "intents", "examples", "coffee.json")
CONDITIONS = [("clean", None), ("12 dB", 12), ("6 dB", 6)]


def halves(noise, folder):
    """The noise recording's first and second halves as WAV files."""
    with wave.open(noise) as source:
        params, frames = source.getparams(), source.readframes(source.getnframes())
    middle = len(frames) // 2 // params.sampwidth * params.sampwidth
    paths = []
    for name, data in (("first", frames[:middle]), ("second", frames[middle:])):
        path = os.path.join(folder, f"kitchen-{name}-half.wav")
        with wave.open(path, "wb") as out:
            out.setparams(params)
            out.writeframes(data)
        paths.append(path)
    return paths


def joined(paths, path, gap=1.5):
    """The recordings one after another, each followed by `gap` seconds of faint noise."""
    import random
    generator = random.Random(7)
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        for source_path in paths:
            with wave.open(source_path) as source:
                out.writeframes(source.readframes(source.getnframes()))
            quiet = [generator.randint(-20, 20) for _ in range(int(gap * 16000))]
            out.writeframes(b"".join(sample.to_bytes(2, "little", signed=True) for sample in quiet))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("heed", nargs="?", default=".build/release/heed")
    parser.add_argument("corpora", nargs="?", default=os.environ.get("HEED_CORPORA", "../shared/corpora"))
    parser.add_argument("--jobs", default="2")
    args = parser.parse_args()
    heed = os.path.abspath(args.heed)
    corpus = os.path.abspath(os.path.join(args.corpora, "picovoice_barista"))
    if not os.path.isfile(os.path.join(corpus, "manifest.tsv")):
        sys.exit(f"no barista corpus in {corpus}")

    with tempfile.TemporaryDirectory() as work:
        environment = dict(os.environ, XDG_DATA_HOME=os.path.join(work, "data"))

        def heed_run(*arguments):
            run = subprocess.run([heed, *arguments], env=environment, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"heed {' '.join(arguments)} failed: {run.stderr.strip()}")
            return run.stdout

        rows = list(csv.DictReader(open(os.path.join(corpus, "manifest.tsv")), delimiter="\t"))
        manifests = {}
        for split in ("train", "test"):
            manifests[split] = os.path.join(work, f"{split}.tsv")
            with open(manifests[split], "w") as out:
                out.write("wav\ttranscript\tintent_slots_json\tspeaker\n")
                for row in rows:
                    if rejection_sets.split_of(row["speaker"]) == split:
                        out.write(f"{os.path.join(corpus, row['wav'])}\t\t{row['intent_slots_json']}\t{row['speaker']}\n")
        first, second = halves(os.path.join(corpus, "noise", "kitchen.wav"), work)

        heard = json.loads(heed_run("eval", "--json", "--reject-below", "0", "--jobs", args.jobs, "--intents", INTENTS,
                                    "--no-adaptation", manifests["train"]))["results"]
        adaptation_set = os.path.join(work, "adapt.tsv")
        with open(adaptation_set, "w") as out:
            out.write("wav\ttranscript\n")
            right = [result for result in heard if result.get("right")]
            for result in right:
                out.write(f"{result['file']}\t{result['text']}\n")
        test_count = sum(1 for row in rows if rejection_sets.split_of(row["speaker"]) == "test")
        print(f"adapted on {len(right)} of {len(heard)} train orders (heard right, with the words heard); "
              f"tested on {test_count} orders of other clusters\n")

        adaptations = [
            ("none (the model as shipped)", None),
            ("the orders alone (`--without-noisy-copies`)", ["--without-noisy-copies"]),
            ("the orders and copies with pink noise (default)", []),
            ("the orders and copies with the room's noise (`--room-noise`, first half)", ["--room-noise", first]),
            ("what `heed listen --keep-heard` kept of the train orders (`heed adapt --heard`, pink copies)", "heard"),
        ]
        train_paths = [os.path.join(corpus, row["wav"]) for row in rows if rejection_sets.split_of(row["speaker"]) == "train"]
        listened = os.path.join(work, "train-orders.wav")
        joined(train_paths, listened)
        print("| adapted on | " + " | ".join(name for name, _ in CONDITIONS) + " |")
        print("|---|" + "---|" * len(CONDITIONS))
        for name, flags in adaptations:
            if flags is None:
                heed_run("adapt", "--reset")
            elif flags == "heard":
                heed_run("adapt", "--reset")
                heed_run("adapt", "--forget-heard")
                events = heed_run("listen", "--input", listened, "--intents", INTENTS, "--keep-heard", "--dry-run", "--json")
                intents = sum(1 for line in events.splitlines() if '"event":"intent"' in line)
                heed_run("adapt", "--heard")
                name += f" ({intents} kept)"
            else:
                heed_run("adapt", adaptation_set, *flags)
            cells = []
            for _, snr in CONDITIONS:
                noise = ["--noise", second, "--snr", str(snr)] if snr is not None else []
                report = json.loads(heed_run("eval", "--json", "--jobs", args.jobs, "--intents", INTENTS, *noise, manifests["test"]))
                cells.append(f"{report['intentAccuracy'] * 100:.1f}% ({report['intentAccuracyIgnoringRejection'] * 100:.1f}%)")
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
