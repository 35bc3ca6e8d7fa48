#!/usr/bin/env python3
"""Large vocabularies: registered playlist titles by the thousand, decoded in real time?

usage: scripts/large-vocabulary-benchmark.py HEED [CORPORA] [--terms 999,10000,50000]
                                             [--commands 72] [--seed 99] [--work DIR]

Makes titles of two or three random words of the pronunciation dictionary (seeded), registers
each count with `heed vocab import` in a fresh data folder, and runs `heed eval --jobs 1` with
the shipped intents (the listener's grammar with nothing going on) on:
  - synthetic commands naming titles that are registered ("play playlist …", "put on the …
    playlist", "i want to listen to the … playlist", "shuffle my playlist …"), spoken by espeak-ng
    and flite voices, reported apart per engine;
  - real recordings of other commands (speech-to-phrase in CORPORA, when given): a large slot
    must not take them.
It prints, per count: sentences right, RTF, the recognizer's load time, peak RSS of the eval,
and the time a running `heed listen` takes to rebuild its grammar when the titles are imported
(its `vocabulary` event). Run it with another binary to compare builds side by side.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import speak, work_folder

DICTIONARY = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMS = ["play playlist {}", "put on the {} playlist", "i want to listen to the {} playlist", "shuffle my playlist {}"]
VOICES = [("espeak-ng", "en-us"), ("flite", "slt"), ("espeak-ng", "en-gb"), ("flite", "awb"),
          ("flite", "kal16"), ("espeak-ng", "en-us+m3"), ("flite", "rms"), ("espeak-ng", "en-us+f2")]
REAL = ["pause", "next", "set_a_timer_for_5_minutes", "cancel_all_timers", "timer_status",
        "set_a_timer_for_3_hours_and_10_minutes", "resume"]


def titles(count, seed):
    words = []
    with open(DICTIONARY) as handle:
        for line in handle:
            word = line.split(" ", 1)[0]
            if re.fullmatch(r"[a-z]{3,}", word):
                words.append(word)
    rng = random.Random(seed)
    chosen = set()
    while len(chosen) < count:
        chosen.add(" ".join(rng.choice(words) for _ in range(rng.choice([2, 3]))))
    result = sorted(chosen)
    rng.shuffle(result)
    return result


def write_manifest(path, rows):
    with open(path, "w") as handle:
        handle.write("wav\ttranscript\tintent_slots_json\tspeaker\n")
        for row in rows:
            handle.write("\t".join(row) + "\n")


def evaluate(heed, manifest, data):
    command = ["/usr/bin/time", "-f", "%M", heed, "eval", "--json", "--jobs", "1", "--intents",
               os.path.join(REPO, "intents"), "--without-contextual", "--data-dir", data, manifest]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    report = json.loads(run.stdout)
    rss = int(run.stderr.strip().splitlines()[-1]) / 1024
    return report, rss


def rebuild_milliseconds(heed, titles_file, work):
    data = tempfile.mkdtemp(dir=work)
    silence = os.path.join(work, "silence.wav")
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", silence, "synth", "12", "whitenoise", "vol", "0.001"],
                   check=True, stderr=subprocess.DEVNULL)
    listener = subprocess.Popen([heed, "listen", "--json", "--dry-run", "--data-dir", data, "--input", silence, "--real-time"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(3)
    subprocess.run([heed, "vocab", "import", "--data-dir", data, "--app", "org.heed.media", "--type", "playlistTitle", titles_file],
                   check=True, capture_output=True)
    output, _ = listener.communicate(timeout=60)
    for line in output.splitlines():
        event = json.loads(line)
        if event.get("event") == "vocabulary":
            return event["milliseconds"]["rebuild"]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("heed")
    parser.add_argument("corpora", nargs="?")
    parser.add_argument("--terms", default="999,10000,50000")
    parser.add_argument("--commands", type=int, default=72)
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--work")
    args = parser.parse_args()
    counts = [int(value) for value in args.terms.split(",")]
    work = args.work or work_folder("heed-large-vocabulary-")
    os.makedirs(work, exist_ok=True)
    print(f"work: {work}", file=sys.stderr)
    # The same titles whatever counts are asked for, so that runs with other counts (or another
    # binary that takes fewer terms) name the same titles.
    every = titles(max(counts + [50_000]), args.seed)
    named = random.Random(args.seed + 1).sample(every[:min(counts)], min(args.commands, min(counts)))
    rows = {"espeak-ng": [], "flite": []}
    for index, title in enumerate(named):
        engine, voice = VOICES[index % len(VOICES)]
        text = FORMS[index % len(FORMS)].format(title)
        path = os.path.join(work, f"command{index}.wav")
        if not os.path.exists(path):
            speak(engine, voice, text, path)
        rows[engine].append((path, text, "{}", f"{engine}-{voice}"))
    manifests = {}
    for engine, engine_rows in rows.items():
        manifests[engine] = os.path.join(work, f"{engine}.tsv")
        write_manifest(manifests[engine], engine_rows)
    if args.corpora:
        folder = os.path.join(os.path.abspath(args.corpora), "speech_to_phrase_en")
        with open(os.path.join(folder, "manifest.tsv")) as handle:
            lines = [line.rstrip("\n").split("\t") for line in handle][1:]
        real = [(os.path.join(folder, line[0]), line[1], "{}", "speech-to-phrase") for line in lines
                if os.path.basename(line[0])[:-4] in REAL]
        manifests["real"] = os.path.join(work, "real.tsv")
        write_manifest(manifests["real"], real)

    print("| titles | set | sentences right | RTF | recognizer load | peak RSS (eval) | listener rebuild |")
    print("|---|---|---|---|---|---|---|")
    for count in [0] + counts:
        data = os.path.join(work, f"data{count}")
        titles_file = os.path.join(work, f"titles{count}.txt")
        with open(titles_file, "w") as handle:
            # The named titles first, so every count holds them.
            ordered = named + [title for title in every if title not in set(named)]
            handle.write("\n".join(ordered[:count]) + "\n")
        if not os.path.exists(data):
            os.makedirs(data)
            if count:
                subprocess.run([args.heed, "vocab", "import", "--data-dir", data, "--app", "org.heed.media", "--type",
                                "playlistTitle", titles_file], check=True, capture_output=True)
        rebuild = rebuild_milliseconds(args.heed, titles_file, work) if count else None
        for name, manifest in manifests.items():
            if count == 0 and name != "real":
                continue
            report, rss = evaluate(args.heed, manifest, data)
            results = report["results"]
            right = sum(1 for result in results if result.get("text") == result.get("expected"))
            rebuild_text = f"{rebuild / 1000:.2f} s" if rebuild else "—"
            print(f"| {count} | {name} | {right}/{len(results)} | {report['rtf']:.3f} | {report['loadSeconds']:.2f} s | "
                  f"{rss:.0f} MB | {rebuild_text} |", flush=True)


if __name__ == "__main__":
    main()
