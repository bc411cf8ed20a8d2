#!/usr/bin/env python3
"""burn.py: a single-threaded server whose `tools/call` burns CPU
synchronously (a busy loop, reading nothing meanwhile) for `seconds` from
its arguments (default 6), then answers {"burned": seconds}. Everything
else, ping included, is answered normally, in order, once it is free.
"""
import time

from _common import answer_standard, is_request, messages, result

for _, msg in messages():
    if is_request(msg, "tools/call"):
        args = (msg.get("params") or {}).get("arguments") or {}
        seconds = float(args.get("seconds", 6))
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        result(msg, {"content": [], "burned": seconds})
        continue
    answer_standard(msg, "burn")
