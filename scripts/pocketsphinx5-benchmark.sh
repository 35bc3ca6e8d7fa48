#!/usr/bin/env bash
# Heed and PocketSphinx 5's own decoder side by side, on the same recordings, grammar and model,
# in one run, so that every speed claim is a ratio measured at the same moment on the same machine.
#
#   scripts/pocketsphinx5-benchmark.sh MANIFEST.tsv GRAMMAR.gram [HEED]
#
# MANIFEST is a corpus manifest (wav and transcript columns, paths relative to it); GRAMMAR a
# JSGF file; HEED the heed executable (default .build/release/heed). PocketSphinx 5 comes from
# PyPI into a venv (HEED_PS5_VENV, default ~/.cache/heed/ps5-venv), and uses Debian's en-us
# model and dictionary as Heed does. Both decode one recording at a time on one core
# (heed eval --jobs 1); the real-time factor is decoding CPU time over audio time, the wait
# the time from a whole recording given to its result over audio time (Heed's phone loop
# runs beside its grammar pass on the second core when there is one: the same CPU, less wait).
#
# ROUNDS=N (default 1) runs the three decodes in turn N times and prints each figure's median,
# the ratios taken within each round, with their range: on a shared machine one round's ratio
# can be off by a third.
set -euo pipefail
# scripts/benchmarks.py: what the benchmarks share.
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
manifest=${1:?usage: scripts/pocketsphinx5-benchmark.sh MANIFEST.tsv GRAMMAR.gram [HEED]}
grammar=${2:?usage: scripts/pocketsphinx5-benchmark.sh MANIFEST.tsv GRAMMAR.gram [HEED]}
heed=${3:-.build/release/heed}
rounds=${ROUNDS:-1}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number from 1, not $rounds" >&2; exit 2; }
venv=${HEED_PS5_VENV:-$HOME/.cache/heed/ps5-venv}
model=/usr/share/pocketsphinx/model/en-us
[ -x "$heed" ] || { echo "no heed executable at $heed (swift build -c release)" >&2; exit 2; }
if [ ! -x "$venv/bin/python" ]; then
  echo "installing PocketSphinx 5 from PyPI into $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install -q pocketsphinx >&2
fi

heed_line() {  # options… → "accuracy rtf wait"
  "$heed" eval "$manifest" -g "$grammar" --jobs 1 --json "$@" |
    python3 -c 'import json,sys; text=sys.stdin.read(); r=json.loads(text) if text.strip() else sys.exit(1); print(r["sentenceAccuracy"], r["rtf"], sum(x["latencyMs"] for x in r["results"]) / 1000 / r["audioSeconds"])'
}
ps5_line() {  # → "accuracy rtf wait"
  "$venv/bin/python" - "$manifest" "$grammar" "$model" <<'PY'
import csv, os, sys
from benchmarks import decode_timed, read_mono16k
from pocketsphinx import Config, Decoder
manifest, grammar, model = sys.argv[1:4]
config = Config(hmm=f"{model}/en-us", dict=f"{model}/cmudict-en-us.dict", jsgf=grammar, loglevel="FATAL")
decoder = Decoder(config)
root = os.path.dirname(os.path.abspath(manifest))
right = total = 0
cpu = audio = wall = 0.0
with open(manifest, newline="") as file:
    for row in csv.DictReader(file, delimiter="\t"):
        recording = read_mono16k(os.path.join(root, row["wav"]))
        if recording is None:
            continue
        hypothesis, seconds_cpu, seconds = decode_timed(decoder, recording[0], wall=True)
        cpu += seconds_cpu
        wall += seconds
        audio += recording[1]
        total += 1
        right += hypothesis == row.get("transcript", "")
print(right / total, cpu / audio, wall / audio)
PY
}

# One line a decoder a round: "round decoder accuracy rtf wait".
results=$(for round in $(seq "$rounds"); do
  echo "$round ps5 $(ps5_line)"
  echo "$round heed $(heed_line)"
  echo "$round loop $(heed_line --no-phone-loop)"
done)
python3 - "$rounds" <<PY
import statistics, sys
rounds = int(sys.argv[1])
rows = {}
for line in """$results""".split("\n"):
    fields = line.split()
    if len(fields) != 5:
        sys.exit(f"{fields[1]} gave no figures in round {fields[0]} (its error is above)")
    round_, decoder, accuracy, rtf, wait = fields
    rows.setdefault(decoder, {})[int(round_)] = (float(accuracy), float(rtf), float(wait))
def figure(values):
    middle = statistics.median(values)
    return f"{middle:.2f}" if rounds == 1 else f"{middle:.2f} ({min(values):.2f}–{max(values):.2f})"
print(f"{'decoder':34} {'accuracy':>9} {'RTF':>8} {'RTF ratio':>18} {'wait':>8} {'wait ratio':>18}")
for decoder, label in (("ps5", "PocketSphinx 5 (grammar only)"), ("heed", "heed (alignment + phone loop)"), ("loop", "heed --no-phone-loop")):
    runs = [rows[decoder][r] for r in sorted(rows[decoder])]
    base = [rows["ps5"][r] for r in sorted(rows[decoder])]
    accuracy = statistics.median(run[0] for run in runs)
    rtf = statistics.median(run[1] for run in runs)
    wait = statistics.median(run[2] for run in runs)
    rtf_ratio = figure([run[1] / ps5[1] for run, ps5 in zip(runs, base)])
    wait_ratio = figure([run[2] / ps5[2] for run, ps5 in zip(runs, base)])
    print(f"{label:34} {accuracy:9.3f} {rtf:8.4f} {rtf_ratio:>18} {wait:8.4f} {wait_ratio:>18}")
PY
