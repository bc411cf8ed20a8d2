#!/usr/bin/env python3
"""drop_pings.py: silently ignores ping requests; answers everything else
(initialize, tools/list, `echo` returns its params)."""
from _common import answer_standard, error, is_request, messages, result

for _, msg in messages():
    if is_request(msg, "ping"):
        continue
    if is_request(msg, "echo"):
        result(msg, msg.get("params") or {})
    elif not answer_standard(msg, "drop_pings") and is_request(msg):
        error(msg, -32601, "Method not found")
