#!/usr/bin/env python3
"""Fits Heed's confidence model: P(result right | acoustic margin per frame).

Runs `heed eval --json` over pairs of (manifest, grammar) that give right results,
wrong results and out-of-grammar speech, then fits a one-feature logistic regression
by Newton's method (no dependencies). Prints the slope and intercept for
ConfidenceModel.default and a table of acceptance vs. false accepts by threshold.

usage: scripts/calibrate-confidence.py HEED_BINARY CORPORA_DIR [EXTRA_MANIFEST:GRAMMAR ...]
Set HEED_FLAGS=--no-phone-loop to fit the model for decoding without the phone loop.
"""
import os
import json
import math
import subprocess
import sys

heed, corpora = sys.argv[1], sys.argv[2]
T = "/usr/share/pocketsphinx/test/data"
pairs = [
    (f"{corpora}/speech_commands_v001_sample/manifest.tsv", "grammars/speech-commands-core.gram"),
    (f"{corpora}/speech_commands_v001_sample/manifest.tsv", "grammars/commands.gram"),
    (f"{corpora}/fsdd_digits/manifest.tsv", "grammars/digits.gram"),
    (f"{corpora}/fsdd_digits/manifest.tsv", "grammars/commands.gram"),
    (f"{corpora}/speech_to_phrase_en/manifest.tsv", "grammars/commands.gram"),
    (f"{corpora}/speech_to_phrase_en/manifest.tsv", "grammars/digits.gram"),
] + [tuple(arg.split(":", 1)) for arg in sys.argv[3:]]

samples = []  # (margin, right, in_grammar)
for manifest, grammar in pairs:
    report = json.loads(subprocess.run([heed, "eval", "--json", *os.environ.get("HEED_FLAGS", "").split(), "-g", grammar, manifest],
                                       check=True, capture_output=True, text=True).stdout)
    for item in report["results"]:
        if item.get("expected") is None or item["text"] == "":
            continue  # no label, or nothing heard (rejected outright)
        samples.append((item["acousticMargin"], item["text"] == item["expected"], item["inGrammar"]))
    print(f"{manifest} with {grammar}: {len(report['results'])} results", file=sys.stderr)

# Logistic regression p = 1 / (1 + exp(-(a*x + b))) by Newton's method.
a, b = 0.0, 0.0
for _ in range(50):
    ga = gb = haa = hab = hbb = 0.0
    for x, y, _ in samples:
        p = 1 / (1 + math.exp(-(a * x + b)))
        ga += (y - p) * x; gb += (y - p)
        w = p * (1 - p)
        haa += w * x * x; hab += w * x; hbb += w
    det = haa * hbb - hab * hab
    a += (hbb * ga - hab * gb) / det
    b += (haa * gb - hab * ga) / det
print(f"slope {a:.6f} intercept {b:.6f} on {len(samples)} results "
      f"({sum(1 for s in samples if s[1])} right, {sum(1 for s in samples if not s[1])} wrong or out of grammar)")

print("threshold  accepted-right  accepted-wrong  accepted-out-of-grammar")
right = [s for s in samples if s[1]]
wrong = [s for s in samples if not s[1] and s[2]]
oog = [s for s in samples if s[2] is False]
for t in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
    def acc(group):
        n = sum(1 for x, _, _ in group if 1 / (1 + math.exp(-(a * x + b))) >= t)
        return f"{n}/{len(group)}"
    print(f"{t:9.1f}  {acc(right):>14}  {acc(wrong):>14}  {acc(oog):>23}")
