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
set -euo pipefail
# scripts/benchmarks.py: what the benchmarks share.
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
manifest=${1:?usage: scripts/pocketsphinx5-benchmark.sh MANIFEST.tsv GRAMMAR.gram [HEED]}
grammar=${2:?usage: scripts/pocketsphinx5-benchmark.sh MANIFEST.tsv GRAMMAR.gram [HEED]}
heed=${3:-.build/release/heed}
venv=${HEED_PS5_VENV:-$HOME/.cache/heed/ps5-venv}
model=/usr/share/pocketsphinx/model/en-us
[ -x "$heed" ] || { echo "no heed executable at $heed (swift build -c release)" >&2; exit 2; }
if [ ! -x "$venv/bin/python" ]; then
  echo "installing PocketSphinx 5 from PyPI into $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install -q pocketsphinx >&2
fi

heed_line() {  # options… → "accuracy rtf wait"
  "$heed" eval "$manifest" -g "$grammar" --jobs 1 --json "$@" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sentenceAccuracy"], r["rtf"], sum(x["latencyMs"] for x in r["results"]) / 1000 / r["audioSeconds"])'
}
read -r heed_accuracy heed_rtf heed_wait < <(heed_line)
read -r loop_accuracy loop_rtf loop_wait < <(heed_line --no-phone-loop)

read -r ps5_accuracy ps5_rtf ps5_wait < <("$venv/bin/python" - "$manifest" "$grammar" "$model" <<'PY'
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
)

printf '%-34s %9s %8s %10s %8s %10s\n' "decoder" "accuracy" "RTF" "RTF ratio" "wait" "wait ratio"
row() {  # label accuracy rtf wait
  printf '%-34s %9.3f %8.4f %10.2f %8.4f %10.2f\n' "$1" "$2" "$3" "$(python3 -c "print($3/$ps5_rtf)")" "$4" "$(python3 -c "print($4/$ps5_wait)")"
}
row "PocketSphinx 5 (grammar only)" "$ps5_accuracy" "$ps5_rtf" "$ps5_wait"
row "heed (alignment + phone loop)" "$heed_accuracy" "$heed_rtf" "$heed_wait"
row "heed --no-phone-loop" "$loop_accuracy" "$loop_rtf" "$loop_wait"
