"""What Heed's benchmark scripts share: a work folder, word errors, Debian's LibriVox sentences,
synthetic speech (espeak-ng, flite), the WebRTC filter for comparisons with speexdsp,
streams of recordings with noise mixed in, and timing one utterance through PocketSphinx 5's Python decoder. Scripts import it from their own folder
(`sys.path.insert(0, <scripts>)`); it needs nothing outside Python's standard library."""
import atexit, csv, math, os, random, shutil, struct, subprocess, sys, tempfile, time, wave

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"


def work_folder(prefix):
    """A temporary folder for the run, removed when the script ends; KEEP=1 keeps it (as for
    scripts/listen-benchmark.sh)."""
    work = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("KEEP"):
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    return work


def webrtc_filter(work):
    """scripts/webrtc-filter.cc built into `work` (Debian's libwebrtc-audio-processing-dev and
    g++); exits with what to install when the library is missing."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "webrtc-audio-processing"], capture_output=True, text=True)
    if flags.returncode != 0:
        sys.exit("needs libwebrtc-audio-processing-dev (apt-get install libwebrtc-audio-processing-dev g++)")
    binary = os.path.join(work, "webrtc-filter")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "webrtc-filter.cc")
    subprocess.run(["g++", "-O2", source, "-o", binary] + flags.stdout.split(), check=True)
    return binary


def manifest_rows(path):
    """The rows of a tab-separated manifest (a corpus's manifest.tsv, a rejection set, sets.tsv) as
    dicts by its header; no quoting, as the corpora write them."""
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def word_errors(reference, hypothesis):
    """Substitutions, deletions and insertions between two lists of words (edit distance)."""
    row = list(range(len(hypothesis) + 1))
    for i in range(1, len(reference) + 1):
        previous, row[0] = row[:], i
        for j in range(1, len(hypothesis) + 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (reference[i - 1] != hypothesis[j - 1]))
    return row[len(hypothesis)]


def librivox_references(data=LIBRIVOX):
    """The LibriVox test sentences' words, by file id, in the order of their `fileids`."""
    words = {}
    for line in open(os.path.join(data, "transcription")):
        fields = line.split()
        words[fields[-1].strip("()")] = [w for w in fields[:-1] if w not in ("<s>", "</s>")]
    return {name: words[name] for name in open(os.path.join(data, "fileids")).read().split()}


def read_mono16k(path):
    """A recording's samples and seconds, or None when it is not 16 kHz mono."""
    with wave.open(path) as recording:
        if recording.getframerate() != 16000 or recording.getnchannels() != 1:
            return None
        return recording.readframes(recording.getnframes()), recording.getnframes() / 16000


def samples_16k(path):
    """A 16 kHz mono 16-bit recording's samples; exits with a message for any other."""
    with wave.open(path) as recording:
        if recording.getframerate() != 16000 or recording.getnchannels() != 1 or recording.getsampwidth() != 2:
            sys.exit(f"{path}: needs 16 kHz mono 16-bit")
        data = recording.readframes(recording.getnframes())
    return list(struct.unpack(f"<{len(data) // 2}h", data))


def write_16k(path, samples):
    """Writes samples (numbers, rounded and clipped to 16 bits) as a 16 kHz mono WAV file."""
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(struct.pack(f"<{len(samples)}h", *(max(-32768, min(32767, int(round(x)))) for x in samples)))


def speak(engine, voice, text, path):
    """`text` in `voice` of espeak-ng or flite, written to `path` as 16 kHz 16-bit mono."""
    raw = path + ".raw.wav"
    if engine == "espeak-ng":
        subprocess.run(["espeak-ng", "-v", voice, "-w", raw, text], check=True)
    else:
        subprocess.run(["flite", "-voice", voice, "-t", text, "-o", raw], check=True)
    # -R: sox dithers the resampled audio with a fresh seed each run unless told to repeat itself.
    subprocess.run(["sox", "-q", "-R", raw, "-r", "16000", "-c", "1", "-b", "16", path], check=True)
    os.remove(raw)


def words(text):
    """Lower-case words, punctuation dropped."""
    return "".join(c if c.isalnum() or c == " " else " " for c in text.lower()).split()


PEAK_FRAME = 2048


def peak_energy(samples):
    """The energy of the loudest 2048-sample frame (the Picovoice benchmark's measure for its SNR)."""
    return max((sum(x * x for x in samples[i:i + PEAK_FRAME]) / PEAK_FRAME
                for i in range(0, max(1, len(samples) - PEAK_FRAME + 1), PEAK_FRAME)), default=0)


def with_noise(speech, speech_peak, noise, snr, envelope=None):
    """`speech` with `noise` looped under all of it, scaled once so that the speech's peak energy
    (`speech_peak`, e.g. the median over the recordings in it) is `snr` dB above the noise's; the
    whole scaled down if it would clip. The noise starts at an offset drawn with seed 2026.
    `envelope`, if given, is a further gain for the noise at each sample (1 keeps the SNR)."""
    gain = math.sqrt(speech_peak / (peak_energy(noise) * 10 ** (snr / 10)))
    offset = random.Random(2026).randrange(len(noise))
    mixed = [speech[i] + gain * (envelope[i] if envelope else 1) * noise[(offset + i) % len(noise)]
             for i in range(len(speech))]
    scale = min(1.0, 32767 / max(1.0, max(abs(x) for x in mixed)))
    return [x * scale for x in mixed]


def decode_timed(decoder, samples, wall=False):
    """One whole utterance through a PocketSphinx 5 decoder: its hypothesis and CPU seconds
    (and, with `wall`, the seconds it took)."""
    started, started_wall = time.process_time(), time.perf_counter()
    decoder.start_utt()
    decoder.process_raw(samples, full_utt=True)
    decoder.end_utt()
    cpu = time.process_time() - started
    hypothesis = decoder.hyp().hypstr if decoder.hyp() else ""
    return (hypothesis, cpu, time.perf_counter() - started_wall) if wall else (hypothesis, cpu)


def start_service(heed, work, client, serve_arguments, environment=None):
    """A real `heed serve --json` in the folder `work`: the client manifest `client` (a dict with
    at least appId) in `work/clients`, an empty configuration, the client's speech recognition
    granted, and the service started with `serve_arguments` (its --socket among them). Returns
    the running process once it says it listens; its standard output gives its JSON events."""
    import json, subprocess
    folder = os.path.join(work, "clients", "client")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "client.json"), "w") as manifest:
        json.dump(client, manifest)
    with open(os.path.join(work, "config.json"), "w") as config:
        config.write("{}")
    common = ["--state-dir", os.path.join(work, "state"), "--config", os.path.join(work, "config.json"),
              "--clients", os.path.join(work, "clients")]
    subprocess.run([heed, "auth", "speech-recognition", "grant", client["appId"]] + common, check=True, capture_output=True)
    service = subprocess.Popen([heed, "serve", "--json"] + serve_arguments + common, env=environment,
                               stdout=subprocess.PIPE, text=True)
    while "listening" not in service.stdout.readline():
        if service.poll() is not None:
            raise SystemExit(f"heed serve did not start (exit status {service.returncode})")
    return service
