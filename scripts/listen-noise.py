#!/usr/bin/env -S python3 -u
"""The hands-free listener in a noisy kitchen: real barista orders in one stream with kitchen noise.

usage: scripts/listen-noise.py HEED CORPORA [--snr clean,24,12,6] [--orders 60] [--modes off,auto,on]
       scripts/listen-noise.py HEED CORPORA --wake [--wake-threshold T] [--snr clean,24,12,6] [--orders 60] [--modes off]
       scripts/listen-noise.py HEED CORPORA --talk SETS [--wake-phrase P [--wake-threshold T]] [--snr clean,12] [--modes off]
       scripts/listen-noise.py HEED CORPORA … [--pause SECONDS] [--listen-options "--hesitation 0.5"]
       scripts/listen-noise.py HEED CORPORA … --split test [--sets SETS]
       scripts/listen-noise.py HEED CORPORA --answer-yes [--snr clean,12,6] [--orders 0] [--modes auto]
       scripts/listen-noise.py HEED CORPORA --step DB [--noise WAV] [--snr 12] [--modes auto]

Builds one recording per SNR from the first --orders orders of CORPORA/picovoice_barista (sorted by
file name; 0 for all 309), each followed by 1.5 s of nothing, with the benchmark's kitchen noise
running under the whole stream (looped). The noise is scaled once for the stream, the way the
Picovoice benchmark scales it per recording: the median over the orders of their loudest
2048-sample frame energy, over the loudest frame energy of the noise, is the SNR. Then for each
--denoise mode it runs `HEED listen --input STREAM --dry-run --json --intents
intents/examples/coffee.json` (always-on activation, the shipped defaults otherwise) and matches
each `final` event to the order it falls in. An order is understood when an accepted final of it
holds every labelled slot phrase ("triple shot", "light roast"; the label's words, in order);
"heard" ignores rejection.

With --wake, each order is asked for after a wake word: the five rhasspy-test recordings of
people saying other assistants' wake words (CORPORA/misc_samples, "okay rhasspy", "porcupine",
"hey mycroft", "okay rhasspy", "snowboy"), cut 0.15 s after the phrase ends (where `heed listen
--activation wake --intents intents` spots it in the clean recording), then 0.7 s of nothing, then the order. One
stream per wake word, with the orders whose index modulo 5 is its own, heard with `--activation
wake --wake-phrase PHRASE`. It counts the orders that woke the listener and those understood.
(Five people's wake words spliced before other people's orders: real speech, not real requests.)

With --talk, the stream is other speech instead: every recording of the sets of SETS
(scripts/rejection-sets.py) that are only negatives for the shipped intents (read sentences,
coffee orders, runs of words and of home-assistant commands, digits; about 74 minutes), in the
order of their manifests, each followed by 1.5 s of nothing, heard with the shipped intents
(`--intents intents`, nothing going on). Every accepted final counts as a false accept; the script
prints how many, per hour, and their words by set. With --wake-phrase it listens for that phrase
(`--activation wake`) and also counts the wakes, per hour and by set. (The runs of real commands are negatives as
a whole; a listener that hears one command of a run on its own hears something that was said.)

With --step DB, the room grows louder before each order: 3 s of the noise DB dB quieter than the
SNR says, then the noise at its level for 1 s before the order and for 11 s after it (longer than
the listener lets an utterance last, so the noise's fall never ends one), then the next order's
quiet. A fan or a television switched on just before someone speaks. --noise WAV (16 kHz mono)
replaces the kitchen noise, here and in every other stream.

With --talk-before S, each order comes S seconds after a piece of other talk: Debian's LibriVox
sentences cut at a quiet frame every 2 to 3 s, so that the talk stops mid-sentence (the pieces
are used in turn).

With --pause, each order stops mid-sentence for that many seconds of its own room tone (its first
0.25 s, looped): at the end of the word
before its middle one, where `HEED recognize --intents intents/examples/coffee.json` hears the
clean order's words (orders heard as fewer than two words are left whole; the count is printed).
With --answer-yes, each order is followed 1.5 s later by a person saying "yes" (the four Speech
Commands recordings of the word, in turn), as if Heed had asked it back ("Did you say …?"), then
1.5 s of nothing. An order also counts as understood when Heed asked it back, heard the yes, and
what it asked holds the order's slot phrases; `asked_back` counts the questions, `confirmed` the
yeses heard, `confirmed_wrong` the yeses to a question about words the order did not say (a person
would have answered no). Without it, the orders' and the talk's reports count the questions too:
`asked_back`, and in talk every yes heard is a false accept. An answer's own final (the yes or no)
is never counted as a command.

--listen-options adds arguments to every `heed listen`. --split train|test keeps only the
recordings of that split of the rejection sets (by speaker, recording cluster or file, as
scripts/rejection-sets.py assigns them): --talk's SETS for talk, --sets SETS for the orders.

Prints one JSON object a line. Needs only Python's standard library and a release heed.
"""
import argparse, json, os, shlex, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import LIBRIVOX, librivox_references, manifest_rows, peak_energy, samples_16k, with_noise, words, work_folder, write_16k

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("heed")
parser.add_argument("corpora")
parser.add_argument("--snr", default="clean,24,12,6", help="dB values, and clean for no noise")
parser.add_argument("--orders", type=int, default=60, help="the first N orders; 0 for all")
parser.add_argument("--talk", metavar="SETS", help="hear other speech from these rejection sets instead of orders")
parser.add_argument("--wake", action="store_true", help="each order after a person's wake word, --activation wake")
parser.add_argument("--wake-phrase", metavar="P", help="with --talk: listen for this wake phrase")
parser.add_argument("--wake-threshold", metavar="T", help="with --wake or --wake-phrase: heed listen's --wake-threshold")
parser.add_argument("--modes", default="off,auto,on")
parser.add_argument("--pause", type=float, help="seconds of nothing in the middle of each order")
parser.add_argument("--talk-before", type=float, metavar="S",
                    help="each order follows a piece of read speech that stops mid-sentence S seconds before it")
