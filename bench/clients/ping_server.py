"""The busy-client row's server: an MCP stdio server that pings its client every 100 ms.

    python3 ping_server.py OUT_FILE [--interval 0.1] [--duration 4]

Answers initialize, ping and tools/list. From notifications/initialized on
it sends {"method":"ping"} every INTERVAL seconds for DURATION seconds and
appends to OUT_FILE one line per ping sent ("S seq t_ns") and per answer
("A seq t_ns"), t_ns on CLOCK_MONOTONIC (the clock Python's
time.monotonic_ns and Node's process.hrtime read), flushed at once so a
killed server still leaves its log.
"""
import json
import sys
import threading
import time

out = open(sys.argv[1], "a", buffering=1)
interval = 0.1
duration = 4.0
args = sys.argv[2:]
for i, a in enumerate(args):
    if a == "--interval":
        interval = float(args[i + 1])
    elif a == "--duration":
        duration = float(args[i + 1])

lock = threading.Lock()
started = threading.Event()
stdout = sys.stdout.buffer


def send(obj):
    data = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
    with lock:
        stdout.write(data)
        stdout.flush()


def reader():
    for raw in sys.stdin.buffer:
        t = time.monotonic_ns()
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if method is None:
            rid = msg.get("id")
            if isinstance(rid, str) and rid.startswith("srv-") and "result" in msg:
                out.write(f"A {rid[4:]} {t}\n")
            continue
        if "id" not in msg:
            if method == "notifications/initialized":
                started.set()
            continue
        if method == "initialize":
            version = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": version, "capabilities": {},
                "serverInfo": {"name": "ping-server", "version": "0.1.0"}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": "Method not found"}})
    started.set()
    done.set()


done = threading.Event()
threading.Thread(target=reader, daemon=True).start()
if started.wait(30):
    start = time.monotonic()
    seq = 0
    while time.monotonic() - start < duration and not done.is_set():
        seq += 1
        t = time.monotonic_ns()
        out.write(f"S {seq} {t}\n")
        send({"jsonrpc": "2.0", "id": f"srv-{seq}", "method": "ping"})
        next_at = start + seq * interval
        time.sleep(max(0.0, next_at - time.monotonic()))
# Keep serving until the client hangs up.
done.wait()
