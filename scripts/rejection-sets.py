#!/usr/bin/env python3
"""Builds the positive and negative sets for calibrating out-of-grammar rejection.

usage: scripts/rejection-sets.py OUT_DIR [CORPORA_DIR]

CORPORA_DIR defaults to $HEED_CORPORA, then ../shared/corpora. Writes into OUT_DIR (a
cache folder; nothing here is committed):

  sets.tsv          one row per evaluation: name, manifest, the grammar options for
                    `heed eval`, what the set is for, real or synthetic speech
  <set>.tsv         `heed eval` manifests (wav, transcript, intent_slots_json, speaker,
                    expect, split); wav paths are absolute
  audio/            the generated audio: long runs (sox), espeak-ng and flite commands

Each row's role: `expect` = `reject` makes it a negative; otherwise a row with a
transcript is a positive when the listening grammar can produce the transcript and a
negative when it cannot (heed eval decides), and a row with an intent label is a positive.
`split` is `train` or `test`, by speaker (speech commands), recording cluster
(barista), file (FSDD: only three speakers; librivox; speech-to-phrase), or voice (synthetic
speech), from a hash or a fixed list, so that it never changes:
fit on train, report on test. Runs built from several recordings inherit their split
when all come from one split, and are `test` otherwise.

Everything is deterministic: the same corpora give byte-identical manifests and audio.
"""
import csv
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import speak  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
INTENTS = "--intents intents"
BARISTA = "--intents intents/examples/coffee.json"
SPEECH_COMMANDS = "-g grammars/speech-commands.gram"
DIGIT = "-g grammars/digit.gram"
DIGIT_WORDS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "oh"}
COLUMNS = ["wav", "transcript", "intent_slots_json", "speaker", "expect", "split"]

# Commands of every shipped domain, spoken by espeak-ng (synthetic speech).
SYNTHETIC_COMMANDS = [
    "set a timer for ten minutes", "cancel the timer", "how much time is left",
    "pause the music", "next track", "set the volume to forty", "start a run workout",
    "end the workout", "pause the workout", "add milk to my shopping list", "stop", "resume",
]
SYNTHETIC_VOICES = ["en-us", "en-gb", "en-us+f3"]
# The intents' own test sentences (intents/tests), spoken by two engines for fitting: voices,
# not people, so the split is by voice. The intents that listen with nothing going on only.
SPOKEN_TESTS_PER_INTENT = 6
SPOKEN_TEST_VOICES = [
    ("espeak-ng", "en-us", "train"), ("espeak-ng", "en-us+f3", "train"), ("flite", "slt", "train"), ("flite", "awb", "train"),
    ("espeak-ng", "en-gb", "test"), ("espeak-ng", "en-gb-scotland", "test"), ("flite", "kal16", "test"), ("flite", "rms", "test"),
]


def split_of(key):
    """`train` or `test` from a stable hash of a speaker, cluster or file name."""
    return "train" if hashlib.sha1(key.encode()).digest()[0] % 2 == 0 else "test"


