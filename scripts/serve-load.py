#!/usr/bin/env -S python3 -u
"""Load test for `heed serve`'s local API: an idle service, then N clients streaming at once.

usage: scripts/serve-load.py [--build DIR] [--streams 1,8] [--rounds 3] [--idle-seconds 30]
                             [--file F.wav --expect TEXT] [--no-partial] [--max-tasks N]

Starts the real `heed serve --no-microphone --json` (DIR/heed, default .build/release) on a
socket in a folder of its own (`--max-tasks`: the most --streams, unless given), with a client manifest naming this Python interpreter (a client
is identified by its executable) and its permission granted. Then:

- idle: the service's CPU time over --idle-seconds with no client, and its RSS;
- for each N of --streams: N clients at once, each on its own connection, --rounds times:
  `recognize` (source stream, the shipped intents, partial results unless --no-partial), the
  file's audio in 20 ms `audio` messages at the pace of speech, `finish`, then the wait for
  `final`. Reported: transcripts equal to --expect; the latency from sending `finish` to
  receiving `final` (p50, p95, max); the service's own final-decode time from its `final` log
  events (p50, p95) and the latency beyond it (p95 minus p95); the seconds of audio between a
  task's partial results (median, max); how many tasks' last partial result was the final text;
  the service's CPU per second of audio and peak RSS.

Prints one JSON object a line. Nothing is mocked: the service, its decoders and the socket are
the ones users get. Needs only Python's standard library.
"""
import argparse, asyncio, base64, json, os, statistics, sys, threading, time, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import start_service, work_folder

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--build", default=".build/release")
parser.add_argument("--streams", default="1,8")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--idle-seconds", type=float, default=30)
parser.add_argument("--file", default="examples/audio/set_a_timer_for_5_minutes.wav")
parser.add_argument("--expect", default="set a timer for five minutes")
parser.add_argument("--no-partial", action="store_true")
parser.add_argument("--max-tasks", type=int)
args = parser.parse_args()
stream_counts = [int(n) for n in args.streams.split(",")]

heed = os.path.join(args.build, "heed")
with wave.open(args.file) as recording:
    if recording.getframerate() != 16000 or recording.getnchannels() != 1 or recording.getsampwidth() != 2:
        sys.exit(f"{args.file}: needs 16 kHz mono 16-bit")
    audio = recording.readframes(recording.getnframes())
audio_seconds = len(audio) / 32000
CHUNK = 640  # 20 ms

work = work_folder("heed-serve-load-")
socket_path = os.path.join(work, "heed.sock")
max_tasks = str(args.max_tasks or max(stream_counts))
service = start_service(
    heed, work,
    {"appId": "org.heed.serve-load", "displayName": "Load test", "executable": os.path.realpath(sys.executable),
     "speechRecognitionUsageDescription": "Measures the service."},
    ["--no-microphone", "--socket", socket_path, "--max-tasks", max_tasks], dict(os.environ, XDG_RUNTIME_DIR=work))

decode_ms = []  # from the service's `final` events
def read_log():
    for line in service.stdout:
        event = json.loads(line)
        if event.get("event") == "final" and "milliseconds" in event:
            decode_ms.append(event["milliseconds"])
threading.Thread(target=read_log, daemon=True).start()

def cpu_seconds():
    fields = open(f"/proc/{service.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def memory(key):
    return next(int(line.split()[1]) // 1024 for line in open(f"/proc/{service.pid}/status") if line.startswith(key))

def percentile(values, share):
    return round(sorted(values)[min(len(values) - 1, int(share * len(values)))], 1) if values else None

async def stream(number, round_):
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 21)
    task = f"{number}-{round_}"
    partials, partial_texts, sent = [], [], {}
    started = time.monotonic()

    async def receive():
        # Read while the audio goes: a partial result's arrival since the start is the audio
        # position the service had decoded, as the audio comes at the pace of speech.
        while True:
            line = await reader.readline()
            if not line:
                return None, "connection closed"
            message = json.loads(line)
            if message.get("type") == "partial":
                partials.append(time.monotonic() - started)
                partial_texts.append(message.get("transcription", ""))
            elif message.get("type") == "final":
                return (time.monotonic() - sent["finish"]) * 1000, message.get("transcription", "")
            elif message.get("type") == "error":
                return None, f"error {message.get('status')}: {message.get('message')}"

    def send(message):
        writer.write((json.dumps(message) + "\n").encode())
    receiving = asyncio.create_task(receive())
    send({"id": 0, "type": "hello", "protocol": 1})
    send({"id": task, "type": "recognize", "source": "stream", "partialResults": not args.no_partial})
    for offset in range(0, len(audio), CHUNK):
        send({"id": task, "type": "audio", "data": base64.b64encode(audio[offset:offset + CHUNK]).decode()})
        await writer.drain()
        await asyncio.sleep(max(0, started + (offset + CHUNK) / 32000 - time.monotonic()))
    sent["finish"] = time.monotonic()
    send({"id": task, "type": "finish"})
    await writer.drain()
    final = await receiving
    writer.close()
    return final, partials, partial_texts[-1] if partial_texts else None

async def clients(count):
    results = []
    for round_ in range(args.rounds):
        results += await asyncio.gather(*(stream(number, round_) for number in range(count)))
    return results

before = cpu_seconds()
time.sleep(args.idle_seconds)
idle = cpu_seconds() - before
print(json.dumps({"idle_seconds": args.idle_seconds, "idle_cpu_share_of_a_core": round(idle / args.idle_seconds, 4),
                  "idle_rss_mb": memory("VmRSS")}))

for count in stream_counts:
    decode_ms.clear()
    before = cpu_seconds()
    results = asyncio.run(clients(count))
    time.sleep(0.2)  # the last `final` log events
    cpu = cpu_seconds() - before
    latencies = [final[0] for final, _, _ in results if final[0] is not None]
    gaps = [b - a for _, partials, _ in results for a, b in zip(partials, partials[1:])]
    texts = sorted({final[1] for final, _, _ in results})
    report = {
        "streams": count, "rounds": args.rounds, "utterances": len(results),
        "correct": sum(1 for final, _, _ in results if final[1] == args.expect), "texts": texts,
        "latency_ms": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95), "max": percentile(latencies, 1)},
        "server_decoding_ms": {"p50": percentile(decode_ms, 0.5), "p95": percentile(decode_ms, 0.95)},
        "partials_per_utterance": round(sum(len(p) for _, p, _ in results) / len(results), 1),
        "last_partial_equals_final": sum(1 for final, _, last in results if last is not None and last == final[1]),
        "last_partials": sorted({last or "" for _, _, last in results}),
        "seconds_between_partials": {"median": round(statistics.median(gaps), 3) if gaps else None,
                                     "max": round(max(gaps), 3) if gaps else None},
        "server_cpu_seconds_per_audio_second": round(cpu / (audio_seconds * len(results)), 3),
        "server_peak_rss_mb": memory("VmHWM"),
    }
    if latencies and decode_ms:
        report["latency_beyond_decoding_p95_ms"] = round(percentile(latencies, 0.95) - percentile(decode_ms, 0.95), 1)
    print(json.dumps(report))

service.terminate()
service.wait()
