#!/usr/bin/env bash
# Runs Heed's fuzz targets (Tests/HeedTests/FuzzTests.swift) for longer than CI does.
#
#   scripts/fuzz.sh [CASES [SEED]]     default: 20000 cases a target, seed from the clock
#
# Every input must end in a value or a clear error. When the test process dies (a trap, a signal),
# the input it was on is copied into Tests/Fixtures/fuzz-corpus/TARGET/ so that every later run
# (CI included) replays it; fix the bug, then commit the file. A hang shows as no progress: the
# script stops the run after HEED_FUZZ_TIMEOUT seconds (default 3600) and keeps the input too.
set -uo pipefail
cd "$(dirname "$0")/.."
cases=${1:-20000}
seed=${2:-$(date +%s)}
last=$(mktemp -d)/last
echo "fuzzing: $cases cases a target (plugin replies: $((cases / 6)), intent files: $((cases / 3))), seed $seed"
swift build --build-tests >/dev/null || exit 2
HEED_FUZZ_CASES=$cases HEED_FUZZ_SEED=$seed HEED_FUZZ_LAST=$last \
  timeout "${HEED_FUZZ_TIMEOUT:-3600}" swift test --skip-build --filter FuzzTests 2>&1 | grep -a -E '^fuzz |✘|Test run'
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  for input in "$last"-*; do
    [ -e "$input" ] || continue
    target=${input##*-}
    mkdir -p "Tests/Fixtures/fuzz-corpus/$target"
    kept="Tests/Fixtures/fuzz-corpus/$target/seed-$seed"
    cp "$input" "$kept"
    echo "the last $target input is kept as $kept (the failing one is the last target's)"
  done
  exit 1
fi
