#!/usr/bin/env bash
# Recognition of commands that use registered names, before and after registration.
# espeak-ng speaks each command in several voices; `heed eval --intents` scores the
# intent and its slots (ignoring rejection: synthetic speech scores low confidence).
# Some names are not in the pronunciation dictionary: their phones are guessed.
# usage: scripts/vocabulary-benchmark.sh HEED_BINARY
set -euo pipefail
heed=$1
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "work: $work" >&2
voices=(en-us en-gb en-gb-x-rp en-029)
# sentence|intent|slots JSON
commands=(
  'put on playlist morning jazz|playMedia|{"playlist": "Morning Jazz"}'
  'put on playlist zydeco nights|playMedia|{"playlist": "Zydeco Nights"}'
  'put on playlist road trip classics|playMedia|{"playlist": "Road Trip Classics"}'
  'start a tabata workout|startWorkout|{"workoutName": "Tabata"}'
  'start a zumba workout|startWorkout|{"workoutName": "Zumba"}'
  'start a pilates workout|startWorkout|{"workoutName": "Pilates"}'
  'add zyrtec to my pharmacy list|addToList|{"item": "Zyrtec", "list": "pharmacy"}'
  'add kombucha to my groceries list|addToList|{"item": "kombucha", "list": "groceries"}'
  'add quinoa to my groceries list|addToList|{"item": "quinoa", "list": "groceries"}'
)
manifest=$work/manifest.tsv
printf 'wav\ttranscript\tintent_slots_json\tspeaker\n' > "$manifest"
n=0
for voice in "${voices[@]}"; do
  for command in "${commands[@]}"; do
    IFS='|' read -r sentence intent slots <<< "$command"
    espeak-ng -v "$voice" -w "$work/$n.wav" "$sentence"
    printf '%s.wav\t%s\t{"intent": "%s", "slots": %s}\t%s\n' "$n" "$sentence" "$intent" "$slots" "$voice" >> "$manifest"
    n=$((n + 1))
  done
done
report() {
  python3 -c 'import json,sys; r=json.load(sys.stdin); print("| %s | %d | %.1f%% | %.1f%% |" % (sys.argv[1], r["utterances"], (r["intentAccuracyIgnoringRejection"] or 0)*100, (r["intentAccuracy"] or 0)*100))' "$1"
}
echo "| vocabulary | recordings | intent + slots right (ignoring rejection) | with rejection |"
echo "|---|---|---|---|"
data=$work/data
mkdir -p "$data"
"$heed" eval --json --intents intents --data-dir "$data" "$manifest" | report "none registered"
"$heed" vocab set --data-dir "$data" --app org.heed.media --type playlistTitle "Morning Jazz" "Zydeco Nights" "Road Trip Classics" > /dev/null
"$heed" vocab set --data-dir "$data" --app org.heed.workout --type workoutName Tabata Zumba Pilates > /dev/null
"$heed" vocab set --data-dir "$data" --app org.heed.notes --type listItem Zyrtec kombucha quinoa > /dev/null
"$heed" vocab set --data-dir "$data" --app org.heed.notes --type listName pharmacy groceries > /dev/null
"$heed" eval --json --intents intents --data-dir "$data" "$manifest" | report "registered"
