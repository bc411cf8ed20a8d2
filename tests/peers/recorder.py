#!/usr/bin/env python3
"""recorder.py: a well-behaved server that appends every message it
receives to a log file, one JSON line each: {"pid": P, "msg": <message>},
so a test can count what reached which server process (reconnect: an
in-flight request must reach the new server zero times).
tools/call answers {"content":[{"type":"text","text":"<pid>"}]} at once,
except the tool "hang", which is never answered.
Flags:
  --log PATH       the log file (required)
  --once MARKER    serve only if MARKER does not exist yet (and create it);
                   otherwise exit 4 at once: every respawn fails
"""
import argparse
import json
import os
import sys

from _common import answer_standard, error, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--log", required=True)
ap.add_argument("--once")
args = ap.parse_args()

if args.once:
    try:
        os.close(os.open(args.once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        sys.exit(4)

log = open(args.log, "a", buffering=1)
for raw, msg in messages():
    log.write(json.dumps({"pid": os.getpid(), "msg": msg}) + "\n")
    if answer_standard(msg, "recorder"):
        continue
    if is_request(msg, "tools/call"):
        if (msg.get("params") or {}).get("name") == "hang":
            continue
        result(msg, {"content": [{"type": "text", "text": str(os.getpid())}]})
    elif is_request(msg):
        error(msg, -32601, "Method not found")
