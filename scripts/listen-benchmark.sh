#!/usr/bin/env bash
# The hands-free loop's numbers: end of speech → handle sent (p50/p95, beyond the silence
# window), CPU while idle-listening, peak RSS, and an hour of audio through ALSA's file
# plugin with memory sampled as it goes.
# usage: scripts/listen-benchmark.sh HEED_BINARY [HOUR_SECONDS]
# Run from the package root with a release build: swift build -c release --static-swift-stdlib
set -euo pipefail
heed=$(realpath "$1")
hour=${2:-3600}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "work: $work" >&2
state=$work/state; data=$work/data; config=$work/config.json
echo '{"spokenResponses": false}' > "$config"
for app in org.heed.timer org.heed.media org.heed.workout org.heed.notes; do
  "$heed" auth grant "$app" --state-dir "$state" --config "$config" > /dev/null
done
options=(--state-dir "$state" --data-dir "$data" --config "$config")

# 1. Commands handled without a question, in four espeak-ng voices, with quiet between.
# Pairs that reach the plugin's handle each time round (set, then cancel; start, then end).
commands=("set a timer for ten minutes" "cancel the timer" "start a run workout" "end the workout" "set a timer for five minutes" "cancel the timer")
voices=(en-us en-us+f2 en-gb en-us+m3)
sox -n -r 16000 -c 1 -b 16 "$work/gap.wav" synth 1.5 whitenoise vol 0.002
parts=("$work/gap.wav")
n=0
for voice in "${voices[@]}"; do
  for command in "${commands[@]}"; do
    espeak-ng -v "$voice" -w "$work/c$n.wav" "$command"
    sox "$work/c$n.wav" -r 16000 -c 1 -b 16 "$work/c16_$n.wav"
    parts+=("$work/c16_$n.wav" "$work/gap.wav")
    n=$((n + 1))
  done
done
sox "${parts[@]}" "$work/commands.wav"
echo "commands: $n utterances, $(soxi -D "$work/commands.wav") s, played in real time" >&2
# Latency does not depend on the threshold; synthetic voices score low confidence, so 0.3
# lets more of them through to the plugin (more samples).
/usr/bin/time -f "%U %S %e %M" -o "$work/commands.time" \
  "$heed" listen --input "$work/commands.wav" --real-time --json --reject-below 0.3 "${options[@]}" > "$work/commands.jsonl"
python3 - "$work/commands.jsonl" "$work/commands.time" <<'PY'
import json, sys, statistics
events = [json.loads(line) for line in open(sys.argv[1])]
latency = sorted(e["milliseconds"]["endOfSpeechToHandleSent"] for e in events if e["event"] == "latency")
after = sorted(e["milliseconds"]["afterEndOfSpeech"] for e in events if e["event"] == "final")
handled = sum(1 for e in events if e["event"] == "handle")
heard = sum(1 for e in events if e["event"] == "final")
accepted = sum(1 for e in events if e["event"] == "final" and not e["rejected"])
def pct(values, p): return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")
user, system, wall, rss = open(sys.argv[2]).read().split()[-4:]
print(f"| utterances / accepted / handle sent | {heard} / {accepted} / {handled} |")
print(f"| end of speech → handle sent, p50 / p95 / max (ms) | {pct(latency, 50):.1f} / {pct(latency, 95):.1f} / {max(latency or [0]):.1f} |")
print(f"| end of speech → final result, p50 / p95 (ms) | {pct(after, 50):.2f} / {pct(after, 95):.2f} |")
print(f"| CPU over the run (speech about a third of it) | {100 * (float(user) + float(system)) / float(wall):.1f}% of a core |")
print(f"| peak RSS | {int(rss) / 1024:.1f} MB |")
PY

# Each part starts with nothing going on: a timer or workout the commands left running (one misheard
# "cancel" is enough) would put its intents into the next part's grammar, and its memory with them.
fresh_plugins() { rm -rf "$state/plugins"; }

# 2. Idle listening: a minute of room noise, in real time.
fresh_plugins
sox -n -r 16000 -c 1 -b 16 "$work/idle.wav" synth 60 whitenoise vol 0.002
/usr/bin/time -f "%U %S %e %M" -o "$work/idle.time" \
  "$heed" listen --input "$work/idle.wav" --real-time --json "${options[@]}" > /dev/null
read -r user system wall rss < <(tail -1 "$work/idle.time")
python3 -c "import sys; u,s,w,r=map(float,sys.argv[1:]); print(f'| CPU while idle-listening (60 s of room noise) | {100*(u+s)/w:.2f}% of a core |'); print(f'| peak RSS idle | {r/1024:.1f} MB |')" "$user" "$system" "$wall" "$rss"

# 3. An hour through ALSA's file plugin: read speech (librivox), commands and quiet, looped.
librivox=/usr/share/pocketsphinx/test/data/librivox
sox "$librivox"/*.wav "$work/gap.wav" "$work/commands.wav" "$work/gap.wav" -r 16000 -c 1 -b 16 "$work/loop.wav"
loop=$(soxi -D "$work/loop.wav")
repeats=$(python3 -c "import math; print(math.ceil($hour / $loop))")
sox "$work/loop.wav" -t raw "$work/hour.raw" repeat "$((repeats - 1))"
mkdir -p "$work/home"
cat > "$work/home/.asoundrc" <<RC
pcm.filein  { type file  slave.pcm { type null }  file "/dev/null"  infile "$work/hour.raw"  format "raw" }
pcm.fileout { type file  slave.pcm { type null }  file "/dev/null"  format "raw" }
pcm.!default { type asym  capture.pcm "filein"  playback.pcm "fileout" }
RC
fresh_plugins
HOME=$work/home "$heed" listen --json --max-seconds "$hour" "${options[@]}" > "$work/hour.jsonl" &
pid=$!
: > "$work/rss.txt"
while kill -0 "$pid" 2> /dev/null; do
  grep VmRSS "/proc/$pid/status" 2> /dev/null | awk '{print $2}' >> "$work/rss.txt" || true
  sleep 1
done
wait "$pid"
python3 - "$work/rss.txt" "$work/hour.jsonl" "$hour" <<'PY'
import json, sys
rss = [int(x) for x in open(sys.argv[1]) if x.strip()]
events = [json.loads(line) for line in open(sys.argv[2])]
tenth = max(1, len(rss) // 10)
# The first tenth holds the start (model, grammar, plugins): compare the second with the last.
print(f"| {sys.argv[3]} s of audio through the file plugin: RSS max in the 2nd tenth / last tenth / overall | "
      f"{max(rss[tenth:2 * tenth]) / 1024:.1f} / {max(rss[-tenth:]) / 1024:.1f} / {max(rss) / 1024:.1f} MB ({len(rss)} samples, 1 s apart) |")
print(f"| … utterances / handled / audio reached | {sum(e['event'] == 'speechEnded' for e in events)} / "
      f"{sum(e['event'] == 'handle' for e in events)} / {events[-1].get('time', 0):.0f} s |")
PY
