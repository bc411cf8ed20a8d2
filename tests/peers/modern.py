#!/usr/bin/env python3
"""modern.py: a protocol 2026-07-28 server (no handshake, no ping).

Answers `server/discover` with supportedVersions ["2026-07-28"] and its name
in the result's _meta, refuses `ping` with -32601 (the method is gone in
2026-07-28), answers tools/list, and runs two tools:
  echo   returns its arguments;
  pid    returns the server's process id;
  meta   returns the request's params._meta as JSON text (what the
         client's envelope put there, and the application's own keys);
  busy   stops reading for `seconds` (default 3) while it sends a progress
         notification every `every` seconds (default 0.25) when the request
         asked for progress, then answers: a server busy on one long call.
Flags:
  --name NAME         the server's name (default "modern")
  --versions V[,V]    the versions server/discover lists (default 2026-07-28)
"""
import argparse
import json
import os
import time

from _common import error, is_request, messages, result, send

VERSION = "2026-07-28"
ap = argparse.ArgumentParser()
ap.add_argument("--name", default="modern")
ap.add_argument("--versions", default=VERSION)
args = ap.parse_args()

META = {"io.modelcontextprotocol/serverInfo": {"name": args.name, "version": "0.1.0"}}
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "pid", "busy")]


def busy(msg, arguments):
    token = ((msg.get("params") or {}).get("_meta") or {}).get("progressToken")
    seconds = float(arguments.get("seconds", 3))
    every = float(arguments.get("every", 0.25))
    start = time.monotonic()
    step = 0
    while time.monotonic() - start < seconds:
        time.sleep(every)
        step += 1
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": step}})
    result(msg, {"content": [{"type": "text", "text": f"busy {seconds:g} s"}],
                 "resultType": "complete"})


for _, msg in messages():
    if not is_request(msg):
        continue
    method = msg["method"]
    if method == "server/discover":
        result(msg, {"supportedVersions": args.versions.split(","), "capabilities": {"tools": {}},
                     "cacheScope": "private", "ttlMs": 0,
                     "resultType": "complete", "_meta": META})
    elif method == "tools/list":
        result(msg, {"tools": TOOLS, "resultType": "complete", "cacheScope": "private",
                     "ttlMs": 0})
    elif method == "tools/call":
        params = msg.get("params") or {}
        arguments = params.get("arguments") or {}
        if params.get("name") == "busy":
            busy(msg, arguments)
        elif params.get("name") == "meta":
            result(msg, {"content": [{"type": "text", "text": json.dumps(params.get("_meta"))}],
                         "resultType": "complete"})
        elif params.get("name") == "pid":
            result(msg, {"content": [{"type": "text", "text": str(os.getpid())}],
                         "resultType": "complete"})
        else:
            result(msg, {"content": [{"type": "text", "text": repr(arguments)}],
                         "resultType": "complete"})
    else:
        error(msg, -32601, "Method not found")
