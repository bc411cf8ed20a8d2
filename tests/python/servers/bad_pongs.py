"""A stdio MCP server whose pongs are wrong.

Usage: bad_pongs.py error|invalid. `error`: ping gets -32603 Internal error;
`invalid`: ping gets {"result": "pong"} (not an object). Everything else is
answered like a normal server (initialize, tools/list, -32601).
"""

import json
import sys

mode = sys.argv[1]
for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    if "id" not in msg or "method" not in msg:
        continue
    out = {"jsonrpc": "2.0", "id": msg["id"]}
    if msg["method"] == "initialize":
        out["result"] = {"protocolVersion": "2025-11-25", "capabilities": {},
                         "serverInfo": {"name": "bad-pongs", "version": "0"}}
    elif msg["method"] == "ping" and mode == "error":
        out["error"] = {"code": -32603, "message": "Internal error"}
    elif msg["method"] == "ping":
        out["result"] = "pong"
    else:
        out["error"] = {"code": -32601, "message": "Method not found"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
