#!/usr/bin/env python3
"""A Wyoming client for trying and testing `heed serve --wyoming`, on the real `wyoming` library.

    wyoming-client.py URI describe
    wyoming-client.py URI ping [TEXT]
    wyoming-client.py URI transcribe FILE.wav [--chunk-ms MS] [--realtime] [--disconnect-after S]
    wyoming-client.py URI recognize TEXT
    wyoming-client.py URI handle TEXT
    wyoming-client.py URI detect FILE.wav
    wyoming-client.py URI raw HEX-OR-@FILE [--half-close]   (bytes as they are, then the events that come back)

URI is tcp://HOST:PORT or unix://PATH. Every event Heed sends back is printed as one JSON line
({"type", "data"}, the payload's length only); the exit status is 0 unless the connection failed.
Install the library with: python3 -m venv .build/wyoming-venv && .build/wyoming-venv/bin/pip install wyoming
"""
import argparse
import asyncio
import json
import sys
import time
import wave

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info
from wyoming.intent import Recognize
from wyoming.ping import Ping
from wyoming.wake import Detect


def show(event):
    line = {"type": event.type, "data": event.data}
    if event.payload:
        line["payload_length"] = len(event.payload)
    print(json.dumps(line, sort_keys=True), flush=True)


async def read_until(client, done_types, timeout=120, stop_at_error=True):
    """Prints events until one of `done_types` (or an error) comes; returns the events."""
    events = []
    while True:
        event = await asyncio.wait_for(client.read_event(), timeout)
        if event is None:
            print(json.dumps({"type": "closed"}), flush=True)
            return events
        show(event)
        events.append(event)
        if event.type in done_types or (stop_at_error and event.type == "error"):
            return events


async def send_audio(client, path, chunk_ms, realtime, disconnect_after=None, convert=None):
    with wave.open(path, "rb") as audio:
        rate, width, channels = audio.getframerate(), audio.getsampwidth(), audio.getnchannels()
        converter = AudioChunkConverter(*(int(n) for n in convert.split(","))) if convert else None
        if converter:
            await client.write_event(AudioStart(rate=converter.rate, width=converter.width, channels=converter.channels).event())
        else:
            await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
        frames = max(1, rate * chunk_ms // 1000)
        sent = 0.0
        started = time.monotonic()
        while chunk := audio.readframes(frames):
            event = AudioChunk(rate=rate, width=width, channels=channels, audio=chunk)
            await client.write_event((converter.convert(event) if converter else event).event())
            sent += frames / rate
            if disconnect_after is not None and sent >= disconnect_after:
                return False
            if realtime:
                await asyncio.sleep(max(0.0, started + sent - time.monotonic()))
    await client.write_event(AudioStop().event())
    return True


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("uri")
    parser.add_argument("command", choices=["describe", "ping", "transcribe", "recognize", "handle", "detect", "raw"])
    parser.add_argument("argument", nargs="?")
    parser.add_argument("--chunk-ms", type=int, default=100)
    parser.add_argument("--realtime", action="store_true", help="send audio no faster than it plays")
    parser.add_argument("--half-close", action="store_true", help="raw: end the sending side after the bytes")
    parser.add_argument("--convert", metavar="RATE,WIDTH,CHANNELS",
                        help="convert the audio with the library's AudioChunkConverter before sending, e.g. 48000,4,2")
    parser.add_argument("--disconnect-after", type=float, help="seconds of audio after which to hang up without audio-stop")
    args = parser.parse_args()

    client = AsyncClient.from_uri(args.uri)
    await client.connect()
    try:
        if args.command == "describe":
            await client.write_event(Describe().event())
            events = await read_until(client, {"info"})
            if events and events[-1].type == "info":
                info = Info.from_event(events[-1])  # the library's own parser must accept it
                print(json.dumps({"parsed": {"asr": [p.name for p in info.asr], "intent": [p.name for p in info.intent],
                                             "handle": [p.name for p in info.handle], "wake": [p.name for p in info.wake]}}))
        elif args.command == "ping":
            await client.write_event(Ping(text=args.argument).event())
            await read_until(client, {"pong"})
        elif args.command == "transcribe":
            await client.write_event(Transcribe(language="en").event())
            if not await send_audio(client, args.argument, args.chunk_ms, args.realtime, args.disconnect_after, args.convert):
                print(json.dumps({"type": "hung-up"}), flush=True)
                return
            events = await read_until(client, {"transcript"})
            # With partial results the final transcript comes before transcript-stop.
            if events and events[-1].type == "transcript" and any(e.type == "transcript-start" for e in events):
                await read_until(client, {"transcript-stop"})
            for event in events:
                if Transcript.is_type(event.type):
                    print(json.dumps({"parsed": {"text": Transcript.from_event(event).text}}))
        elif args.command == "recognize":
            await client.write_event(Recognize(text=args.argument).event())
            await read_until(client, {"intent", "not-recognized"})
        elif args.command == "handle":
            await client.write_event(Transcript(text=args.argument).event())
            await read_until(client, {"handled", "not-handled"})
        elif args.command == "detect":
            await client.write_event(Detect().event())
            await send_audio(client, args.argument, args.chunk_ms, args.realtime, convert=args.convert)
            # Events are answered in order: the pong comes after every detection of the stream.
            await client.write_event(Ping(text="end").event())
            await read_until(client, {"pong"}, stop_at_error=False)
        elif args.command == "raw":
            data = open(args.argument[1:], "rb").read() if args.argument.startswith("@") else bytes.fromhex(args.argument)
            client._writer.write(data)  # the library has no call for bytes that are no event
            await client._writer.drain()
            if args.half_close:
                client._writer.write_eof()
            try:
                await read_until(client, {"pong"}, timeout=30, stop_at_error=False)
            except asyncio.TimeoutError:
                print(json.dumps({"type": "timeout"}), flush=True)
    finally:
        await client.disconnect()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (ConnectionError, OSError) as error:
        sys.exit(f"wyoming-client: {error}")