def read_manifest(corpus):
    with open(os.path.join(corpus, "manifest.tsv"), newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:
        row["wav"] = os.path.join(corpus, row["wav"])
    return rows


def row(wav, transcript="", labels="", speaker="", expect="", split="test"):
    return {"wav": wav, "transcript": transcript, "intent_slots_json": labels, "speaker": speaker, "expect": expect, "split": split}


def write(out, name, rows):
    path = os.path.join(out, name + ".tsv")
    with open(path, "w") as handle:
        # Plain tab-separated fields: heed reads no CSV quoting, and the JSON labels hold quotes.
        handle.write("\t".join(COLUMNS) + "\n")
        for item in rows:
            handle.write("\t".join(item.get(column, "") for column in COLUMNS) + "\n")
    return path


def concatenate(out, name, wavs):
    """One file of `wavs` in order with 0.3 s of silence between them."""
    target = os.path.join(out, "audio", name + ".wav")
    if not os.path.exists(target):
        gap = os.path.join(out, "audio", "gap.wav")
        if not os.path.exists(gap):
            # -R: without it sox dithers, with a fresh seed each run, even the silence it makes.
            subprocess.run(["sox", "-R", "-n", "-r", "16000", "-c", "1", "-b", "16", gap, "trim", "0", "0.3"], check=True)
        parts = [part for wav in wavs for part in (wav, gap)][:-1]
        subprocess.run(["sox", "-R", *parts, target], check=True)
    return target


def runs(out, prefix, rows, size, transcript=True):
    """Long runs: consecutive groups of `size` rows, each concatenated into one recording."""
    result = []
    for start in range(0, len(rows) - size + 1, size):
        group = rows[start:start + size]
        splits = {item["split"] for item in group}
        text = " ".join(item["transcript"] for item in group) if transcript else ""
        wav = concatenate(out, f"{prefix}-{start // size:03d}", [item["wav"] for item in group])
        result.append(row(wav, text, speaker="run", expect="reject", split=splits.pop() if len(splits) == 1 else "test"))
    return result


def test_sentences():
    """Up to SPOKEN_TESTS_PER_INTENT sentences of each intent that is not contextual, from
    intents/tests, without digits (they would be read out as such) and without the titles a test
    file registers (the sets' grammar has no registered vocabulary)."""
    contextual = set()
    for name in sorted(os.listdir(os.path.join(REPO, "intents"))):
        if name.endswith(".json"):
            with open(os.path.join(REPO, "intents", name)) as handle:
                contextual |= {i["name"] for i in json.load(handle)["intents"] if i.get("contextual")}
    chosen = []
    folder = os.path.join(REPO, "intents", "tests")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as handle:
            file = json.load(handle)
        registered = {title.lower() for titles in file.get("vocabulary", {}).values() for title in titles}
        count = {}
        for test in file["tests"]:
            intent = test["intent"]
            if intent is None or intent in contextual:
                continue
            if any(str(value).lower() in registered for value in test.get("parameters", {}).values()):
                continue
            for sentence in test["sentences"]:
                if count.get(intent, 0) < SPOKEN_TESTS_PER_INTENT and not any(c.isdigit() for c in sentence):
                    count[intent] = count.get(intent, 0) + 1
                    chosen.append(sentence)
    return chosen


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    corpora = sys.argv[2] if len(sys.argv) == 3 else os.environ.get("HEED_CORPORA", os.path.join(REPO, "..", "shared", "corpora"))
    corpora = os.path.abspath(corpora)
    for needed in [corpora + "/README.md", LIBRIVOX + "/transcription"]:
        if not os.path.exists(needed):
            sys.exit(f"missing {needed} (the shared corpora; pocketsphinx-testdata)")
    os.makedirs(os.path.join(out, "audio"), exist_ok=True)

    barista = [row(r["wav"], "", r["intent_slots_json"], r["speaker"], split=split_of(r["speaker"]))
               for r in read_manifest(corpora + "/picovoice_barista")]
    commands = [row(r["wav"], r["transcript"], r["intent_slots_json"], r["speaker"], split=split_of(r["speaker"]))
                for r in read_manifest(corpora + "/speech_commands_v001_sample")]
    # FSDD has three speakers here, too few to split by: split by file.
    digits = [row(r["wav"], r["transcript"], r["intent_slots_json"], r["speaker"], split=split_of(os.path.basename(r["wav"])))
              for r in read_manifest(corpora + "/fsdd_digits")]
    phrases = [row(r["wav"], r["transcript"], r["intent_slots_json"], r["speaker"],
                   expect="" if r["transcript"] else "reject", split=split_of(os.path.basename(r["wav"])))
               for r in read_manifest(corpora + "/speech_to_phrase_en")]
    misc = [row(r["wav"], r["transcript"], r["intent_slots_json"], r["speaker"],
                expect="" if r["transcript"] else "reject", split="test")
            for r in read_manifest(corpora + "/misc_samples")]
    librivox = []
    with open(LIBRIVOX + "/transcription") as handle:
        for line in handle:
            words = line.split()
            name = words[-1].strip("()")
            librivox.append(row(f"{LIBRIVOX}/{name}.wav", " ".join(w for w in words[:-1] if w not in ("<s>", "</s>")),
                                speaker="librivox", expect="reject", split=split_of(name)))

    # Long runs of non-command speech reaching the recognizer as one utterance.
    barista_runs = []
    for split in ("train", "test"):
        barista_runs += runs(out, f"barista-run-{split}", [r for r in barista if r["split"] == split], 4, transcript=False)
    command_runs = []
    for split in ("train", "test"):
        command_runs += runs(out, f"commands-run-{split}", [r for r in commands if r["split"] == split], 6)
    librivox_runs = []
    for turn in range(len(librivox)):
        order = librivox[turn:] + librivox[:turn]
        librivox_runs += runs(out, f"librivox-run-{turn}", order, len(order))
    spoken = [r for r in phrases if r["transcript"]]
    phrase_runs = []
    for turn in range(0, len(spoken), 4):
        phrase_runs += runs(out, f"phrases-run-{turn // 4}", spoken[turn:] + spoken[:turn], 8)

    synthetic = []
    for voice in SYNTHETIC_VOICES:
        for index, text in enumerate(SYNTHETIC_COMMANDS):
            wav = os.path.join(out, "audio", f"espeak-{voice.replace('+', '-')}-{index:02d}.wav")
            if not os.path.exists(wav):
                speak("espeak-ng", voice, text, wav)
            synthetic.append(row(wav, text, speaker=f"espeak-ng {voice}", split="test"))

    spoken_tests = []
    sentences = test_sentences()
    for engine, voice, split in SPOKEN_TEST_VOICES:
        for index, text in enumerate(sentences):
            wav = os.path.join(out, "audio", f"{engine}-{voice.replace('+', '-')}-test-{index:03d}.wav")
            if not os.path.exists(wav):
                speak(engine, voice, text, wav)
            spoken_tests.append(row(wav, text, speaker=f"{engine} {voice}", split=split))

    as_negative = lambda rows: [dict(r, expect="reject") for r in rows]
    # Other talk through the one-word grammars: sentences, orders, commands of other grammars, runs.
    talk = as_negative(librivox + librivox_runs + barista + barista_runs + phrases + phrase_runs)
    other_words = as_negative([r for r in commands if r["transcript"] not in DIGIT_WORDS])
    sets = [
        # name, rows, grammar, purpose, speech
        ("barista-orders", barista, BARISTA, "positives: coffee orders, their own grammar", "real"),
        ("speech-commands", commands, SPEECH_COMMANDS, "positives: single words, the 30-word grammar", "real"),
        ("speech-to-phrase-intents", phrases, INTENTS, "mixed: in-domain commands positive, others and OOV clips negative", "real"),
        ("synthetic-commands", synthetic, INTENTS, "positives: commands of every shipped domain", "synthetic (espeak-ng)"),
        ("synthetic-tests", spoken_tests, INTENTS, "positives: the intents' test sentences, split by voice", "synthetic (espeak-ng, flite)"),
        ("librivox-intents", librivox, INTENTS, "negatives: read sentences", "real"),
        ("librivox-barista", librivox, BARISTA, "negatives: read sentences", "real"),
        ("barista-orders-intents", as_negative(barista), INTENTS, "negatives: coffee orders, not a shipped command", "real"),
        ("speech-commands-intents", commands, INTENTS, "mixed: words the intents accept are positive, others negative", "real"),
        ("speech-commands-barista", as_negative(commands), BARISTA, "negatives: single words", "real"),
        ("digits-intents", as_negative(digits), INTENTS, "negatives: isolated digits, none a command", "real"),
        ("digits-barista", as_negative(digits), BARISTA, "negatives: isolated digits", "real"),
        ("speech-to-phrase-barista", as_negative(phrases), BARISTA, "negatives: home-assistant commands, OOV clips", "real"),
        ("misc-intents", misc, INTENTS, "mixed: connected digits, wake word + lamp command, Rhino clips", "real"),
        ("barista-runs-intents", barista_runs, INTENTS, "negatives: runs of 4 coffee orders", "real"),
        ("commands-runs-intents", command_runs, INTENTS, "negatives: runs of 6 single words", "real"),
        ("commands-runs-barista", command_runs, BARISTA, "negatives: runs of 6 single words", "real"),
        ("librivox-runs-intents", librivox_runs, INTENTS, "negatives: all 5 sentences in a row, 5 rotations", "real"),
        ("librivox-runs-barista", librivox_runs, BARISTA, "negatives: all 5 sentences in a row, 5 rotations", "real"),
        ("phrases-runs-intents", phrase_runs, INTENTS, "negatives: runs of 8 home-assistant commands", "real"),
        ("phrases-runs-barista", phrase_runs, BARISTA, "negatives: runs of 8 home-assistant commands", "real"),
        ("digits", digits, DIGIT, "positives: isolated digits (8 kHz), the one-digit grammar", "real"),
        ("talk-speech-commands", talk, SPEECH_COMMANDS, "negatives: sentences, orders, home-assistant commands, runs", "real"),
        ("talk-digits", talk + other_words, DIGIT, "negatives: sentences, orders, commands, runs, other single words", "real"),
    ]
    with open(os.path.join(out, "sets.tsv"), "w") as index:
        index.write("name\tmanifest\tgrammar\tpurpose\tspeech\trows\n")
        for name, rows, grammar, purpose, speech in sets:
            path = write(out, name, rows)
            index.write(f"{name}\t{path}\t{grammar}\t{purpose}\t{speech}\t{len(rows)}\n")
            print(f"{name:28} {len(rows):4} rows  {grammar:40} {purpose} ({speech})")
    print(f"wrote {out}/sets.tsv")


if __name__ == "__main__":
    main()
