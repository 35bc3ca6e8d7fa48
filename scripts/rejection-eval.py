#!/usr/bin/env python3
"""Runs `heed eval` over the rejection sets and prints the combined rejection curve.

usage: scripts/rejection-eval.py HEED_BINARY SETS_DIR [RESULTS_DIR] [-- HEED_EVAL_FLAGS...]

SETS_DIR is what scripts/rejection-sets.py wrote. Each set is decoded with its own
grammar (`heed eval --json --reject-below 0`, so every result keeps its confidence and
its parse) into RESULTS_DIR (default SETS_DIR/results); a set whose JSON is already
there is not decoded again (delete the folder to re-run). Then it prints, per set and
combined over real speech, by split (train, test, all):

  threshold → acceptance (positives heard right and accepted / positives),
              of right (the same over positives heard right: what rejection lost),
              accepted (positives accepted, right or not),
              false accepts on negatives (count, per hour of negative audio)

A result is accepted at threshold t when it has words and its confidence is at least t (or
at least the lower point it was held to, heard twice in noise: `inNoisePoint`), which is how
the recognizer rejects. Synthetic speech is reported on its own. A summary per kind of grammar (intents, each JSGF
grammar) gives the heard-right positives accepted and the false accepts at Heed's lenient (0.2)
and always-on (0.87) points, the threshold the grammar alone would get (the best train
acceptance at ≤ 1 false accept an hour) with its held-out result, and the decoding CPU over all
the sets' audio.
"""
import csv
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLDS = [round(0.05 * step, 2) for step in range(1, 20)]
FINE = [round(0.01 * step, 2) for step in range(1, 100)]
# Heed's operating points (docs/RECOGNITION.md): the lenient one and the always-on one.
POINTS = [0.2, 0.87]


def load_sets(sets_dir):
    with open(os.path.join(sets_dir, "sets.tsv")) as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def run_sets(heed, sets_dir, results_dir, flags):
    os.makedirs(results_dir, exist_ok=True)
    for entry in load_sets(sets_dir):
        target = os.path.join(results_dir, entry["name"] + ".json")
        if os.path.exists(target):
            continue
        command = [heed, "eval", "--json", "--reject-below", "0", *entry["grammar"].split(), *flags, entry["manifest"]]
        print("running", " ".join(command), file=sys.stderr)
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0 and not done.stdout.startswith("{"):
            sys.exit(f"{entry['name']}: heed eval failed: {done.stderr}")
        with open(target, "w") as handle:
            handle.write(done.stdout)


def outcomes(sets_dir, results_dir, keep=lambda entry: True):
    """Every result as a dict: set, speech, split, role, right, text, confidence, seconds, features;
    of the sets `keep` takes only."""
    result = []
    for entry in filter(keep, load_sets(sets_dir)):
        with open(entry["manifest"], newline="") as handle:
            rows = {row["wav"]: row for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}
        with open(os.path.join(results_dir, entry["name"] + ".json")) as handle:
            report = json.load(handle)
        for item in report["results"]:
            row = rows[item["file"]]
            role = item.get("role") or fallback_role(item, row)
            if role is None:
                continue
            right = item.get("right")
            if right is None:
                right = item["text"] == item["expected"] if item.get("expected") is not None else item.get("intentCorrect", True)
            result.append({
                "set": entry["name"], "speech": entry["speech"], "split": row["split"], "role": role, "right": bool(right),
                "text": item["text"], "confidence": item["confidence"], "inNoisePoint": item.get("inNoisePoint"),
                "seconds": item.get("durationSeconds", 0),
                "features": item.get("features") or {"meanMargin": item["acousticMargin"]}, "file": item["file"],
            })
    return result


def fallback_role(item, row):
    """The role of a result from a `heed eval` that predates the `expect` column."""
    if row.get("expect") in ("reject", "accept"):
        return "negative" if row["expect"] == "reject" else "positive"
    if item.get("expected") is not None:
        return "positive" if item["inGrammar"] else "negative"
    return "positive" if '"intent"' in row.get("intent_slots_json", "") else None


def durations(items):
    """Seconds of audio per file, from soxi, for results without durationSeconds."""
    missing = [item for item in items if not item["seconds"]]
    for item in missing:
        item["seconds"] = float(subprocess.run(["soxi", "-D", item["file"]], capture_output=True, text=True).stdout)


def confidence(item):
    return item["confidence"]


def curve(items, score=confidence, thresholds=THRESHOLDS):
    """Acceptance and false accepts at each threshold. Heed's own confidence is judged as Heed
    judges it: a result heard twice in noise at the lower of t and its `inNoisePoint`; another
    score (a refitted model's) at t."""
    positives = [item for item in items if item["role"] == "positive"]
    negatives = [item for item in items if item["role"] == "negative"]
    hours = sum(item["seconds"] for item in negatives) / 3600
    rows = []
    for t in thresholds:
        def accepted(item, t=t):
            point = item.get("inNoisePoint") if score is confidence else None
            return item["text"] != "" and score(item) >= (t if point is None else min(t, point))
        right = sum(1 for item in positives if accepted(item) and item["right"])
        any_ = sum(1 for item in positives if accepted(item))
        fa = sum(1 for item in negatives if accepted(item))
        rows.append((t, right, any_, len(positives), fa, len(negatives), hours, sum(1 for item in positives if item["right"])))
    return rows


