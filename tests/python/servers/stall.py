"""A stdio MCP server that answers initialize and ping but never answers
any other request (a stuck tool call), for liveness-laundering tests."""

import json
import sys

for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "serverInfo": {"name": "stall", "version": "0"}}
    elif msg["method"] == "ping":
        result = {}
    else:
        continue  # stuck forever
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
