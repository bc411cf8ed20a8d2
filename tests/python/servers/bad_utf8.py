"""A stdio MCP server whose initialize answer has bytes that are not UTF-8
(in serverInfo.name); it answers ping too."""

import json
import sys

for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    rid = json.dumps(msg.get("id")).encode()
    if msg.get("method") == "initialize":
        sys.stdout.buffer.write(
            b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"serverInfo":{"name":"bad\xff\xfename","version":"0"}}}\n')
    elif msg.get("method") == "ping":
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":' + rid + b',"result":{}}\n')
    sys.stdout.flush()
