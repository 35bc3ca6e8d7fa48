#!/usr/bin/python3
"""Socket activation and readiness of `heed serve`, driven as systemd drives it: systemd's own
systemd-socket-activate listens on SOCKET and starts the service on the first connection with the
socket as descriptor 3 (LISTEN_FDS/LISTEN_PID); NOTIFY_SOCKET is a datagram socket this script
reads, as the service manager would.

usage: socket-activation.py FOLDER HEED CLIENT RECORDING -- SERVE-ARGUMENTS...
Prints one line per step: the client's last line, each notification, the exit status."""
import os, signal, socket, subprocess, sys, time

folder, heed, client, recording = sys.argv[1:5]
serve = sys.argv[sys.argv.index("--") + 1:]
path = os.path.join(folder, "run", "heed.sock")
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.bind(os.path.join(folder, "notify.sock"))
notify.settimeout(60)
activator = subprocess.Popen(
    ["/usr/bin/systemd-socket-activate", "-l", path, "-E", "NOTIFY_SOCKET=" + os.path.join(folder, "notify.sock"),
     "-E", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent", heed, "serve"] + serve,
    stdout=open(os.path.join(folder, "events.jsonl"), "w"), stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
deadline = time.time() + 30
while not os.path.exists(path) and time.time() < deadline:
    time.sleep(0.05)
print("started before a client:", os.path.exists(os.path.join(folder, "events.jsonl")) and os.path.getsize(os.path.join(folder, "events.jsonl")) > 0, flush=True)
done = subprocess.run([client, "--socket", path, "transcribe", recording], capture_output=True, text=True)
print("client:", done.returncode, (done.stdout.strip().splitlines() or [""])[0], flush=True)
print("notified:", notify.recv(4096).decode().replace("\n", " | "), flush=True)
activator.send_signal(signal.SIGTERM)
print("exit:", activator.wait(timeout=30), flush=True)
print("notified:", notify.recv(4096).decode(), flush=True)
print("socket file kept:", os.path.exists(path), flush=True)