def print_curve(title, rows):
    print(f"\n{title}")
    print("threshold  acceptance (right)  of right  accepted  false accepts  FA/hour")
    for t, right, any_, npos, fa, nneg, hours, ceiling in rows:
        acceptance = f"{right}/{npos} {100 * right / npos:5.1f}%" if npos else "n/a"
        of_right = f"{100 * right / ceiling:5.1f}%" if ceiling else "n/a"
        accepted = f"{100 * any_ / npos:5.1f}%" if npos else "n/a"
        per_hour = f"{fa / hours:7.1f}" if hours else "n/a"
        print(f"{t:9.2f}  {acceptance:>18}  {of_right:>8}  {accepted:>8}  {fa:>6}/{nneg:<6}  {per_hour}")


def grammar_group(entry):
    """Sets decoded with intents (the shipped ones or an example's) count together: the
    listener's kind of grammar. Each JSGF grammar counts on its own."""
    grammar = entry["grammar"]
    return "intents" if grammar.startswith("--intents") else grammar.split()[-1]


def best_threshold(items, score=confidence, limit=1.0):
    """The curve row (threshold first) of the threshold with the most acceptance at ≤ `limit`
    false accepts per hour in every condition (the lowest such threshold), or None."""
    conditions = sorted({item.get("condition") for item in items}, key=str)
    curves = [curve([i for i in items if i.get("condition") == c], score, FINE) for c in conditions]
    fitting = [rows for rows in zip(*curves) if all(row[6] and row[4] / row[6] <= limit for row in rows)]
    return max(fitting, key=lambda rows: (sum(row[1] for row in rows), -rows[0][0]))[0] if fitting else None


def own_threshold(items):
    """The threshold this grammar alone would get (``best_threshold`` on train), and what it
    does on train and held out."""
    split = {name: [item for item in items if item["split"] == name] for name in ("train", "test")}
    best = best_threshold(split["train"])
    if best is None:
        return "its own threshold: none holds ≤ 1 false accept an hour on train"
    t, right, _, _, fa, _, hours, heard = best
    _, test_right, _, _, test_fa, _, test_hours, test_heard = curve(split["test"], thresholds=[t])[0]
    per_hour = f"{test_fa / test_hours:.1f}/h" if test_hours else "n/a"
    return (f"its own threshold {t}: train {right}/{heard} heard right accepted, {fa} FA in {hours:.2f} h; "
            f"held out {test_right}/{test_heard}, {test_fa} FA in {test_hours:.2f} h ({per_hour})")


def print_grammars(sets_dir, results_dir, items):
    """Per kind of grammar, real speech, all splits: positives heard right, and at each
    operating point the heard-right positives accepted and the false accepts; then the
    decoding CPU over all the sets' audio, as `heed eval` measured it."""
    entries = load_sets(sets_dir)
    group_of = {entry["name"]: grammar_group(entry) for entry in entries}
    print("\nper grammar, real speech, all splits (heard right; at each point: accepted right, false accepts):")
    for group in dict.fromkeys(group_of.values()):
        part = [item for item in items if item["speech"] == "real" and group_of[item["set"]] == group]
        positives = [item for item in part if item["role"] == "positive"]
        hours = sum(item["seconds"] for item in part if item["role"] == "negative") / 3600
        points = "; ".join(f"{t}: {right} right, {fa} FA" for t, right, _, _, fa, _, _, _ in curve(part, thresholds=POINTS))
        heard = sum(1 for item in positives if item["right"])
        print(f"  {group:30} {heard}/{len(positives)} heard right, {hours:.2f} h negative; {points}")
        print(f"  {'':30} {own_threshold(part)}")
    cpu = audio = 0.0
    for entry in entries:
        with open(os.path.join(results_dir, entry["name"] + ".json")) as handle:
            report = json.load(handle)
        cpu += report["rtf"] * report["audioSeconds"]
        audio += report["audioSeconds"]
    if audio:
        print(f"decoding CPU over the sets' audio: {cpu / audio:.4f}")


def summary(items):
    positives = [item for item in items if item["role"] == "positive"]
    negatives = [item for item in items if item["role"] == "negative"]
    return f"{len(positives)} positives ({sum(1 for i in positives if i['right'])} heard right; {sum(i['seconds'] for i in positives) / 60:.1f} min), " \
           f"{len(negatives)} negatives ({sum(i['seconds'] for i in negatives) / 3600:.3f} h)"


def main():
    args = sys.argv[1:]
    flags = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    heed, sets_dir = os.path.abspath(args[0]), os.path.abspath(args[1])
    results_dir = os.path.abspath(args[2]) if len(args) == 3 else os.path.join(sets_dir, "results")
    run_sets(heed, sets_dir, results_dir, flags)
    items = outcomes(sets_dir, results_dir)
    durations(items)
    print("per set (all splits):")
    for entry in load_sets(sets_dir):
        mine = [item for item in items if item["set"] == entry["name"]]
        print(f"  {entry['name']:28} {summary(mine)}")
    print_grammars(sets_dir, results_dir, items)
    real = [item for item in items if item["speech"] == "real"]
    for split in ("train", "test"):
        part = [item for item in real if item["split"] == split]
        print_curve(f"real speech, {split} split: {summary(part)}", curve(part))
    print_curve(f"real speech, all: {summary(real)}", curve(real))
    synthetic = [item for item in items if item["speech"] != "real"]
    if synthetic:
        print_curve(f"synthetic speech: {summary(synthetic)}", curve(synthetic))


if __name__ == "__main__":
    main()
