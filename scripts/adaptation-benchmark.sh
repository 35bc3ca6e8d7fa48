#!/usr/bin/env bash
# Adaptation per speaker on FSDD digits: adapt on half of a speaker's recordings, test on the
# other half, then the other way round (two folds), with each method; prints sentence accuracy
# with and without the adaptation, per speaker and in the mean. Then adaptation to a noisy room:
# the barista benchmark's kitchen noise mixed in at $SNR dB (default 12), MAP adaptation on two
# speakers' noisy recordings, tested on the third speaker's (who was never heard), each in turn;
# and the speaker's own voice in that room: the folds of the first part with the noise in both
# halves, adapted on the noisy half or on the same recordings clean.
#
# usage: scripts/adaptation-benchmark.sh [HEED_BINARY] [CORPORA_DIR]
# (defaults: .build/release/heed, $HEED_CORPORA or ../shared/corpora). Needs sphinxtrain.
set -euo pipefail
cd "$(dirname "$0")/.."
heed=${1:-.build/release/heed}
corpora=${2:-${HEED_CORPORA:-../shared/corpora}}
fsdd=$(cd "$corpora/fsdd_digits" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data

# manifest SPEAKER PART and accuracy MANIFEST [FLAGS...].
source scripts/fsdd-folds.sh

printf '%-10s %-6s %-5s %8s %8s\n' speaker method fold before after
for method in map mllr; do
    total_before=0; total_after=0; total=0
    for speaker in $(awk -F'\t' 'NR > 1 { print $4 }' "$fsdd/manifest.tsv" | sort -u); do
        for fold in low high; do
            other=$([ $fold = low ] && echo high || echo low)
            manifest "$speaker" $fold > "$work/train.tsv"
            manifest "$speaker" $other > "$work/test.tsv"
            "$heed" adapt "$work/train.tsv" --method $method > /dev/null 2>&1
            read -r before count < <(accuracy "$work/test.tsv" --no-adaptation)
            read -r after _ < <(accuracy "$work/test.tsv")
            printf '%-10s %-6s %-5s %5d/%-3d %4d/%-3d\n' "$speaker" $method $fold "$before" "$count" "$after" "$count"
            total_before=$((total_before + before)); total_after=$((total_after + after)); total=$((total + count))
        done
    done
    python3 -c "print(f'{\"mean\":<10} {\"$method\":<6} {\"both\":<5} {$total_before/$total:8.3f} {$total_after/$total:8.3f}')"
    "$heed" adapt --reset > /dev/null
done

snr=${SNR:-12}
noise=$(cd "$corpora/picovoice_barista/noise" && pwd)/kitchen.wav
echo
printf '%-10s %-22s %8s %8s\n' tested "noise" before after
total_before=0; total_after=0; total=0
speakers=($(awk -F'\t' 'NR > 1 { print $4 }' "$fsdd/manifest.tsv" | sort -u))
for tested in "${speakers[@]}"; do
    printf 'wav\ttranscript\n' > "$work/train.tsv"
    for speaker in "${speakers[@]}"; do
        [ "$speaker" = "$tested" ] && continue
        for part in low high; do manifest "$speaker" $part | tail -n +2 >> "$work/train.tsv"; done
    done
    { manifest "$tested" low; manifest "$tested" high | tail -n +2; } > "$work/test.tsv"
    "$heed" adapt "$work/train.tsv" --noise "$noise" --snr "$snr" > /dev/null 2>&1
    read -r before count < <(accuracy "$work/test.tsv" --noise "$noise" --snr "$snr" --no-adaptation)
    read -r after _ < <(accuracy "$work/test.tsv" --noise "$noise" --snr "$snr")
    printf '%-10s %-22s %5d/%-3d %4d/%-3d\n' "$tested" "kitchen, $snr dB" "$before" "$count" "$after" "$count"
    total_before=$((total_before + before)); total_after=$((total_after + after)); total=$((total + count))
done
python3 -c "print(f'{\"mean\":<10} {\"kitchen, $snr dB\":<22} {$total_before/$total:8.3f} {$total_after/$total:8.3f}')"
"$heed" adapt --reset > /dev/null

echo
printf '%-10s %-5s %-22s %8s %12s %12s\n' speaker fold "noise" before "noisy adapt" "clean adapt"
total_before=0; total_noisy=0; total_clean=0; total=0
for speaker in "${speakers[@]}"; do
    for fold in low high; do
        other=$([ $fold = low ] && echo high || echo low)
        manifest "$speaker" $fold > "$work/train.tsv"
        manifest "$speaker" $other > "$work/test.tsv"
        "$heed" adapt "$work/train.tsv" --noise "$noise" --snr "$snr" > /dev/null 2>&1
        read -r before count < <(accuracy "$work/test.tsv" --noise "$noise" --snr "$snr" --no-adaptation)
        read -r noisy _ < <(accuracy "$work/test.tsv" --noise "$noise" --snr "$snr")
        "$heed" adapt "$work/train.tsv" > /dev/null 2>&1
        read -r clean _ < <(accuracy "$work/test.tsv" --noise "$noise" --snr "$snr")
        printf '%-10s %-5s %-22s %5d/%-3d %9d/%-3d %9d/%-3d\n' "$speaker" $fold "kitchen, $snr dB" "$before" "$count" "$noisy" "$count" "$clean" "$count"
        total_before=$((total_before + before)); total_noisy=$((total_noisy + noisy)); total_clean=$((total_clean + clean)); total=$((total + count))
    done
done
python3 -c "print(f'{\"mean\":<10} {\"both\":<5} {\"kitchen, $snr dB\":<22} {$total_before/$total:8.3f} {$total_noisy/$total:12.3f} {$total_clean/$total:12.3f}')"
"$heed" adapt --reset > /dev/null
