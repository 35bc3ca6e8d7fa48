#!/usr/bin/env bash
# Intent accuracy of the coffee example on the Picovoice barista corpus, clean and with
# the benchmark's kitchen noise mixed in at falling SNRs. Prints a Markdown table.
# usage: scripts/noise-curve.sh HEED_BINARY CORPORA_DIR [SNR ...]
set -euo pipefail
heed=$1 corpora=$2; shift 2
snrs=("$@"); [ ${#snrs[@]} -gt 0 ] || snrs=(24 18 12 6)
manifest=$corpora/picovoice_barista/manifest.tsv
noise=$corpora/picovoice_barista/noise/kitchen.wav
row() {
  python3 -c 'import json,sys; r=json.load(sys.stdin); print("| %s | %.1f%% | %.1f%% | %.4f |" % (sys.argv[1], r["intentAccuracy"]*100, r["intentAccuracyIgnoringRejection"]*100, r["rtf"]))' "$1"
}
echo "| condition | intent accuracy | ignoring rejection | RTF |"
echo "|---|---|---|---|"
"$heed" eval --json --intents intents/examples/coffee.json "$manifest" | row clean
for snr in "${snrs[@]}"; do
  "$heed" eval --json --intents intents/examples/coffee.json --noise "$noise" --snr "$snr" "$manifest" | row "kitchen noise, $snr dB"
done
