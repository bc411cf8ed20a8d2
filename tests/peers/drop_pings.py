#!/usr/bin/env python3
"""drop_pings.py: silently ignores ping requests; answers everything else
(initialize, tools/list, `echo` returns its params).
Flags:
  --answer-every N   answer every Nth ping after all (the 2nd, 4th... for 2)
"""
import argparse

from _common import answer_standard, error, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--answer-every", type=int, default=0)
args = ap.parse_args()

pings = 0
for _, msg in messages():
    if is_request(msg, "ping"):
        pings += 1
        if args.answer_every and pings % args.answer_every == 0:
            result(msg, {})
        continue
    if is_request(msg, "echo"):
        result(msg, msg.get("params") or {})
    elif not answer_standard(msg, "drop_pings") and is_request(msg):
        error(msg, -32601, "Method not found")
