#!/usr/bin/env python3
"""How long `heed listen --input /dev/stdin` takes to end a command said into a pipe in real time.

usage: scripts/pipe-latency.py HEED [RECORDING] [--commands 10]

Writes a WAV header that declares no length, then, paced to the audio clock in 20 ms pieces, a
quiet room (Gaussian noise, about -50 dBFS, seeded) with RECORDING (16 kHz mono; by default the
bundled examples/audio/pause.wav) said --commands times, 1.5 s apart, into `HEED listen --input
/dev/stdin --dry-run --json --denoise off` (run from the checkout, shipped intents). For each
`speechEnded` and `final` event it takes the wall clock when the line arrived, less the moment
the stream reached the event's time: the endpointer's wait for the end of speech plus what the
pipe and the decode add. Prints the median and the largest of each."""
import argparse, json, os, random, struct, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import samples_16k

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("heed")
    parser.add_argument("recording", nargs="?", default=os.path.join(ROOT, "examples/audio/pause.wav"))
    parser.add_argument("--commands", type=int, default=10)
    options = parser.parse_args()
    generator = random.Random(5)

    def room(seconds):
        return [int(generator.gauss(0, 100)) for _ in range(int(seconds * 16000))]

    samples = []
    for _ in range(options.commands):
        samples += room(1.5) + samples_16k(options.recording)
    samples += room(1.5)
    stream = struct.pack(f"<{len(samples)}h", *samples)
    unknown = 0xFFFFFFFF
    header = (b"RIFF" + struct.pack("<I", unknown) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 16000, 32000, 2, 16)
              + b"data" + struct.pack("<I", unknown))
    listener = subprocess.Popen([options.heed, "listen", "--input", "/dev/stdin", "--dry-run", "--json", "--denoise", "off"],
                                cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    started = threading.Event()
    start = [0.0]

    def write():
        listener.stdin.write(header)
        listener.stdin.flush()
        start[0] = time.monotonic()
        started.set()
        piece = 320 * 2  # 20 ms: 320 samples of 2 bytes
        for offset in range(0, len(stream), piece):
            wait = start[0] + offset / 32000 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            listener.stdin.write(stream[offset:offset + piece])
            listener.stdin.flush()
        listener.stdin.close()

    threading.Thread(target=write, daemon=True).start()
    delays = {"speechEnded": [], "final": []}
    for line in listener.stdout:
        arrived = time.monotonic()
        event = json.loads(line)
        if event["event"] in delays:
            started.wait()
            delays[event["event"]].append(arrived - (start[0] + event["time"]))
    if listener.wait() != 0:
        sys.exit(f"heed listen exited with status {listener.returncode}")
    for name, values in delays.items():
        values.sort()
        if values:
            print(f"{name}: {len(values)} events, median {values[len(values) // 2]:.3f} s, largest {values[-1]:.3f} s")
        else:
            print(f"{name}: none")


if __name__ == "__main__":
    main()
