#!/usr/bin/env python3
"""Commands said while Heed speaks: what an echo canceller would give back (measured, not built).

usage: scripts/echo-benchmark.py HEED CORPORA [--ser=-10,0] [--rt60 0.3] [--filter 4096]
                                 [--nonlinear] [--sets words,orders,own]

Heed drops what the microphone captures while it speaks (docs/LISTEN.md), so a command said
over a response is lost. This builds the echo path Heed would face and measures what the
cancellers of the two libraries Debian has give back. There is no sound card here, so the room
is simulated; the commands are real recordings and the speech is Heed's own (espeak-ng):

- Heed's responses, in three espeak-ng voices, played through a loudspeaker — linear, or
  saturating with `--nonlinear` — into a room: a 20 ms delay, then a tail decaying by 60 dB in
  `--rt60` seconds (seeded noise);
- each command said 1 s into the speech, scaled so that its loudest 2048-sample frame is
  `--ser` dB over the echo's over the same stretch (the echo's level fixed, as a room's is);
- one canceller runs over the whole stream, after 15 s of speech alone to learn the room, as it
  would run over all of Heed's speech in one room.

Conditions: the command alone; as captured; speexdsp's echo canceller (`--filter` samples of
impulse response); the same with speexdsp's preprocessor after it (residual echo suppression and
denoising at Heed's 8 dB); WebRTC's AEC (scripts/webrtc-filter.cc --echo). Sets: `words`, the 150
Speech Commands recordings through grammars/speech-commands.gram; `orders`, the 309 barista
orders through the coffee intents; `own`, Heed's speech alone in 2 s pieces through the shipped
intents (what Heed would hear of itself). Prints, for commands, those heard right and those also
accepted at the always-on (0.87) and lenient (0.2) points; for `own`, the pieces heard as some
command at each point.

Needs python3-numpy, libspeexdsp, libwebrtc-audio-processing-dev and g++, espeak-ng and sox.
The work folder goes at the end (KEEP=1 keeps it).
"""
import argparse, ctypes, ctypes.util, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import samples_16k, speak, webrtc_filter, work_folder, write_16k

try:
    import numpy as np
except ImportError:
    sys.exit("needs python3-numpy (apt-get install python3-numpy)")

RATE, FRAME = 16000, 160
RESPONSES = [
    "Timer set for 10 minutes.", "Did you say set a timer for ten minutes?",
    "It is twenty past four in the afternoon. Your pizza timer has eight minutes left.",
    "Now playing Road Trip, forty two songs, starting with Life is a Highway.", "Paused mpv.",
    "Which list? Shopping, to do, or packing?",
    "Workout started. Running, outdoors. Say pause my workout to take a break.",
    "Added apples to your shopping list.", "Your timer for five minutes is done.", "Volume set to forty percent.",
]
VOICES = ["en-us", "en-gb", "en-us+f3"]
LEAD, WARM_UP, ECHO_PEAK = 1.0, 15.0, 6000.0
CONDITIONS = ["alone", "captured", "speexdsp", "speexdsp+preprocessor", "webrtc"]

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("heed")
parser.add_argument("corpora")
parser.add_argument("--ser", default="-10,0", help="command over echo, dB, comma-separated (--ser=-10,0)")
parser.add_argument("--rt60", type=float, default=0.3, help="the room's decay time, s")
parser.add_argument("--filter", type=int, default=4096, help="speexdsp's filter length, samples")
parser.add_argument("--nonlinear", action="store_true", help="a loudspeaker that saturates")
parser.add_argument("--sets", default="words,orders,own")
args = parser.parse_args()
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = work_folder("heed-echo-")
print(f"work: {work}", file=sys.stderr)

webrtc = webrtc_filter(work)
speex_path = ctypes.util.find_library("speexdsp")
if speex_path is None:
    sys.exit("needs libspeexdsp (apt-get install libspeexdsp1)")
speex = ctypes.CDLL(speex_path)
speex.speex_echo_state_init.restype = speex.speex_preprocess_state_init.restype = ctypes.c_void_p
speex.speex_echo_ctl.argtypes = speex.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
speex.speex_echo_cancellation.argtypes = [ctypes.c_void_p] * 4
speex.speex_preprocess_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
speex.speex_echo_state_destroy.argtypes = speex.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
# speex_echo.h and speex_preprocess.h
ECHO_SET_SAMPLING_RATE, PREPROCESS_SET_DENOISE, PREPROCESS_SET_AGC = 24, 0, 2
PREPROCESS_SET_NOISE_SUPPRESS, PREPROCESS_SET_ECHO_STATE = 18, 24


