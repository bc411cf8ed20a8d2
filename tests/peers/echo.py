#!/usr/bin/env python3
"""echo.py: a well-behaved MCP stdio server.

Answers initialize, ping, tools/list; `echo` and `tools/call` return their
params unchanged as the result (compact JSON, so a compact request comes
back byte for byte). Test helpers:
  test/ping_me {"count": N}  sends N pings to the client (ids "srv-1"..),
                             then answers {"sent": N}
  test/pongs                 answers {"pongs": pongs received from the client}
  test/ask_me {"method": M}  sends the client a request M (default roots/list,
                             id "ask-N") and answers {"answer": the client's
                             answer} when it comes (never, if it never does)
  test/stderr {"text": T}    writes T to stderr, answers {}
  test/spawn_child           starts a grandchild (sleep 1000) in our process
                             group, answers {"pid": its pid}
  test/env                   answers {"env": the environment we started in}
Flags:
  --stderr TEXT   write TEXT and a newline to stderr at start
  --name NAME     serverInfo name (default "echo")
  --delay SEC     wait SEC before handling each message (answers arrive
                  after the client's loop turn that wrote the request)
"""
import argparse
import os
import subprocess
import sys
import time

from _common import answer_standard, is_request, messages, result, send

ap = argparse.ArgumentParser()
ap.add_argument("--stderr")
ap.add_argument("--name", default="echo")
ap.add_argument("--delay", type=float, default=0.0)
args = ap.parse_args()
if args.stderr:
    sys.stderr.write(args.stderr + "\n")
    sys.stderr.flush()

pongs = 0
children = []
asked = {}  # our request's id -> the test/ask_me waiting for its answer
asks = 0
for raw, msg in messages():
    if msg is None:
        continue
    if args.delay:
        time.sleep(args.delay)
    if "method" not in msg and "result" in msg and str(msg.get("id", "")).startswith("srv-"):
        pongs += 1
        continue
    if "method" not in msg and msg.get("id") in asked:
        result(asked.pop(msg["id"]), {"answer": msg})
        continue
    if answer_standard(msg, args.name):
        continue
    if not is_request(msg):
        continue
    method, params = msg["method"], msg.get("params")
    if method in ("echo", "tools/call"):
        result(msg, params if params is not None else {})
    elif method == "test/ping_me":
        n = int((params or {}).get("count", 1))
        for i in range(1, n + 1):
            send({"jsonrpc": "2.0", "id": "srv-%d" % i, "method": "ping"})
        result(msg, {"sent": n})
    elif method == "test/ask_me":
        asks += 1
        rid = "ask-%d" % asks
        asked[rid] = msg
        send({"jsonrpc": "2.0", "id": rid, "method": (params or {}).get("method", "roots/list")})
    elif method == "test/pongs":
        result(msg, {"pongs": pongs})
    elif method == "test/error":
        # Answers with the error it is given: a server may say anything,
        # mcpping's own words included.
        send({"jsonrpc": "2.0", "id": msg["id"], "error": (params or {}).get("error")})
    elif method == "test/stderr":
        sys.stderr.write((params or {}).get("text", ""))
        sys.stderr.flush()
        result(msg, {})
    elif method == "test/env":
        result(msg, {"env": dict(os.environ)})
    elif method == "test/spawn_child":
        child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL)
        children.append(child)
        result(msg, {"pid": child.pid})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"],
              "error": {"code": -32601, "message": "Method not found"}})
