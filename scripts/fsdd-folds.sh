# Sourced by the FSDD adaptation benchmarks (scripts/adaptation-benchmark.sh,
# scripts/self-adaptation-benchmark.sh); needs $heed (the binary) and $fsdd (the corpus folder).

# manifest SPEAKER PART: a manifest of SPEAKER's rows whose repetition (the file name's last
# number) is below 5 (PART "low") or not ("high"): one fold's training or test half.
manifest() {
    local speaker=$1 part=$2
    printf 'wav\ttranscript\n'
    awk -F'\t' -v dir="$fsdd" -v speaker="$speaker" -v part="$part" 'NR > 1 && $4 == speaker {
        n = split($1, pieces, "_"); rep = pieces[n]; sub(/\.wav$/, "", rep)
        if ((rep < 5) == (part == "low")) print dir "/" $1 "\t" $2 }' "$fsdd/manifest.tsv"
}

# accuracy MANIFEST [FLAGS...]: "RIGHT COUNT" of MANIFEST's recordings through the one-digit grammar.
accuracy() {
    "$heed" eval "$1" -g grammars/digit.gram --reject-below 0 --jobs 2 --json "${@:2}" 2>/dev/null |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["results"]; print(sum(x["right"] for x in r), len(r))'
}
