#!/usr/bin/env python3
"""unsupported.py: answers ping with JSON-RPC error -32601 (Method not
found), everything else like a normal server; `echo` returns its params.
Counts the pings it got: `test/pings` answers {"pings": N}.
"""
from _common import answer_standard, error, is_request, messages, result

pings = 0
for _, msg in messages():
    if is_request(msg, "ping"):
        pings += 1
        error(msg, -32601, "Method not found")
    elif is_request(msg, "test/pings"):
        result(msg, {"pings": pings})
    elif is_request(msg, "echo"):
        result(msg, msg.get("params") or {})
    elif not answer_standard(msg, "unsupported") and is_request(msg):
        error(msg, -32601, "Method not found")
