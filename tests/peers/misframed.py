#!/usr/bin/env python3
"""misframed.py: answers every request, but in a form no MCP client reads.
  --frame bom    each line as it should be, the first one after a UTF-8 byte
                 order mark (a Windows console set to UTF-8 writes one)
  --frame batch  each answer as a one-element JSON-RPC batch, [{...}]
  --frame lsp    LSP framing: "Content-Length: N" and a blank line, no newline
                 after the body
  --frame logs   log lines on stdout instead of answers
  --frame unended  each answer without its newline
"""
import argparse
import json

from _common import messages, send_raw

ap = argparse.ArgumentParser()
ap.add_argument("--frame", choices=["bom", "batch", "lsp", "logs", "unended"], required=True)
args = ap.parse_args()

first = True
for _, msg in messages():
    if msg is None or "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
        value = {"protocolVersion": version, "capabilities": {},
                 "serverInfo": {"name": "misframed", "version": "0.1.0"}}
    else:
        value = {}
    body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": value},
                      separators=(",", ":")).encode()
    if args.frame == "bom":
        send_raw((b"\xef\xbb\xbf" if first else b"") + body + b"\n")
    elif args.frame == "batch":
        send_raw(b"[" + body + b"]\n")
    elif args.frame == "lsp":
        send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    elif args.frame == "unended":
        send_raw(body)
    else:
        send_raw(b"[info] got %s\n" % msg["method"].encode())
    first = False