parser.add_argument("--noise", metavar="WAV", help="this noise instead of the benchmark's kitchen noise")
parser.add_argument("--step", type=float, metavar="DB",
                    help="before each order 4 s of the noise DB dB quieter, rising to its level 1 s before the order")
parser.add_argument("--answer-yes", action="store_true", help="a person's yes 1.5 s after each order")
parser.add_argument("--listen-options", default="", help="more arguments for heed listen, as one string")
parser.add_argument("--split", choices=["train", "test"],
                    help="only the recordings of this split of the rejection sets (--talk's SETS, or --sets for the orders)")
parser.add_argument("--sets", metavar="SETS", help="with --split and the orders: the rejection sets that give each order's split")
args = parser.parse_args()
if args.wake and args.talk:
    parser.error("--wake and --talk build different streams: give one")
if args.talk_before is not None and (args.talk or args.wake):
    parser.error("--talk-before goes with the orders stream")
if args.step is not None and (args.talk or args.wake):
    parser.error("--step goes with the orders stream")
if args.answer_yes and (args.talk or args.wake or args.step is not None):
    parser.error("--answer-yes goes with the orders stream")
if args.wake_phrase and not args.talk:
    parser.error("--wake-phrase goes with --talk (--wake uses each recording's own phrase)")
if args.split and not (args.talk or args.sets):
    parser.error("--split needs the rejection sets: --talk SETS, or --sets SETS for the orders")
if args.sets and not args.split:
    parser.error("--sets goes with --split")

RATE, GAP = 16000, 24000
barista = os.path.join(args.corpora, "picovoice_barista")

read = samples_16k

WAKE_WORDS = [("pocketsphinx", "okay rhasspy"), ("porcupine", "porcupine"), ("precise", "hey mycroft"),
              ("raven", "okay rhasspy"), ("snowboy", "snowboy")]

def listen(stream, extra, mode, intents="intents" if args.talk else "intents/examples/coffee.json"):
    """heed listen's events for a stream."""
    run = subprocess.run(
        [args.heed, "listen", "--input", stream, "--dry-run", "--json", "--intents", intents, "--denoise", mode] + extra
        + shlex.split(args.listen_options),
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"heed listen failed: {run.stderr}")
    return [json.loads(line) for line in run.stdout.splitlines()]

def wake_clip(engine, phrase):
    """A wake-word recording up to 0.15 s after the phrase, where the listener spots it in quiet (with
    the shipped intents: the lamp after the phrase is none of the coffee grammar's sentences)."""
    path = os.path.join(args.corpora, "misc_samples", "wav", f"rhasspy_wake_{engine}_turn_on_the_living_room_lamp.wav")
    woke = [e for e in listen(path, ["--activation", "wake", "--wake-phrase", phrase], "off", "intents") if e["event"] == "wake"]
    if not woke:
        sys.exit(f"{path}: the wake phrase \"{phrase}\" is not heard even in quiet")
    return read(path)[:int((woke[0]["time"] + 0.15) * RATE)]

