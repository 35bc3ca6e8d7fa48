#!/usr/bin/env bash
# The wake phrase: how often it is heard when said (espeak-ng voices, alone and followed by
# a command), and how often it fires on other speech (false wakes per hour).
# usage: scripts/wake-benchmark.sh HEED_BINARY CORPORA_DIR [THRESHOLD...]
set -euo pipefail
heed=$(realpath "$1")
corpora=$(realpath "$2")
shift 2
thresholds=("${@:-0.1}")
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "work: $work" >&2
sox -n -r 16000 -c 1 -b 16 "$work/gap.wav" synth 0.8 whitenoise vol 0.002
n=0
: > "$work/positives.txt"
for voice in en-us en-us+f2 en-gb en-us+m3 en-gb-x-rp en-029; do
  for phrase in "hey heed" "hey heed, pause the music" "hey heed set a timer for ten minutes"; do
    espeak-ng -v "$voice" -w "$work/p$n.espeak.wav" "$phrase"
    sox "$work/p$n.espeak.wav" -r 16000 -c 1 -b 16 "$work/p$n.16k.wav"
    sox "$work/gap.wav" "$work/p$n.16k.wav" "$work/gap.wav" "$work/p$n.wav"
    echo "$work/p$n.wav" >> "$work/positives.txt"
    n=$((n + 1))
  done
done
# Other speech: read sentences, single words, home-assistant commands and coffee orders.
{
  ls /usr/share/pocketsphinx/test/data/librivox/*.wav
  ls "$corpora"/speech_to_phrase_en/wav/*.wav
  ls "$corpora"/speech_commands_v001_sample/wav/*/*.wav
  barista=("$corpora"/picovoice_barista/wav/*.wav)
  printf '%s\n' "${barista[@]:0:100}"
} > "$work/negatives.txt"
for threshold in "${thresholds[@]}"; do
  heard=0
  while read -r file; do
    if "$heed" listen --input "$file" --activation wake --wake-threshold "$threshold" --dry-run --json 2> /dev/null | grep -q '"event":"wake"'; then
      heard=$((heard + 1))
    fi
  done < "$work/positives.txt"
  wakes=0
  seconds=0
  while read -r file; do
    if "$heed" listen --input "$file" --activation wake --wake-threshold "$threshold" --dry-run --json 2> /dev/null | grep -q '"event":"wake"'; then
      wakes=$((wakes + 1))
    fi
    seconds=$(python3 -c "print($seconds + $(soxi -D "$file"))")
  done < "$work/negatives.txt"
  python3 -c "import sys; h,p,w,s=int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[3]),float(sys.argv[4]); print(f'| {sys.argv[5]} | {h} of {p} ({100*h/p:.0f}%) | {w} in {s/3600:.2f} h ({w/(s/3600):.1f} per hour) |')" \
    "$heard" "$(wc -l < "$work/positives.txt")" "$wakes" "$seconds" "$threshold"
done
