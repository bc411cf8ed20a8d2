"""Time from a server crash to the first successful call after it: the
official SDK sessions over mcpping's reconnecting transport against an
application that rebuilds the SDK session by hand."""
from __future__ import annotations

import os
import statistics
from typing import Any

import method
import report

KEY = "reconnect"
TITLE = "Crash to the first successful call after it"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
LABELS = {
    "py-mcpping": "Python `ClientSession` over `mcpping.sdk.stdio_peer(reconnect=...)`",
    "py-sdk": "Python `ClientSession` over `mcp.client.stdio`, rebuilt by hand",
    "node-mcpping": "TS `Client` over `mcpping.StdioClientTransport({reconnect})`",
    "ts-sdk": "TS `Client` over the SDK's `StdioClientTransport`, rebuilt by hand",
}
PAIRS = [("py-mcpping/py-sdk", "py-mcpping", "py-sdk", "Python"),
         ("node-mcpping/ts-sdk", "node-mcpping", "ts-sdk", "Node")]


def run(ctx: Any) -> dict[str, Any]:
    rounds, cycles = ctx.rounds(8, 2), ctx.pick(20, 3)
    r = ctx.programs["responder"]
    py = os.path.join(ctx.clients, "reconnect.py")
    js = os.path.join(ctx.clients, "reconnect.js")
    argv = {"py-mcpping": [ctx.py, py, "mcpping", r, str(cycles)],
            "py-sdk": [ctx.py, py, "sdk", r, str(cycles)],
            "node-mcpping": [ctx.node, js, "mcpping", r, str(cycles)],
            "ts-sdk": [ctx.node, js, "sdk", r, str(cycles)]}
    ctx.log(f"{rounds} rounds of {cycles} crashes per series, the order rotating")
    samples: dict[str, list[float]] = {n: [] for n in LABELS}
    failures: dict[str, list[int]] = {n: [] for n in LABELS}
    per_round: dict[str, list[float]] = {n: [] for n in LABELS}
    names = list(LABELS)
    for i in range(rounds):
        for name in names[i % len(names):] + names[:i % len(names)]:
            out = method.run_once(argv[name], timeout=120, cwd=ctx.root)
            samples[name] += out["samples_ms"]
            failures[name].append(out["failures"])
            per_round[name].append(statistics.median(out["samples_ms"]))
    samples, failures = ctx.keep("samples", samples), ctx.keep("failures", failures)
    per_round = ctx.keep("per_round", per_round)
    series = {}
    for name, xs in samples.items():
        xs = sorted(xs)
        series[name] = {"ms": method.spread(xs), "p90_ms": method.pct(xs, 90), "max_ms": xs[-1],
                        "n": len(xs), "failed_calls": sum(failures[name])}
    ratios = {}
    for key, num, den, lang in PAIRS:
        rs = [a / b for a, b in zip(per_round[num], per_round[den]) if b]
        s = method.spread(rs)
        ratios[key] = {"value": series[num]["ms"]["iqm"] / series[den]["ms"]["iqm"],
                       "q1": s["q1"], "q3": s["q3"], "rounds": len(rs),
                       "label": f"{lang} crash to call, mcpping reconnect ÷ rebuilt by hand"}
    figures = {f"{n} crash to call": {"label": f"{LABELS[n]}: crash to call (ms)",
                                      "value": series[n]["ms"]["iqm"]} for n in LABELS}
    return {"rounds": method.rounds(per_round), "cycles": cycles, "series": series,
            "ratios": ratios, "figures": figures}


def render(res: dict[str, Any]) -> list[str]:
    L = ["After the handshake and one call, the client SIGKILLs the server and calls "
         "`tools/call` (the responder's `blob`, 64 bytes) until a call succeeds; the figure is "
         "the time from the kill to that success. mcpping reconnects underneath the same SDK "
         "session (backoff 1 ms, no jitter, the process's retry budget widened to let every "
         "crash through, so the figure is mcpping's own: detection, reaping, "
         "respawn, the replayed handshake); a call the crash caught in flight fails in doubt "
         "and is retried by the client. The hand-built application closes its session and "
         "transport on the first failed call, opens new ones and runs the handshake again. "
         f"{res['rounds']} rounds{report.passes(res)} of {res['cycles']} crashes per series, "
         "the order rotating.",
         ""]
    rows = []
    for name, s in res["series"].items():
        rows.append([LABELS[name], report.iqm(s["ms"], 2), report.num(s["p90_ms"], 2),
                     report.num(s["max_ms"], 2), str(s["n"]), str(s["failed_calls"])])
    L += report.table(["series", "ms, interquartile mean (IQR)", "p90 ms", "max ms", "crashes",
                       "failed calls"], rows)
    L += report.ratio_table(res["ratios"])
    return L