rows = []
if args.talk:
    for entry in manifest_rows(os.path.join(args.talk, "sets.tsv")):
        if entry["grammar"] == "--intents intents" and entry["purpose"].startswith("negatives"):
            rows += [(fields["wav"], entry["name"]) for fields in manifest_rows(os.path.join(args.talk, entry["name"] + ".tsv"))
                     if not args.split or fields["split"] == args.split]
else:
    rows = [(os.path.join(barista, fields["wav"]), json.loads(fields["intent_slots_json"]))
            for fields in manifest_rows(os.path.join(barista, "manifest.tsv"))]
    if args.split:
        split_of = {os.path.basename(fields["wav"]): fields["split"]
                    for fields in manifest_rows(os.path.join(args.sets, "barista-orders.tsv"))}
        rows = [row for row in rows if split_of[os.path.basename(row[0])] == args.split]
    rows.sort()
    rows = rows[:args.orders] if args.orders else rows

# Each stream: a name, the listener's extra arguments, its samples, and the (start, end, label) of each item.
threshold = ["--wake-threshold", args.wake_threshold] if args.wake_threshold else []
if args.wake:
    groups = [(f"wake-{engine}", ["--activation", "wake", "--wake-phrase", phrase] + threshold, wake_clip(engine, phrase), rows[k::5])
              for k, (engine, phrase) in enumerate(WAKE_WORDS)]
elif args.talk:
    groups = [("talk", ["--activation", "wake", "--wake-phrase", args.wake_phrase] + threshold if args.wake_phrase else [], [], rows)]
else:
    groups = [("orders", [], [], rows)]

