#!/usr/bin/env python3
"""ping_flood.py: sends many pings to the client (ids 1..N).
Flags:
  --count N     pings to send (default 20000)
  --no-read     never read stdin (our pongs pile up), and never exit
Without --no-read a reader thread counts the pongs; when all N arrived it
writes {"jsonrpc":"2.0","method":"notifications/flood_done",
"params":{"answered":N}} and then serves normally.
"""
import argparse
import json
import threading
import time

from _common import messages, send, send_raw, serve

ap = argparse.ArgumentParser()
ap.add_argument("--count", type=int, default=20000)
ap.add_argument("--no-read", action="store_true")
args = ap.parse_args()

lock = threading.Lock()


def reader():
    answered = 0
    for _, msg in messages():
        if msg is not None and "method" not in msg and "result" in msg:
            answered += 1
            if answered == args.count:
                with lock:
                    send({"jsonrpc": "2.0", "method": "notifications/flood_done",
                          "params": {"answered": answered}})
                break
    serve("ping_flood")


if not args.no_read:
    threading.Thread(target=reader, daemon=True).start()
batch = []
for i in range(1, args.count + 1):
    batch.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"},
                            separators=(",", ":")).encode() + b"\n")
    if len(batch) == 500 or i == args.count:
        with lock:
            send_raw(b"".join(batch))
        batch = []
while True:
    time.sleep(1000)
