#!/usr/bin/env bash
# Decoder settings sweep: accuracy and real-time factor of `heed eval` per setting,
# on the command-grammar corpora. Prints a Markdown table.
# usage: scripts/decoder-sweep.sh HEED_BINARY CORPORA_DIR
set -euo pipefail
heed=$1 corpora=$2
cards=$(mktemp --suffix=.tsv)
trap 'rm -f "$cards"' EXIT
data=/usr/share/pocketsphinx/test/data
{
  printf 'wav\ttranscript\tintent_slots_json\tspeaker\n'
  for n in 1 2 3 4 5; do
    printf '%s/cards/00%d.wav\t%s\t\t\n' "$data" "$n" "$(sed -n "${n}p" "$data/cards/cards.transcription" | sed 's/<s> //; s/ *<\/s>.*//')"
  done
} > "$cards"
run() {  # manifest grammar options... → "accuracy rtf"
  local manifest=$1 grammar=$2; shift 2
  "$heed" eval --json -g "$grammar" "$@" "$manifest" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.1f%% %.4f" % (r["sentenceAccuracy"]*100, r["rtf"]))'
}
echo "| setting | speech commands (30 words) accuracy | RTF | cards accuracy | RTF |"
echo "|---|---|---|---|---|"
for setting in "" "--no-phone-loop" "--no-phone-loop ds=2" "ds=2" "topn=2" "topn=3" "beam=1e-40" "pbeam=1e-40" "beam=1e-30 pbeam=1e-30" "wbeam=1e-20" "maxhmmpf=3000" "fwdflat=no bestpath=no" "remove_noise=no"; do
  options=()
  for flag in $setting; do
    case $flag in --*) options+=("$flag") ;; *) options+=(--decoder-option "$flag") ;; esac
  done
  read -r sc_acc sc_rtf < <(run "$corpora/speech_commands_v001_sample/manifest.tsv" grammars/speech-commands.gram ${options[@]+"${options[@]}"})
  read -r c_acc c_rtf < <(run "$cards" "$data/cards/cards.gram" ${options[@]+"${options[@]}"})
  echo "| ${setting:-defaults} | $sc_acc | $sc_rtf | $c_acc | $c_rtf |"
done
