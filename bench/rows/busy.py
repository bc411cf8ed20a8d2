"""Server pings answered while the client's event loop is blocked."""
from __future__ import annotations

import os
import tempfile
from typing import Any

import method
import report

KEY = "busy"
TITLE = "Server pings answered while the client is busy"
BLOCK_S = 2.0

LABELS = {
    "py-api": "mcpping Python API (`mcpping.connect`)",
    "py-sdk-mcpping": "Python SDK session over `mcpping.sdk.stdio_client`",
    "py-sdk": "Python SDK (`ClientSession`, its stdio_client)",
    "node-api": "mcpping Node API (`mcpping.connect`)",
    "ts-sdk-mcpping": "TS SDK `Client` over `mcpping.StdioClientTransport`",
    "ts-sdk": "TS SDK (`Client`, its StdioClientTransport)",
}
MODES = {"py-api": ("py", "api"), "py-sdk-mcpping": ("py", "sdk-mcpping"), "py-sdk": ("py", "sdk"),
         "node-api": ("node", "api"), "ts-sdk-mcpping": ("node", "sdk-mcpping"),
         "ts-sdk": ("node", "sdk")}


def once(ctx: Any, name: str) -> dict[str, Any]:
    lang, mode = MODES[name]
    with tempfile.TemporaryDirectory(prefix="mcpping-bench-") as tmp:
        logf = os.path.join(tmp, "server.log")
        script = os.path.join(ctx.clients, f"busy_client.{'py' if lang == 'py' else 'js'}")
        argv = [ctx.py if lang == "py" else ctx.node, script, mode, logf, "0.5", "1.5",
                str(BLOCK_S)]
        win = method.run_once(argv, 60, ctx.root, env=dict(os.environ, PYTHON=ctx.py))
        sent: dict[int, int] = {}
        answered: dict[int, int] = {}
        with open(logf) as f:
            for line in f:
                kind, seq, t = line.split()
                (sent if kind == "S" else answered)[int(seq)] = int(t)
    b0, b1 = win["block_start_ns"], win["block_end_ns"]
    # Pings sent in the last 50 ms of the block could be answered just after it
    # ends even when answered at once: leave them out of the count.
    during = [q for q, t in sent.items() if b0 <= t < b1 - 50_000_000]
    lat = sorted((answered[q] - sent[q]) / 1e6 for q in during if q in answered)
    return {"sent_during": len(during),
            "answered_during": sum(1 for q in during if q in answered and answered[q] < b1),
            "answered_eventually": len(lat),
            "lat_p50_ms": method.pct(lat, 50) if lat else None,
            "lat_max_ms": lat[-1] if lat else None}


def run(ctx: Any) -> dict[str, Any]:
    rounds = ctx.pick(3, 1)
    names = list(LABELS)
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rnd in range(rounds):
        ctx.log(f"round {rnd + 1}/{rounds}")
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            runs[name].append(once(ctx, name))
    series = {n: method.summary(rs) for n, rs in runs.items()}
    figures = {f"{n} answered during block": {
        "label": f"{LABELS[n]}: pings answered during the block",
        "value": series[n]["answered_during"]["median"]} for n in names}
    return {"rounds": rounds, "series": series, "figures": figures, "runs": runs}


def render(res: dict[str, Any]) -> list[str]:
    L = [f"The server (`bench/clients/ping_server.py`) pings the client every 100 ms; the client "
         f"blocks its event loop for {BLOCK_S:g} s (Python: `time.sleep` inside an asyncio "
         "callback; Node: a busy loop). Measured from the server side on CLOCK_MONOTONIC: the "
         "pings sent during the block (up to 50 ms before its end), how many were answered "
         "before the block ended, and their latency. Medians (and ranges) over "
         f"{res['rounds']} run(s) of each client, interleaved.", ""]
    rows = []
    for n, s in res["series"].items():
        rows.append([LABELS[n], report.iqm(s["sent_during"], 0), report.iqm(s["answered_during"], 0),
                     report.iqm(s["answered_eventually"], 0), report.iqm(s["lat_p50_ms"], 2),
                     report.iqm(s["lat_max_ms"], 2)])
    L += report.table(["client", "sent during block", "answered during block",
                       "answered eventually", "latency p50 (ms)", "latency max (ms)"], rows)
    return L
