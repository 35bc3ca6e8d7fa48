#!/usr/bin/env python3
"""Stream a 16 kHz mono 16-bit WAV file to heed serve: heed_transcribe.py FILE [SOCKET]"""
import base64, json, os, socket, sys, wave

runtime = os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}")
path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(runtime, "heed", "heed.sock")
connection = socket.socket(socket.AF_UNIX)
connection.connect(path)
lines = connection.makefile("rwb")

def send(message):
    lines.write(json.dumps(message).encode() + b"\n")
    lines.flush()

send({"id": 1, "type": "recognize", "source": "stream", "partialResults": True})
with wave.open(sys.argv[1]) as audio:
    if (audio.getframerate(), audio.getnchannels(), audio.getsampwidth()) != (16000, 1, 2):
        sys.exit("the file must be 16 kHz mono 16-bit: sox IN -r 16000 -c 1 -b 16 OUT.wav")
    while chunk := audio.readframes(1600):  # 0.1 s a message
        send({"id": 1, "type": "audio", "data": base64.b64encode(chunk).decode()})
send({"id": 1, "type": "finish"})

for line in lines:
    reply = json.loads(line)
    if reply["type"] == "partial":
        print("…", reply["transcription"])
    elif reply["type"] == "final":
        print(reply["transcription"], json.dumps(reply.get("intent")))
    elif reply["type"] == "error":
        sys.exit(f"{reply['status']}: {reply['message']}")
    elif reply.get("state") == "completed":
        break
