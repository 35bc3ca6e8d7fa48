#!/usr/bin/env python3
"""The listener's grammar rebuild with many registered terms, side by side.

For each run and each HEED binary in turn, a running `heed listen --json --dry-run --real-time`
(on silence) is given new vocabulary, two ways:

  import  the titles are imported into an empty store while the listener runs;
  add     the titles were registered before the listener started, and one title is added.

It prints the `vocabulary` event's stages (milliseconds): `store` (the snapshot), `automaton`
(word automaton, grammar check, parser), `recognizer` (loading the grammar), `rebuild` (their sum).
Wall times swing on a shared machine: compare binaries run in turn, never across days.

Example:
  python3 scripts/rebuild-benchmark.py --titles titles.txt --runs 5 \\
      .build/release/heed-before .build/release/heed
(titles.txt: one title a line, e.g. the titles10000.txt that
scripts/large-vocabulary-benchmark.py writes to its work folder.)
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import wave

APP, TYPE = "org.heed.media", "playlistTitle"


def silence(path, seconds):
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(b"\0\0" * 16000 * seconds)


def rebuild(heed, work, titles, scenario, run):
    data = tempfile.mkdtemp(dir=work)
    vocab = [heed, "vocab"]
    if scenario == "add":
        subprocess.run(vocab + ["import", "--data-dir", data, "--app", APP, "--type", TYPE, titles], check=True, capture_output=True)
    listener = subprocess.Popen(
        [heed, "listen", "--json", "--dry-run", "--data-dir", data, "--input", os.path.join(work, "silence.wav"), "--real-time"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # Past the listener's start (the grammar with what was registered before).
    time.sleep(4)
    if scenario == "add":
        subprocess.run(vocab + ["add", "--data-dir", data, "--app", APP, "--type", TYPE, f"zanzibar marmalade {run}"], check=True, capture_output=True)
    else:
        subprocess.run(vocab + ["import", "--data-dir", data, "--app", APP, "--type", TYPE, titles], check=True, capture_output=True)
    out, _ = listener.communicate(timeout=120)
    for line in out.splitlines():
        event = json.loads(line)
        if event.get("event") == "vocabulary":
            if "reason" in event:
                raise SystemExit(f"{heed}: the new grammar was refused: {event['reason']}")
            return event["milliseconds"]
    raise SystemExit(f"{heed}: no vocabulary event (is the silence too short for the titles?)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("heed", nargs="+", help="heed binaries, run in turn")
    parser.add_argument("--titles", required=True, help="a file of titles, one a line")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", choices=["import", "add", "both"], default="both")
    args = parser.parse_args()
    if not os.path.isfile(args.titles):
        raise SystemExit(f"{args.titles}: no such file")
    work = tempfile.mkdtemp(prefix="heed-rebuild-")
    silence(os.path.join(work, "silence.wav"), 14)
    scenarios = ["import", "add"] if args.scenario == "both" else [args.scenario]
    results = {(heed, scenario): [] for heed in args.heed for scenario in scenarios}
    for run in range(args.runs):
        for scenario in scenarios:
            for heed in args.heed:
                stages = rebuild(os.path.realpath(heed), work, os.path.realpath(args.titles), scenario, run)
                results[(heed, scenario)].append(stages)
                print(f"run {run + 1} {scenario:6} {heed}: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(stages.items()) if k != "listened"), flush=True)
    print()
    print("| binary | scenario | rebuild min–max (median), ms | store | automaton | recognizer |")
    print("|---|---|---|---|---|---|")
    for (heed, scenario), runs in results.items():
        def span(key):
            values = [r.get(key, 0) for r in runs]
            return f"{min(values):.0f}–{max(values):.0f}"
        total = [r["rebuild"] for r in runs]
        print(f"| {heed} | {scenario} | {min(total):.0f}–{max(total):.0f} ({statistics.median(total):.0f}) | {span('store')} | {span('automaton')} | {span('recognizer')} |")


if __name__ == "__main__":
    main()
