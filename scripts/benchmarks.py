"""What Heed's benchmark scripts share: a work folder, word errors, Debian's LibriVox sentences,
and timing one utterance through PocketSphinx 5's Python decoder. Scripts import it from their own folder
(`sys.path.insert(0, <scripts>)`); it needs nothing outside Python's standard library."""
import atexit, os, shutil, tempfile, time, wave

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"


def work_folder(prefix):
    """A temporary folder for the run, removed when the script ends; KEEP=1 keeps it (as for
    scripts/listen-benchmark.sh)."""
    work = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("KEEP"):
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    return work


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


def decode_timed(decoder, samples):
    """One whole utterance through a PocketSphinx 5 decoder: its hypothesis and CPU seconds."""
    started = time.process_time()
    decoder.start_utt()
    decoder.process_raw(samples, full_utt=True)
    decoder.end_utt()
    cpu = time.process_time() - started
    return (decoder.hyp().hypstr if decoder.hyp() else ""), cpu


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
