#!/usr/bin/env python3
"""unsupported.py: answers ping with JSON-RPC error -32601 (Method not
found), everything else like a normal server; `echo` returns its params.
Counts the pings it got: `test/pings` answers {"pings": N}.
Flags:
  --code C --message M   answer ping with this error instead (-32000
                         "busy": a server that refuses a ping it knows)
"""
import argparse

from _common import answer_standard, error, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--code", type=int, default=-32601)
ap.add_argument("--message", default="Method not found")
args = ap.parse_args()
pings = 0
for _, msg in messages():
    if is_request(msg, "ping"):
        pings += 1
        error(msg, args.code, args.message)
    elif is_request(msg, "test/pings"):
        result(msg, {"pings": pings})
    elif is_request(msg, "echo"):
        result(msg, msg.get("params") or {})
    elif not answer_standard(msg, "unsupported") and is_request(msg):
        error(msg, -32601, "Method not found")
