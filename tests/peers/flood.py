#!/usr/bin/env python3
"""flood.py: a busy but healthy MCP stdio server, for backpressure and
per-request deadlines.

Answers initialize, ping and tools/list at once, also while it floods (a
thread floods; every write holds one lock, so lines never interleave).
  test/flood {"count": N, "size": S}
      answers {} first, then sends N notifications
      {"jsonrpc":"2.0","method":"test/seq","params":{"seq":I,"pad":"..."}}
      of about S bytes each, I = 0..N-1, then one
      {"jsonrpc":"2.0","method":"test/flood_done",
       "params":{"count":N,"bytes":B,"sha256":H}}
      where H is the SHA-256 of every flood line (newline included) in
      order and B their total length. With "log": true the lines are
      {"jsonrpc":"2.0","method":"notifications/message","params":
       {"level":"info","data":{"seq":I,"pad":"..."}}} (what an SDK
      session surfaces) and the last one's data is {"done":N,"sha256":H}.
  test/flood_status                    answers {"done": true once the last
                                       flood line is written, else false}
  tools/call {"name": "flood", "arguments": {"count": N, "size": S}}
                                       (not listed) answered {"content": []},
                                       then floods as test/flood with "log": true
  tools/call {"name": "hang"}          never answered (a hung tool call)
  tools/call {"name": "sleep", "arguments": {"ms": M}}
                                       answered {"slept": M} after M ms
  test/cancelled                       answers {"ids": [requestId of every
                                       notifications/cancelled received]}
  test/stderr_flood {"count": N, "size": S}
      answers {} first, then writes N lines of S bytes (S >= 11) to stderr,
      line I being b"E%08d " % I, then "e" up to a newline, then sends
      {"jsonrpc":"2.0","method":"test/stderr_done",
       "params":{"count":N,"bytes":N*S}}
"""
import hashlib
import json
import sys
import threading

from _common import IN, OUT, messages

lock = threading.Lock()
cancelled = []
flood_done = threading.Event()


def send(obj):
    data = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
    with lock:
        OUT.write(data)
        OUT.flush()


def result(msg, value):
    send({"jsonrpc": "2.0", "id": msg["id"], "result": value})


def flood(count, size, log=False):
    h = hashlib.sha256()
    total = 0
    if log:
        head = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"seq":'
        tail = b'"}}}\n'
    else:
        head = b'{"jsonrpc":"2.0","method":"test/seq","params":{"seq":'
        tail = b'"}}\n'
    pad = b"x" * max(0, size - len(head) - 24)
    batch = []
    for i in range(count):
        line = head + str(i).encode() + b',"pad":"' + pad + tail
        h.update(line)
        total += len(line)
        batch.append(line)
        if len(batch) == 64 or i == count - 1:
            data = b"".join(batch)
            batch.clear()
            with lock:
                OUT.write(data)
                OUT.flush()
    if log:
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": {"done": count, "sha256": h.hexdigest()}}})
    else:
        send({"jsonrpc": "2.0", "method": "test/flood_done",
              "params": {"count": count, "bytes": total, "sha256": h.hexdigest()}})
    flood_done.set()


def stderr_flood(count, size):
    err = sys.stderr.buffer
    fill = b"e" * (size - 11) + b"\n"
    batch = []
    for i in range(count):
        batch.append(b"E%08d " % i + fill)
        if len(batch) == 64 or i == count - 1:
            err.write(b"".join(batch))
            err.flush()
            batch.clear()
    send({"jsonrpc": "2.0", "method": "test/stderr_done",
          "params": {"count": count, "bytes": count * size}})


def sleep_then_answer(msg, ms):
    threading.Event().wait(ms / 1000)
    result(msg, {"slept": ms})


for _, msg in messages():
    if msg is None:
        continue
    method = msg.get("method")
    params = msg.get("params") or {}
    if "id" not in msg:
        if method == "notifications/cancelled":
            cancelled.append(params.get("requestId"))
        continue
    if method is None:
        continue
    if method == "initialize":
        result(msg, {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                     "capabilities": {"tools": {}},
                     "serverInfo": {"name": "flood", "version": "0.1.0"}})
    elif method == "ping":
        result(msg, {})
    elif method == "tools/list":
        result(msg, {"tools": [
            {"name": "hang", "inputSchema": {"type": "object"}},
            {"name": "sleep", "inputSchema": {"type": "object"}}]})
    elif method == "test/flood":
        result(msg, {})
        threading.Thread(target=flood, args=(int(params.get("count", 1)),
                                             int(params.get("size", 100)),
                                             bool(params.get("log"))),
                         daemon=True).start()
    elif method == "test/flood_status":
        result(msg, {"done": flood_done.is_set()})
    elif method == "tools/call" and params.get("name") == "flood":
        args = params.get("arguments") or {}
        result(msg, {"content": []})
        threading.Thread(target=flood, args=(int(args.get("count", 1)),
                                             int(args.get("size", 100)), True),
                         daemon=True).start()
    elif method == "test/stderr_flood":
        result(msg, {})
        threading.Thread(target=stderr_flood, args=(int(params.get("count", 1)),
                                                    max(11, int(params.get("size", 100)))),
                         daemon=True).start()
    elif method == "test/cancelled":
        result(msg, {"ids": cancelled})
    elif method == "tools/call" and params.get("name") == "hang":
        pass
    elif method == "tools/call" and params.get("name") == "sleep":
        ms = int((params.get("arguments") or {}).get("ms", 0))
        threading.Thread(target=sleep_then_answer, args=(msg, ms), daemon=True).start()
    else:
        send({"jsonrpc": "2.0", "id": msg["id"],
              "error": {"code": -32601, "message": "Method not found"}})
