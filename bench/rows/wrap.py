"""What `mcpping wrap` costs a client that launches its server through it:
a small `tools/call` and a 16 MiB result, wrapped vs direct, with each
official SDK's own client session and stdio transport."""
from __future__ import annotations

import os
from typing import Any

import method
import report
from rows import forwarding, ping

KEY = "wrap"
TITLE = "`mcpping wrap` vs a direct server"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
SMALL = 64
LARGE = 16 << 20

LABELS = {
    "py-wrap": "Python `ClientSession` (SDK stdio) → `mcpping wrap` → responder",
    "py-direct": "Python `ClientSession` (SDK stdio) → responder",
    "ts-wrap": "TS `Client` (SDK stdio) → `mcpping wrap` → responder",
    "ts-direct": "TS `Client` (SDK stdio) → responder",
}


def _ratios(size: str) -> list[tuple[str, str, str, str, str]]:
    return [
        (f"py-wrap/py-direct {size} p50", "py-wrap", "py-direct", "p50_us",
         f"Python {size} call, p50, wrapped ÷ direct"),
        (f"ts-wrap/ts-direct {size} p50", "ts-wrap", "ts-direct", "p50_us",
         f"Node {size} call, p50, wrapped ÷ direct"),
        (f"py-wrap/py-direct {size} cpu", "py-wrap", "py-direct", "cpu_us_per_op",
         f"Python {size} call, client CPU, wrapped ÷ direct"),
    ]


def specs(ctx: Any) -> dict[str, tuple[list[str], None]]:
    r = ctx.programs["responder"]
    py = os.path.join(ctx.clients, "sdk_call.py")
    js = os.path.join(ctx.clients, "sdk_call.js")
    return {"py-wrap": ([ctx.py, py, "wrap", r], None),
            "py-direct": ([ctx.py, py, "sdk", r], None),
            "ts-wrap": ([ctx.node, js, "wrap", r], None),
            "ts-direct": ([ctx.node, js, "sdk", r], None)}


def run(ctx: Any) -> dict[str, Any]:
    target = ctx.pick(0.05, 0.02)
    small, small_cmds = method.measure(specs(ctx), {n: {"n": 50, "bytes": SMALL} for n in LABELS},
                                       ctx.rounds(32, 4), ctx.root, ctx.log, target_s=target)
    large, _ = method.measure(specs(ctx), {n: {"n": 1, "bytes": LARGE} for n in LABELS},
                              ctx.rounds(8, 2), ctx.root, ctx.log)
    small, large = ctx.keep("small", small), ctx.keep("large", large)
    return {"rounds": [method.rounds(small), method.rounds(large)], "target_s": target,
            "commands": small_cmds,
            "series": {n: method.summary(b) for n, b in small.items()},
            "large_series": {n: method.summary(b) for n, b in large.items()},
            "ratios": {**ping.ratios(small, _ratios("small")),
                       **ping.ratios(large, _ratios("16 MiB"))},
            "blocks": small, "large_blocks": large}


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    r = res["ratios"]
    py, py_note = method.judge(r.get("py-wrap/py-direct small p50", {}), 1.2, at_most=True)
    js, js_note = method.judge(r.get("ts-wrap/ts-direct small p50", {}), 1.2, at_most=True)
    met = None if py is None or js is None else py and js
    m = (f"small p50: Python {report.times(r.get('py-wrap/py-direct small p50'))}, Node "
         f"{report.times(r.get('ts-wrap/ts-direct small p50'))}; 16 MiB: Python "
         f"{report.times(r.get('py-wrap/py-direct 16 MiB p50'))}, Node "
         f"{report.times(r.get('ts-wrap/ts-direct 16 MiB p50'))}")
    note = "; ".join(n for n in (py_note and f"Python {py_note}", js_note and f"Node {js_note}")
                     if n)
    return [method.goal("small `tools/call` through `mcpping wrap`",
                        "≤ 1.2× a direct server, with each SDK's own client and stdio "
                        "transport (judged on p50 wall time)", m, met, note)]


def render(res: dict[str, Any]) -> list[str]:
    small_rounds, large_rounds = res["rounds"]
    L = [f"The same client session and SDK stdio transport launching either the responder "
         f"or `mcpping wrap -- responder` (its defaults: keepalive after 10 s idle, which "
         f"never fires here). A `tools/call` of `blob` returning {SMALL} bytes, one call in "
         f"flight, {small_rounds} rounds of blocks of about {res['target_s'] * 1000:.0f} ms; "
         f"then one returning 16 MiB, one call per block, {large_rounds} rounds; both"
         f"{report.passes(res) or ' in one pass'}. CPU is the client's (the wrap is a process "
         "of its own).", ""]
    L += report.series_table(LABELS, res["series"], [
        ("p50_us", "small p50 µs", 1), ("p99_us", "small p99 µs", 1),
        ("cpu_us_per_op", "client CPU µs/call", 1)])
    L += [""]
    L += report.series_table(LABELS, forwarding._ms(res["large_series"]), [
        ("p50_us", "16 MiB ms per call", 1), ("cpu_us_per_op", "client CPU ms per call", 1)])
    L += report.ratio_table(res["ratios"])
    return L
