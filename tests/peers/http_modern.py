#!/usr/bin/env python3
"""http_modern.py PORT: a Streamable HTTP MCP server on protocol 2026-07-28
only (stdlib): no initialize, no session, no ping, no GET stream.

`initialize` and `ping` are refused with JSON-RPC -32601 (both are gone in
2026-07-28, SEP-2575); `server/discover` lists ["2026-07-28"] with the
server's name in the result's _meta; `tools/list` answers as an SSE stream
that opens with a `: keep-alive` comment; `tools/call` echoes. No
Mcp-Session-Id is ever given; GET and DELETE get 405. Every method that
reaches the server is appended to the --log file, one a line, so a test can
prove no ping arrived. Freeze it with SIGSTOP to make it stale.
Flags:
  --log PATH   where the methods go (default: nowhere)
"""
import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "2026-07-28"
ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--log")
args = ap.parse_args()
META = {"io.modelcontextprotocol/serverInfo": {"name": "http-modern", "version": "0.1.0"}}


def log(method):
    if args.log:
        with open(args.log, "a") as f:
            f.write(f"{method}\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body go in two writes: without this, Nagle holds the body for
    # the client's delayed ACK (~40 ms a request), as no real server does.
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def reply_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reply_sse(self, obj):
        body = b": keep-alive\n\nevent: message\ndata: " + json.dumps(obj).encode() + b"\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_DELETE = refuse

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, mid = msg.get("method"), msg.get("id")
        log(method)
        if mid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif method == "server/discover":
            self.reply_json({"jsonrpc": "2.0", "id": mid, "result": {
                "supportedVersions": [VERSION], "capabilities": {"tools": {}},
                "resultType": "complete", "_meta": META}})
        elif method == "tools/list":
            self.reply_sse({"jsonrpc": "2.0", "id": mid, "result": {
                "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
                "resultType": "complete"}})
        elif method == "tools/call":
            meta = (msg.get("params") or {}).get("_meta") or {}
            self.reply_json({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(meta)}],
                "resultType": "complete"}})
        else:
            self.reply_json({"jsonrpc": "2.0", "id": mid,
                             "error": {"code": -32601, "message": "Method not found"}})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