def read(path):
    return np.array(samples_16k(path), dtype=np.float64)


def loudest(samples):
    return max(float((samples[i:i + 2048] ** 2).sum()) for i in range(0, len(samples), 2048))


def room(rt60):
    """A 20 ms delay, then the direct sound and a tail decaying by 60 dB in `rt60` seconds."""
    length = int(rt60 * RATE)
    tail = np.random.default_rng(2026).standard_normal(length) * 0.3 * np.exp(-6.9 * np.arange(length) / length)
    tail[0] = 1.0
    return np.concatenate([np.zeros(RATE // 50), tail])


def echo_of(played):
    """What the microphone hears of `played` through the loudspeaker and the room (FFT convolution)."""
    if args.nonlinear:
        played = np.tanh(2.5 * played / 32768) / np.tanh(2.5) * 32768
    response = room(args.rt60)
    size = 1 << int(np.ceil(np.log2(len(played) + len(response))))
    echo = np.fft.irfft(np.fft.rfft(played, size) * np.fft.rfft(response, size), size)[:len(played)]
    return echo * ECHO_PEAK / np.abs(echo).max()


def speexdsp(captured, played, preprocess):
    """speexdsp's echo canceller (and its preprocessor as Heed sets it) over a whole stream."""
    state = speex.speex_echo_state_init(FRAME, args.filter)
    rate = ctypes.c_int(RATE)
    speex.speex_echo_ctl(state, ECHO_SET_SAMPLING_RATE, ctypes.byref(rate))
    preprocessor = None
    if preprocess:
        preprocessor = speex.speex_preprocess_state_init(FRAME, RATE)
        for request, value in ((PREPROCESS_SET_DENOISE, 1), (PREPROCESS_SET_NOISE_SUPPRESS, -8), (PREPROCESS_SET_AGC, 0)):
            value = ctypes.c_int(value)
            speex.speex_preprocess_ctl(preprocessor, request, ctypes.byref(value))
        speex.speex_preprocess_ctl(preprocessor, PREPROCESS_SET_ECHO_STATE, ctypes.c_void_p(state))
    near = np.ascontiguousarray(captured, dtype=np.int16)
    far = np.ascontiguousarray(played, dtype=np.int16)
    out = np.zeros_like(near)
    for start in range(0, len(near) - len(near) % FRAME, FRAME):
        speex.speex_echo_cancellation(state, near[start:].ctypes.data, far[start:].ctypes.data, out[start:].ctypes.data)
        if preprocessor:
            speex.speex_preprocess_run(preprocessor, out[start:].ctypes.data)
    speex.speex_echo_state_destroy(state)
    if preprocessor:
        speex.speex_preprocess_state_destroy(preprocessor)
    return out.astype(np.float64)


def webrtc_aec(captured, played):
    far = os.path.join(work, "far.raw")
    np.clip(played, -32768, 32767).astype("<i2").tofile(far)
    near = np.clip(captured, -32768, 32767).astype("<i2").tobytes()
    out = subprocess.run([webrtc, "--echo", far], input=near, capture_output=True, check=True).stdout
    return np.frombuffer(out, dtype="<i2").astype(np.float64)


def through_cancellers(captured, played):
    return {"captured": captured, "speexdsp": speexdsp(captured, played, False),
            "speexdsp+preprocessor": speexdsp(captured, played, True), "webrtc": webrtc_aec(captured, played)}


def evaluate(manifest, grammar, negative=False):
    command = [args.heed, "eval", manifest, *grammar, "--jobs", "2", "--json", "--reject-below", "0"]
    report = json.loads(subprocess.run(command + (["--negative"] if negative else []), cwd=repo,
                                       capture_output=True, text=True, check=True).stdout)
    return report["results"]


def manifest(path, rows):
    with open(path, "w") as handle:
        handle.write("wav\ttranscript\tintent_slots_json\tspeaker\n")
        for row in rows:
            handle.write("\t".join(row) + "\n")


print("Heed's speech", file=sys.stderr)
speech_parts = []
for voice in VOICES:
    for index, text in enumerate(RESPONSES):
        path = os.path.join(work, f"response-{voice}-{index}.wav")
        speak("espeak-ng", voice, text, path)
        speech_parts.append(read(path))
speech = np.concatenate(speech_parts)
noise = np.random.default_rng(7)


def commands_while_speaking(name, corpus, grammar, ser):
    """Each recording of `corpus` said 1 s into Heed's speech, every condition decoded."""
    base = os.path.join(args.corpora, corpus)
    lines = [line.rstrip("\n").split("\t") for line in open(os.path.join(base, "manifest.tsv"))]
    header, rows = lines[0], lines[1:]
    column = {key: header.index(key) for key in ("wav", "transcript", "intent_slots_json", "speaker")}
    recordings = [read(os.path.join(base, row[column["wav"]])) for row in rows]
    lead, warm = int(LEAD * RATE), int(WARM_UP * RATE)
    spans, cursor = [], warm
    for recording in recordings:
        length = lead + len(recording) + RATE // 2
        length += -length % FRAME
        spans.append((cursor, cursor + length))
        cursor += length
    played = speech[np.arange(cursor) % len(speech)]
    echo = echo_of(played)
    said = np.zeros(cursor)
    for (start, _), recording in zip(spans, recordings):
        at = start + lead
        level = loudest(echo[at:at + len(recording)]) * 10 ** (ser / 10) / loudest(recording)
        said[at:at + len(recording)] = recording * np.sqrt(level)
    captured = np.clip(said + echo + noise.standard_normal(cursor) * 3, -32768, 32767)
    heard = through_cancellers(captured, played)
    results = {}
    for condition in CONDITIONS:
        folder = os.path.join(work, f"{name}-{ser:g}-{condition}")
        os.makedirs(folder)
        listing = []
        for index, ((start, end), recording, row) in enumerate(zip(spans, recordings, rows)):
            path = os.path.join(folder, f"{index:04d}.wav")
            write_16k(path, recording if condition == "alone" else heard[condition][start:end])
            listing.append([path] + [row[column[key]] for key in ("transcript", "intent_slots_json", "speaker")])
        manifest(folder + ".tsv", listing)
        decoded = evaluate(folder + ".tsv", grammar)
        right = [r for r in decoded if r.get("right") or r.get("intentCorrect")]
        results[condition] = (len(right), sum((r.get("confidence") or 0) >= 0.87 for r in right),
                              sum((r.get("confidence") or 0) >= 0.2 for r in right), len(decoded))
    return results


def own_speech():
    """Heed's speech alone after each canceller, in 2 s pieces after 10 s, through the shipped intents."""
    played = speech[:len(speech) - len(speech) % FRAME]
    captured = np.clip(echo_of(played) + noise.standard_normal(len(played)) * 3, -32768, 32767)
    heard = through_cancellers(captured, played)
    results = {}
    for condition in CONDITIONS[1:]:
        folder = os.path.join(work, f"own-{condition}")
        os.makedirs(folder)
        listing = []
        for index, start in enumerate(range(10 * RATE, len(played) - 2 * RATE, 2 * RATE)):
            path = os.path.join(folder, f"{index:03d}.wav")
            write_16k(path, heard[condition][start:start + 2 * RATE])
            listing.append([path, "", "", ""])
        manifest(folder + ".tsv", listing)
        decoded = [r for r in evaluate(folder + ".tsv", ["--intents", "intents"], negative=True) if r.get("text")]
        level = 10 * np.log10((heard[condition][10 * RATE:] ** 2).mean() / (captured[10 * RATE:] ** 2).mean())
        results[condition] = (len(listing), sum(r["confidence"] >= 0.2 for r in decoded),
                              sum(r["confidence"] >= 0.87 for r in decoded), level)
    return results


sets = args.sets.split(",")
room_text = f"room {args.rt60:g} s, {'saturating' if args.nonlinear else 'linear'} loudspeaker, speexdsp filter {args.filter}"
print(f"{room_text}: heard right / accepted at 0.87 / accepted at 0.2, of all")
print("| set | SER | " + " | ".join(CONDITIONS) + " |")
print("|---|---|" + "---|" * len(CONDITIONS))
for ser in [float(value) for value in args.ser.split(",")]:
    for name, corpus, grammar in (("words", "speech_commands_v001_sample", ["-g", "grammars/speech-commands.gram"]),
                                  ("orders", "picovoice_barista", ["--intents", "intents/examples/coffee.json"])):
        if name in sets:
            results = commands_while_speaking(name, corpus, grammar, ser)
            cells = [f"{r[0]} / {r[1]} / {r[2]} of {r[3]}" for r in (results[c] for c in CONDITIONS)]
            print(f"| {name} | {ser:g} dB | " + " | ".join(cells) + " |", flush=True)
if "own" in sets:
    results = own_speech()
    print(f"\nHeed's speech alone ({len(speech) / RATE:.0f} s), 2 s pieces heard as a command at 0.2 / at 0.87, level against the echo:")
    for condition in CONDITIONS[1:]:
        pieces, lenient, always, level = results[condition]
        print(f"- {condition}: {lenient} / {always} of {pieces}, {level:.1f} dB")
