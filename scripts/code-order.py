#!/usr/bin/env python3
"""Writes contrib/code-order/heed.txt: the functions of `heed` that the listener runs.

usage: scripts/code-order.py [HEED_BINARY]   (default .build/release/heed)

The listener hears synthetic commands that start and cancel timers and workouts (espeak-ng,
as scripts/listen-benchmark.sh does) under valgrind's callgrind, which records every function
that runs. Their sections (`.text.NAME`: Package.swift compiles Heed's modules with
-function-sections in release) are written one a line, sorted, for the release link of `heed`
to place together. Run it on a release build after changes to the listener's path, then link
again (`rm .build/release/heed` first: SwiftPM does not watch the list); the order changes no
behaviour, only which pages of the binary a running listener holds.
Needs valgrind, espeak-ng and sox (Debian packages of those names).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "contrib", "code-order", "heed.txt")
COMMANDS = ["set a timer for ten minutes", "what timers are running", "cancel the timer",
            "start a run workout", "pause the workout", "end the workout"]
VOICES = ["en-us", "en-gb"]


def need(tool):
    if shutil.which(tool) is None:
        sys.exit(f"code-order.py: {tool} is not installed (apt-get install {tool})")


def workload(heed, work):
    """The listener's input and a fresh state in which the shipped apps are authorized."""
    state, config = os.path.join(work, "state"), os.path.join(work, "config.json")
    with open(config, "w") as handle:
        handle.write('{"spokenResponses": false}\n')
    for app in ("org.heed.timer", "org.heed.media", "org.heed.workout", "org.heed.notes"):
        subprocess.run([heed, "auth", "grant", app, "--state-dir", state, "--config", config],
                       check=True, stdout=subprocess.DEVNULL)
    gap = os.path.join(work, "gap.wav")
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", gap, "synth", "1.5",
                    "whitenoise", "vol", "0.002"], check=True)
    parts = [gap]
    for voice in VOICES:
        for number, command in enumerate(COMMANDS):
            raw, wav = os.path.join(work, f"{voice}-{number}.raw.wav"), os.path.join(work, f"{voice}-{number}.wav")
            subprocess.run(["espeak-ng", "-v", voice, "-w", raw, command], check=True)
            subprocess.run(["sox", raw, "-r", "16000", "-c", "1", "-b", "16", wav], check=True)
            parts += [wav, gap]
    commands = os.path.join(work, "commands.wav")
    subprocess.run(["sox", *parts, commands], check=True)
    return commands, ["--state-dir", state, "--data-dir", os.path.join(work, "data"), "--config", config]


def executed(profile, binary_name):
    """Names of the functions callgrind saw run in the object called binary_name."""
    objects, functions, names = {}, {}, set()
    current = None
    pattern = re.compile(r"(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")
    with open(profile, errors="replace") as handle:
        for line in handle:
            match = pattern.match(line.rstrip("\n"))
            if not match:
                continue
            kind, number, name = match.groups()
            table = objects if kind.endswith("ob") else functions
            if name is not None and number not in table:
                table[number] = name
            if kind == "ob":
                current = objects.get(number)
            elif kind == "fn" and current is not None and os.path.basename(current) == binary_name:
                names.add(functions[number])
    # callgrind names a function's recursive calls NAME'2, NAME'3 …; unknown code is an address.
    return {re.sub(r"'\d+$", "", name) for name in names if not name.startswith("0x")}


def main():
    heed = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, ".build", "release", "heed"))
    if not os.access(heed, os.X_OK):
        sys.exit(f"code-order.py: no heed executable at {heed} (swift build -c release --static-swift-stdlib)")
    for tool in ("valgrind", "espeak-ng", "sox", "objcopy"):
        need(tool)
    # valgrind cannot read the DWARF 5 of this toolchain: it runs a copy without debug
    # information, beside the original so that the plugins are found.
    copy = heed + "-code-order"
    subprocess.run(["objcopy", "--strip-debug", heed, copy], check=True)
    try:
        with tempfile.TemporaryDirectory() as work:
            commands, options = workload(heed, work)
            profile = os.path.join(work, "callgrind.out")
            print("code-order.py: the listener under callgrind (a few minutes)", file=sys.stderr)
            run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}",
                                  copy, "listen", "--input", commands, "--json", "--reject-below", "0.3", *options],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"code-order.py: the listener failed under valgrind:\n{run.stderr[-2000:]}")
            handled = run.stdout.count('"event":"handle"')
            names = executed(profile, os.path.basename(copy))
    finally:
        os.remove(copy)
    if handled == 0 or not names:
        sys.exit(f"code-order.py: the run handled {handled} commands and ran {len(names)} functions: nothing written")
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT + ".tmp", "w") as handle:
        handle.writelines(f".text.{name}\n" for name in sorted(names))
    os.replace(OUTPUT + ".tmp", OUTPUT)
    print(f"code-order.py: {len(names)} functions ({handled} commands handled) → {os.path.relpath(OUTPUT, REPO)}; "
          "link again: rm .build/release/heed && swift build -c release --static-swift-stdlib", file=sys.stderr)


if __name__ == "__main__":
    main()
