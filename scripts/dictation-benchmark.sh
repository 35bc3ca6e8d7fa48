#!/usr/bin/env bash
# Dictation word error rate, real-time factor and memory on Debian's LibriVox test sentences
# (pocketsphinx-testdata), for Heed and two peers with the same acoustic and language model:
# PocketSphinx 5 from PyPI (its defaults) and Debian's pocketsphinx_continuous.
#
#   scripts/dictation-benchmark.sh [HEED]
#
# HEED is the heed executable (default .build/release/heed). PocketSphinx 5 is installed from
# PyPI into a venv (HEED_PS5_VENV, default ~/.cache/heed/ps5-venv). Word errors are counted on
# the words as spoken (Heed's `text`, before formatting), against the sentences' transcription,
# by edit distance; "mr" for "mister" is an error, as for the peers. RTF is decoding CPU time
# over audio time (Heed: the recognizer's own decodeSeconds, which include its confidence passes).
# Peak RSS is the whole process's (/usr/bin/time), model and language model loading included.
set -euo pipefail
# scripts/benchmarks.py: what the benchmarks share.
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
heed=${1:-.build/release/heed}
venv=${HEED_PS5_VENV:-$HOME/.cache/heed/ps5-venv}
data=/usr/share/pocketsphinx/test/data/librivox
model=/usr/share/pocketsphinx/model/en-us
[ -x "$heed" ] || { echo "no heed executable at $heed (swift build -c release)" >&2; exit 2; }
[ -f "$data/transcription" ] || { echo "needs pocketsphinx-testdata ($data)" >&2; exit 2; }
if [ ! -x "$venv/bin/python" ]; then
  echo "installing PocketSphinx 5 from PyPI into $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install -q pocketsphinx >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=$(for id in $(cat "$data/fileids"); do echo "$data/$id.wav"; done)

# Heed: one process for the five files, as `heed transcribe --dictation` runs.
/usr/bin/time -f %M -o "$work/heed.rss" "$heed" transcribe --dictation --json $files > "$work/heed.json"
python3 - "$work/heed.json" > "$work/heed.hyp" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["text"], r["decodeSeconds"], r["durationSeconds"], sep="\t")
PY

# PocketSphinx 5 (PyPI), defaults, the same model, dictionary and language model.
/usr/bin/time -f %M -o "$work/ps5.rss" "$venv/bin/python" - "$model" $files > "$work/ps5.hyp" <<'PY'
import sys
from benchmarks import decode_timed, read_mono16k
from pocketsphinx import Config, Decoder
model = sys.argv[1]
config = Config(hmm=f"{model}/en-us", dict=f"{model}/cmudict-en-us.dict", lm=f"{model}/en-us.lm.bin", loglevel="FATAL")
decoder = Decoder(config)
for path in sys.argv[2:]:
    samples, seconds = read_mono16k(path)
    hypothesis, cpu = decode_timed(decoder, samples)
    print(hypothesis, cpu, seconds, sep="\t")
PY

# Debian's command line decoder, as packaged (its CPU time is the whole process's, model load included).
: > "$work/debian.hyp"
for f in $files; do
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$work/debian.rss" pocketsphinx_continuous -infile "$f" -hmm "$model/en-us" \
    -dict "$model/cmudict-en-us.dict" -lm "$model/en-us.lm.bin" -logfn /dev/null > "$work/one.txt"
  end=$(date +%s.%N)
  seconds=$(python3 -c "import wave,sys; w=wave.open(sys.argv[1]); print(w.getnframes()/16000)" "$f")
  printf '%s\t%s\t%s\n' "$(tr '\n' ' ' < "$work/one.txt" | sed 's/ *$//')" "$(python3 -c "print($end - $start)")" "$seconds" >> "$work/debian.hyp"
done

python3 - "$work" <<'PY'
import os, sys
from benchmarks import librivox_references, word_errors
refs = list(librivox_references().values())
work = sys.argv[1]
print(f"{'decoder':44} {'WER':>12} {'RTF':>6} {'peak RSS':>9}")
for name, label in [("heed", "Heed transcribe --dictation"), ("ps5", "PocketSphinx 5 (PyPI), defaults"),
                    ("debian", "Debian pocketsphinx_continuous (wall, with load)")]:
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(work, name + ".hyp"))]
    errors = sum(word_errors(ref, row[0].split()) for ref, row in zip(refs, rows))
    words = sum(len(ref) for ref in refs)
    rtf = sum(float(r[1]) for r in rows) / sum(float(r[2]) for r in rows)
    rss = int(open(os.path.join(work, name + ".rss")).read().split()[-1]) // 1024
    print(f"{label:44} {errors:>3}/{words} {errors / words:.3f} {rtf:6.3f} {rss:>6} MB")
    for ref, row in zip(refs, rows):
        print(f"    {row[0]}")
PY
