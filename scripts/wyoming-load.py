#!/usr/bin/env python3
"""Load test for `heed serve --wyoming`: N concurrent streams, on the real `wyoming` library.

    wyoming-load.py URI --streams N [--rounds R] [--realtime] [--files manifest.tsv | --file F.wav --expect TEXT]
                    [--server-pid PID] [--server-log FILE] [--chunk-ms 20]

Each stream sends transcribe, audio-start, the file's chunks (in real time with --realtime, as
a satellite does), audio-stop, and waits for the transcript; R rounds one after another, each
stream with its own connection. Prints one JSON object: streams, utterances, correct (the
transcript equals the expected text), with_partial_results (transcriptions that began with
transcript-start: the server streamed partial results for them), latency from sending audio-stop to receiving the
transcript (p50, p95, max, ms), the server's CPU seconds and peak RSS (from /proc with
--server-pid), and, with --server-log (the output of `heed serve --json`), the decoding time
the server reports for each transcript (p50, p95, ms).
"""
import argparse
import asyncio
import csv
import json
import os
import statistics
import time
import wave

from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient


def load_files(args):
    if args.file:
        return [(args.file, args.expect)]
    folder = os.path.dirname(args.files)
    with open(args.files, newline="") as manifest:
        rows = list(csv.DictReader(manifest, delimiter="\t"))
    return [(os.path.join(folder, row["wav"]), row["transcript"]) for row in rows if row.get("transcript")]


def read_wav(path):
    with wave.open(path, "rb") as audio:
        return audio.getframerate(), audio.getsampwidth(), audio.getnchannels(), audio.readframes(audio.getnframes())


async def one(uri, audio, expected, chunk_ms, realtime):
    rate, width, channels, frames = audio
    client = AsyncClient.from_uri(uri)
    await client.connect()
    try:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
        step = rate * chunk_ms // 1000 * width * channels
        started = time.monotonic()
        for index, offset in enumerate(range(0, len(frames), step)):
            await client.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=frames[offset:offset + step]).event())
            if realtime:
                await asyncio.sleep(max(0.0, started + (index + 1) * chunk_ms / 1000 - time.monotonic()))
        await client.write_event(AudioStop().event())
        stopped = time.monotonic()
        streamed = False
        while True:
            event = await asyncio.wait_for(client.read_event(), 120)
            if event is None:
                return None, False, "closed", streamed
            if event.type == "transcript-start":
                streamed = True
            if event.type == "transcript":
                text = event.data.get("text", "")
                return (time.monotonic() - stopped) * 1000, text == expected, text, streamed
            if event.type == "error":
                return None, False, event.data.get("text"), streamed
    finally:
        await client.disconnect()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))], 1)


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("uri")
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--realtime", action="store_true")
    parser.add_argument("--files", help="a corpus manifest.tsv (wav, transcript columns)")
    parser.add_argument("--file")
    parser.add_argument("--expect", default="")
    parser.add_argument("--chunk-ms", type=int, default=20)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--server-log")
    args = parser.parse_args()

    files = load_files(args)
    audio = {path: read_wav(path) for path, _ in files}
    log_start = os.path.getsize(args.server_log) if args.server_log else 0
    cpu_before = cpu_seconds(args.server_pid) if args.server_pid else None
    wall = time.monotonic()
    results = []
    audio_seconds = 0.0
    for round_number in range(args.rounds):
        jobs = []
        for stream in range(args.streams):
            path, expected = files[(round_number * args.streams + stream) % len(files)]
            rate, width, channels, frames = audio[path]
            audio_seconds += len(frames) / (rate * width * channels)
            jobs.append(one(args.uri, audio[path], expected, args.chunk_ms, args.realtime))
        results += await asyncio.gather(*jobs)
    wall = time.monotonic() - wall
    latencies = [latency for latency, _, _, _ in results if latency is not None]
    summary = {
        "streams": args.streams,
        "rounds": args.rounds,
        "realtime": args.realtime,
        "utterances": len(results),
        "answered": len(latencies),
        "correct": sum(1 for _, correct, _, _ in results if correct),
        "with_partial_results": sum(1 for _, _, _, streamed in results if streamed),
        "latency_ms": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95), "max": percentile(latencies, 1.0)},
        "audio_seconds": round(audio_seconds, 1),
        "wall_seconds": round(wall, 1),
        "texts": sorted({text for _, _, text, _ in results if text is not None}),
    }
    if args.server_pid:
        summary["server_cpu_seconds"] = round(cpu_seconds(args.server_pid) - cpu_before, 1)
        summary["server_cpu_cores_busy"] = round(summary["server_cpu_seconds"] / wall, 2)
        summary["server_peak_rss_mb"] = round(peak_rss_mb(args.server_pid), 1)
    if args.server_log:
        decoding = []
        with open(args.server_log) as log:
            log.seek(log_start)
            for line in log:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "wyomingTranscript" and "milliseconds" in event:
                    decoding.append(event["milliseconds"])
        summary["server_decoding_ms"] = {"p50": percentile(decoding, 0.5), "p95": percentile(decoding, 0.95)}
        if latencies and decoding:
            summary["latency_minus_decoding_p95_ms"] = round(percentile(latencies, 0.95) - percentile(decoding, 0.95), 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
