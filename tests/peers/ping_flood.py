#!/usr/bin/env python3
"""ping_flood.py: sends many pings to the client (ids 1..N).
Flags:
  --count N     pings to send (default 20000)
  --no-read     never read stdin (our pongs pile up), and never exit
  --window W    with reading: at most W pings unanswered at once (default
                1000), a fast but not abusive pinger
Without --no-read a reader thread answers the client's pings and counts
the pongs; when all N arrived it
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
ap.add_argument("--window", type=int, default=1000)
args = ap.parse_args()

lock = threading.Lock()
answered_cv = threading.Condition()
answered = 0


def reader():
    global answered
    for _, msg in messages():
        if msg is not None and msg.get("method") == "ping" and "id" in msg:
            # The client's own pings are answered while we flood, as a
            # real server's loop would.
            with lock:
                send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
            continue
        if msg is not None and "method" not in msg and "result" in msg:
            with answered_cv:
                answered += 1
                answered_cv.notify()
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
        if not args.no_read:
            with answered_cv:
                answered_cv.wait_for(lambda: i - len(batch) - answered < args.window)
        with lock:
            send_raw(b"".join(batch))
        batch = []
while True:
    time.sleep(1000)