def pause_points(paths):
    """Where each recording's words pause mid-sentence (a sample index), by path: the end of the word
    before the middle one, as `heed recognize` hears the recording."""
    run = subprocess.run([args.heed, "recognize", "--intents", "intents/examples/coffee.json", "--json"] + paths,
                         capture_output=True, text=True)
    points = {}
    for line in run.stdout.splitlines():
        result = json.loads(line)
        heard = result.get("words") or []
        if len(heard) >= 2:
            points[result["file"]] = int(heard[len(heard) // 2 - 1]["end"] * RATE)
    return points

def talk_pieces():
    """Debian's LibriVox sentences cut at their quietest 10 ms frame 2 to 3 s after the last cut:
    someone else's talk, stopping mid-sentence."""
    pieces = []
    for name in librivox_references():
        samples = read(os.path.join(LIBRIVOX, name + ".wav"))
        energy = [sum(x * x for x in samples[i:i + 160]) for i in range(0, len(samples) - 160, 160)]
        start = 0
        while start + 400 < len(energy):
            cut = min(range(start + 200, start + 300), key=lambda i: energy[i])
            pieces.append(samples[start * 160:cut * 160])
            start = cut
        pieces.append(samples[start * 160:])
    return pieces

pieces = talk_pieces() if args.talk_before is not None else []
yeses = []
if args.answer_yes:
    commands = os.path.join(args.corpora, "speech_commands_v001_sample")
    with open(os.path.join(commands, "manifest.tsv")) as manifest:
        yeses = [read(os.path.join(commands, line.split("\t")[0])) for line in list(manifest)[1:] if line.split("\t")[1] == "yes"]
if pieces:
    print(f"{len(pieces)} pieces of talk, each ending {args.talk_before:g} s before an order", file=sys.stderr)

points = pause_points([path for _, _, _, items in groups for path, _ in items]) if args.pause else {}
if args.pause:
    print(f"pause of {args.pause:g} s in {len(points)} of {sum(len(items) for _, _, _, items in groups)} recordings", file=sys.stderr)

# With --step: 3 s of the quieter room, 1 s of the louder one before the order, 11 s of it after
# (longer than an utterance may last, so the louder room's end never ends an utterance).
STEP_QUIET, STEP_LEAD, STEP_AFTER = 4 * RATE, RATE, 11 * RATE
streams, peaks = [], []
for name, extra, before, items in groups:
    speech, spans, envelope = [], [], []
    for path, label in items:
        samples = read(path)
        if path in points:
            # The pause is the recording's own room tone: its first 0.25 s (before the words), looped.
            tone = samples[:RATE // 4]
            pause = [tone[i % len(tone)] for i in range(int(args.pause * RATE))]
            samples = samples[:points[path]] + pause + samples[points[path]:]
        peaks.append(peak_energy(samples))
        start = len(speech)
        if before:
            speech += before + [0] * int(0.7 * RATE)
        if pieces:
            speech += pieces[len(spans) % len(pieces)] + [0] * int(args.talk_before * RATE)
        if args.step is not None:
            quiet = 10 ** (-args.step / 20)
            envelope += [1.0] * (len(speech) - len(envelope)) + [quiet] * (STEP_QUIET - STEP_LEAD) + [1.0] * STEP_LEAD
            speech += [0] * STEP_QUIET
        after = GAP if args.step is None else STEP_AFTER
        answer = yeses[len(spans) % len(yeses)] + [0] * GAP if yeses else []
        spans.append((start / RATE, (len(speech) + len(samples) + after + len(answer)) / RATE, label))
        speech += samples + [0] * after + answer
    envelope += [1.0] * (len(speech) - len(envelope))
    streams.append((name, extra, speech, spans, envelope if args.step is not None else None))
speech_peak = statistics.median(peaks)
noise = read(args.noise or os.path.join(barista, "noise", "kitchen.wav"))
work = work_folder("heed-listen-noise-")

for snr in [None if s == "clean" else float(s) for s in args.snr.split(",")]:
    for mode in args.modes.split(","):
        totals = {}
        for name, extra, speech, spans, envelope in streams:
            stream = os.path.join(work, f"{name}-{'clean' if snr is None else f'{snr:g}'}.wav")
            if not os.path.exists(stream):
                # Mixed once per SNR; every --denoise mode hears the same file.
                write_16k(stream, speech if snr is None else with_noise(speech, speech_peak, noise, snr, envelope))
            events = listen(stream, extra, mode)
            # An answer to asking back is no command: the final just before each askedBack event.
            answers = {id(events[i - 1]) for i, e in enumerate(events) if e["event"] == "askedBack" and i > 0}
            finals = [e for e in events if e["event"] == "final" and id(e) not in answers]
            wakes = [e for e in events if e["event"] == "wake"]
            asked = [e for e in events if e["event"] == "askedBack"]
            endings = totals.setdefault("endings", {})
            for e in events:
                if e["event"] == "speechEnded":
                    endings[e["mode"]] = endings.get(e["mode"], 0) + 1
            if args.talk:
                accepted, woke = {}, {}
                def set_of(event):
                    return next((label for start, end, label in spans if start <= event["time"] < end), "?")
                for f in finals:
                    if f["text"] and not f["rejected"]:
                        accepted.setdefault(set_of(f), []).append(f["text"])
                for a in asked:
                    if a["answer"] == "yes":
                        accepted.setdefault(set_of(a), []).append(a["text"] + " (asked back)")
                for w in wakes:
                    woke[set_of(w)] = woke.get(set_of(w), 0) + 1
                count = sum(len(texts) for texts in accepted.values())
                hours = len(speech) / RATE / 3600
                report = {"false_accepts": count, "per_hour": round(count / hours, 2), "finals": len(finals),
                          "asked_back": len(asked), "asked_back_per_hour": round(len(asked) / hours, 2)}
                if args.wake_phrase:
                    report |= {"wake_phrase": args.wake_phrase, "false_wakes": len(wakes), "wakes_per_hour": round(len(wakes) / hours, 2),
                               "wakes_by_set": woke}
                totals |= report | {"hours": round(hours, 3), "accepted_by_set": accepted}
                continue
            understood = heard = denoised = woken = confirmed = confirmed_wrong = 0
            for start, end, label in spans:
                wanted = [words(value) for value in label.get("slots", {}).values()]
                mine = [f for f in finals if start <= f["time"] < end]

                def holds(final):
                    text = " ".join(words(final["text"]))
                    return bool(text) and all(" ".join(w) in text for w in wanted)
                yes = [a for a in asked if start <= a["time"] < end and a["answer"] == "yes"]
                confirmed += bool(yes)
                confirmed_wrong += any(not holds(a) for a in yes)
                heard += any(holds(f) for f in mine)
                understood += any(holds(f) and not f["rejected"] for f in mine) or any(holds(a) for a in yes)
                denoised += any(f.get("denoised") for f in mine)
                woken += any(start <= w["time"] < end for w in wakes)
            for key, value in {"orders": len(spans), "understood": understood, "heard_ignoring_rejection": heard,
                               "finals": len(finals), "asked_back": len(asked), "confirmed": confirmed,
                               "confirmed_wrong": confirmed_wrong, "stream_seconds": round(len(speech) / RATE, 1)}.items():
                totals[key] = totals.get(key, 0) + value
            if mode == "auto":
                totals["orders_denoised"] = totals.get("orders_denoised", 0) + denoised
            if args.wake:
                totals["woke"] = totals.get("woke", 0) + woken
                totals.setdefault("woke_understood_by_wake_word", {})[name] = [woken, understood, len(spans)]
        print(json.dumps({"snr": "clean" if snr is None else snr, "denoise": mode}
                         | ({"split": args.split} if args.split else {}) | totals))
