#!/usr/bin/env python3
"""pinger.py REPORT N INTERVAL: a stdio MCP server that pings its client.

On the client's notification ``test/start_pinging`` it sends N pings, one
every INTERVAL seconds, whether or not the earlier ones were answered, and
writes one line per answered ping to REPORT (a FIFO the test reads while its
event loop is blocked): ``pong ID RTT_MS``, then ``done`` once all N are
answered. It answers initialize and ping itself.
"""
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
from _common import answer_standard, error, is_request, messages, send  # noqa: E402

report_path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
# The test opened the read end first, so this does not block.
report = open(report_path, "w", buffering=1)
lock = threading.Lock()
sent: dict[str, float] = {}


def pinger() -> None:
    for i in range(1, count + 1):
        with lock:
            sent[f"p{i}"] = time.monotonic()
            send({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
        time.sleep(interval)  # the pinger's cadence, not a wait for the client


answered = 0
for _, msg in messages():
    if msg is not None and msg.get("method") == "test/start_pinging":
        threading.Thread(target=pinger, daemon=True).start()
        continue
    if msg is not None and "method" not in msg and str(msg.get("id", "")).startswith("p"):
        with lock:
            t0 = sent.pop(msg["id"], None)
        if t0 is not None and "result" in msg:
            answered += 1
            report.write(f"pong {msg['id']} {(time.monotonic() - t0) * 1000:.1f}\n")
            if answered == count:
                report.write("done\n")
        continue
    with lock:
        if answer_standard(msg, "pinger"):
            continue
        if is_request(msg):
            error(msg, -32601, "Method not found")
