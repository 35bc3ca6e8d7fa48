#!/usr/bin/env python3
"""Speaks test sentences of the shipped intents with two synthesizers and measures what Heed hears.

usage: scripts/synthetic-intent-eval.py HEED_BINARY OUT_DIR [PER_INTENT] [-- HEED_EVAL_FLAGS...]

Takes the first PER_INTENT (default 3) sentences of every intent from intents/tests/*.json,
speaks each with espeak-ng (voices en-us, en-us+f2, en-gb) and flite (voices slt, awb, kal16),
and runs `heed eval --intents intents` over them, one manifest per engine. Then it checks the
recognized sentences with `heed grammar test`: a sentence counts as understood when the words
heard parse to the intent and values of its test. Prints, per engine: sentence accuracy,
intent accuracy (understood), and the share understood among results accepted at 0.87 and 0.2.

Synthetic speech is reported apart from real speech and is never evidence of accuracy alone.
Deterministic: the same tests give the same sentences and audio.
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import speak  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = {"espeak-ng": ["en-us", "en-us+f2", "en-gb"], "flite": ["slt", "awb", "kal16"]}


def sentences(per_intent):
    chosen = []
    folder = os.path.join(REPO, "intents", "tests")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(folder, name)) as handle:
            tests = json.load(handle)["tests"]
        count = {}
        for test in tests:
            if test["intent"] is None:
                continue
            for sentence in test["sentences"]:
                if count.get(test["intent"], 0) >= per_intent:
                    break
                if any(char.isdigit() for char in sentence):
                    continue
                count[test["intent"]] = count.get(test["intent"], 0) + 1
                chosen.append((sentence, test["intent"], test.get("parameters", {})))
    return chosen


def main():
    args = sys.argv[1:]
    flags = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    heed, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    per_intent = int(args[2]) if len(args) == 3 else 3
    os.makedirs(os.path.join(out, "audio"), exist_ok=True)
    chosen = sentences(per_intent)
    print(f"{len(chosen)} sentences", file=sys.stderr)
    for engine, voices in ENGINES.items():
        manifest = os.path.join(out, f"{engine}.tsv")
        rows = []
        for voice in voices:
            for index, (text, intent, parameters) in enumerate(chosen):
                wav = os.path.join(out, "audio", f"{engine}-{voice.replace('+', '-')}-{index:03d}.wav")
                if not os.path.exists(wav):
                    speak(engine, voice, text, wav)
                rows.append((wav, text, intent, parameters, voice))
        with open(manifest, "w", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\", lineterminator="\n")
            writer.writerow(["wav", "transcript", "intent_slots_json", "speaker"])
            for wav, text, _, _, voice in rows:
                writer.writerow([wav, text, "", f"{engine} {voice}"])
        done = subprocess.run([heed, "eval", "--json", "--reject-below", "0", "--intents", "intents", *flags, manifest],
                              cwd=REPO, capture_output=True, text=True)
        report = json.loads(done.stdout)
        heard = {item["file"]: item for item in report["results"]}
        tests = [{"sentences": [heard[wav]["text"] or "(nothing)"], "intent": intent, **({"parameters": parameters} if parameters else {})}
                 for wav, _, intent, parameters, _ in rows]
        test_file = os.path.join(out, f"{engine}-heard.json")
        # One test a line: a failure's line number is its row (line 2 is the first).
        with open(test_file, "w") as handle:
            handle.write('{"tests": [\n' + ",\n".join(json.dumps(test) for test in tests) + "\n]}\n")
        checked = subprocess.run([heed, "grammar", "test", "--json", "--intents", "intents", "--tests", test_file],
                                 cwd=REPO, capture_output=True, text=True)
        wrong = {int(failure["location"].rsplit(":", 2)[-2]) - 2 for failure in json.loads(checked.stdout)["failures"]}
        understood = [index not in wrong for index in range(len(rows))]
        right = sum(1 for wav, text, *_ in rows if heard[wav]["text"] == text)
        total = len(rows)
        ok = sum(understood)
        print(f"{engine} ({', '.join(voices)}): {total} utterances; sentences right {right} ({100 * right / total:.1f}%), "
              f"understood {ok} ({100 * ok / total:.1f}%)")
        for threshold in (0.87, 0.2):
            accepted = [u for (wav, *_), u in zip(rows, understood) if heard[wav]["text"] and heard[wav]["confidence"] >= threshold]
            print(f"  accepted at {threshold}: {len(accepted)} ({100 * len(accepted) / total:.1f}%), of them understood {sum(accepted)}")


if __name__ == "__main__":
    main()
