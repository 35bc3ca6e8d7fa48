#!/usr/bin/env bash
# Adapting on what Heed heard (`heed listen --keep-heard`, then `heed adapt --heard`): per FSDD
# speaker and fold as in scripts/adaptation-benchmark.sh, Heed first hears the training half with
# the model as shipped (one-digit grammar); the recordings it heard with at least each confidence
# T are adapted on with the words it heard, right or not, as the listener keeps them; then the
# other half is tested, clean and with the barista benchmark's kitchen noise at 12 dB. Prints per
# fold and T: recordings kept, of them heard wrong, and digits right of 50 (NA: too little to
# adapt on), then the sums over the folds. Commands as the listener keeps them are tested by
# `swift test --filter HeardRecordings`; this measures the adaptation on them.
#
# usage: scripts/self-adaptation-benchmark.sh [HEED_BINARY] [CORPORA_DIR] [T ...]
# (defaults: .build/release/heed, $HEED_CORPORA or ../shared/corpora, T = 0.87 0.5 0.2 0).
# Needs sphinxtrain. The corpora may be a copy with silence added around each FSDD clip.
set -euo pipefail
cd "$(dirname "$0")/.."
heed=${1:-.build/release/heed}
corpora=${2:-${HEED_CORPORA:-../shared/corpora}}
shift $(( $# < 2 ? $# : 2 ))
thresholds=("${@:-0.87 0.5 0.2 0}")
read -r -a thresholds <<< "${thresholds[*]}"
fsdd=$(cd "$corpora/fsdd_digits" && pwd)
noise=$(cd "$corpora/picovoice_barista/noise" && pwd)/kitchen.wav
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data

# manifest SPEAKER PART and accuracy MANIFEST [FLAGS...].
source scripts/fsdd-folds.sh
right() { read -r right _ < <(accuracy "$@"); echo "$right"; }

printf '%-10s %-5s %5s %5s %6s %6s %6s\n' speaker fold T kept wrong clean 12dB
results=$work/results.txt
for speaker in $(awk -F'\t' 'NR > 1 { print $4 }' "$fsdd/manifest.tsv" | sort -u); do
    for fold in low high; do
        other=$([ $fold = low ] && echo high || echo low)
        manifest "$speaker" $fold > "$work/train.tsv"
        manifest "$speaker" $other > "$work/test.tsv"
        "$heed" adapt --reset > /dev/null
        "$heed" eval "$work/train.tsv" -g grammars/digit.gram --reject-below 0 --jobs 2 --json --no-adaptation 2>/dev/null > "$work/heard.json"
        for t in none "${thresholds[@]}"; do
            if [ "$t" = none ]; then
                kept=0; wrong=0
                clean=$(right "$work/test.tsv" --no-adaptation); noisy=$(right "$work/test.tsv" --no-adaptation --noise "$noise" --snr 12)
            else
                read -r kept wrong < <(python3 - "$work/heard.json" "$t" "$work/kept.tsv" <<'PY'
import json, sys
results, threshold = json.load(open(sys.argv[1]))["results"], float(sys.argv[2])
kept = [r for r in results if r["text"] and r["confidence"] >= threshold]
with open(sys.argv[3], "w") as out:
    out.write("wav\ttranscript\n")
    for r in kept:
        out.write(f'{r["file"]}\t{r["text"]}\n')
print(len(kept), sum(1 for r in kept if not r["right"]))
PY
)
                if "$heed" adapt "$work/kept.tsv" > /dev/null 2>&1; then
                    clean=$(right "$work/test.tsv"); noisy=$(right "$work/test.tsv" --noise "$noise" --snr 12)
                else
                    clean=NA; noisy=NA
                fi
            fi
            printf '%-10s %-5s %5s %5d %6d %6s %6s\n' "$speaker" $fold "$t" "$kept" "$wrong" "$clean" "$noisy" | tee -a "$results"
        done
    done
done
echo
python3 - "$results" <<'PY'
import collections, sys
sums = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
for line in open(sys.argv[1]):
    speaker, fold, t, kept, wrong, clean, noisy = line.split()
    s = sums[t]
    s[0] += int(kept); s[1] += int(wrong)
    if clean != "NA":
        s[2] += int(clean); s[3] += int(noisy); s[4] += 50
for t, (kept, wrong, clean, noisy, n) in sums.items():
    print(f"T {t:>5}: kept {kept}, {wrong} heard wrong; adapted folds' test recordings {n}: clean {clean} ({100 * clean / max(n, 1):.1f}%), 12 dB {noisy} ({100 * noisy / max(n, 1):.1f}%)")
PY
