#!/usr/bin/env python3
"""http_sse.py PORT: a Streamable HTTP MCP server (stdlib) whose only sign of
life during a long request is SSE comment keep-alives.

`initialize` is answered as JSON (with an Mcp-Session-Id); a `tools/call`
answers with an SSE stream that carries nothing but `: keep-alive` comment
lines every `--every` seconds (default 0.3) for `--seconds` (default 5),
then the result. Pings, and any other request that arrives while the call
runs, are held unanswered until that call is over (the server's loop is
busy), so only the comments prove it alive.
Flags:
  --no-comments   send no comments: the stream is silent until the result
"""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--every", type=float, default=0.3)
ap.add_argument("--seconds", type=float, default=5.0)
ap.add_argument("--no-comments", action="store_true")
args = ap.parse_args()

call_over = threading.Event()
call_running = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body go in two writes: without this, Nagle holds the body for
    # the client's delayed ACK (~40 ms a request), as no real server does.
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def reply_json(self, obj, headers=()):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif method == "initialize":
            version = msg["params"]["protocolVersion"]
            self.reply_json({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-sse", "version": "0.1.0"}}},
                [("Mcp-Session-Id", "sse-session-1")])
        elif method == "ping":
            call_over.wait(30)
            self.reply_json({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif method == "tools/call":
            call_running.set()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            start = time.monotonic()
            while time.monotonic() - start < args.seconds:
                time.sleep(min(args.every, args.seconds))
                if not args.no_comments:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
            answer = {"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": "done"}]}}
            self.wfile.write(b"event: message\ndata: " + json.dumps(answer).encode() + b"\n\n")
            self.wfile.flush()
            call_over.set()
            self.close_connection = True
        else:
            if call_running.is_set():
                call_over.wait(30)
            self.reply_json({"jsonrpc": "2.0", "id": mid,
                             "error": {"code": -32601, "message": "Method not found"}})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
