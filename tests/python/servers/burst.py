"""A stdio MCP server that answers the handshake and, on a `test/burst`
request {"n": N, "odd_id": bool}, sends N notifications `test/seq` {"i": k}
and then exits without answering (its stdout closes, the process ends).

With "odd_id", a reply whose id is a JSON array holding the burst request's
own id (unhashable in Python) comes halfway through the burst; with "deep",
a notification nested 100000 arrays deep (past Python's recursion limit).
Hostile frames that must not cost the client anything that follows them.
"""

import json
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


for raw in sys.stdin:
    msg = json.loads(raw)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "burst", "version": "0"}}})
        sys.stdout.flush()
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        sys.stdout.flush()
    elif method == "test/burst":
        n = msg["params"]["n"]
        for i in range(n):
            if msg["params"].get("odd_id") and i == n // 2:
                send({"jsonrpc": "2.0", "id": [msg["id"]], "result": {}})
            if msg["params"].get("deep") and i == n // 2:
                depth = 100_000
                sys.stdout.write('{"jsonrpc":"2.0","method":"test/deep","params":{"v":'
                                 + "[" * depth + "]" * depth + '},"mcpping-":1}\n')
            send({"jsonrpc": "2.0", "method": "test/seq", "params": {"i": i}})
        sys.stdout.flush()
        break
