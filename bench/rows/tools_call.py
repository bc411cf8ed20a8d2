"""A small tools/call through the official SDK sessions: mcpping's
transport against each SDK's own, wall time and CPU per call."""
from __future__ import annotations

import os
from typing import Any

import method
import report
from rows import ping

KEY = "tools_call"
TITLE = "Small `tools/call` through the SDK session"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
BYTES = 64

LABELS = {
    "py-mcpping": "Python `ClientSession` over `mcpping.sdk.stdio_client`",
    "py-sdk": "Python `ClientSession` over `mcp.client.stdio.stdio_client`",
    "node-mcpping": "TS `Client` over `mcpping.StdioClientTransport`",
    "ts-sdk": "TS `Client` over the SDK's `StdioClientTransport`",
}

RATIOS = [
    ("py-mcpping/py-sdk p50", "py-mcpping", "py-sdk", "p50_us",
     "Python p50, mcpping transport ÷ SDK transport"),
    ("node-mcpping/ts-sdk p50", "node-mcpping", "ts-sdk", "p50_us",
     "Node p50, mcpping transport ÷ SDK transport"),
    ("py-mcpping/py-sdk cpu", "py-mcpping", "py-sdk", "cpu_us_per_op",
     "Python CPU per call, mcpping transport ÷ SDK transport"),
    ("node-mcpping/ts-sdk cpu", "node-mcpping", "ts-sdk", "cpu_us_per_op",
     "Node CPU per call, mcpping transport ÷ SDK transport"),
]


def specs(ctx: Any, sdk_mode: str = "sdk") -> dict[str, tuple[list[str], None]]:
    """The tools/call workers, shared with the forwarding row."""
    r = ctx.programs["responder"]
    py = os.path.join(ctx.clients, "sdk_call.py")
    js = os.path.join(ctx.clients, "sdk_call.js")
    return {"py-mcpping": ([ctx.py, py, "mcpping", r], None),
            "py-sdk": ([ctx.py, py, "sdk", r], None),
            "node-mcpping": ([ctx.node, js, "mcpping", r], None),
            "ts-sdk": ([ctx.node, js, sdk_mode, r], None)}


def run(ctx: Any) -> dict[str, Any]:
    target = ctx.pick(0.05, 0.02)
    blocks, commands = method.measure(specs(ctx), {n: {"n": 50, "bytes": BYTES} for n in LABELS},
                                      ctx.rounds(40, 6), ctx.root, ctx.log, target_s=target)
    blocks = ctx.keep("blocks", blocks)
    return {"rounds": method.rounds(blocks), "target_s": target, "commands": commands,
            "series": {n: method.summary(b) for n, b in blocks.items()},
            "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}


LIMIT = 0.8  # issue 21: mcpping's transport at most 0.8x the SDK's own time


def sdk_goal(res: dict[str, Any], figure: str, target: str, limit: float, per: str
             ) -> dict[str, Any]:
    """The goal a row comparing mcpping with each SDK's own client sets:
    its p50 ratio at most limit in Python and in Node, CPU per op beside."""
    r = res["ratios"]
    py, py_note = method.judge(r.get("py-mcpping/py-sdk p50", {}), limit, at_most=True)
    js, js_note = method.judge(r.get("node-mcpping/ts-sdk p50", {}), limit, at_most=True)
    met = None if py is None or js is None else py and js
    m = (f"p50: Python {report.times(r.get('py-mcpping/py-sdk p50'))}, Node "
         f"{report.times(r.get('node-mcpping/ts-sdk p50'))} (CPU per {per}: Python "
         f"{report.times(r.get('py-mcpping/py-sdk cpu'))}, Node "
         f"{report.times(r.get('node-mcpping/ts-sdk cpu'))})")
    note = "; ".join(n for n in (py_note and f"Python {py_note}", js_note and f"Node {js_note}")
                     if n)
    return method.goal(figure, target, m, met, note)


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    return [sdk_goal(res, "small `tools/call` through the SDK session",
                     f"≤ {LIMIT:g}× with mcpping's transport vs the SDK's own transport, in both "
                     "languages (judged on p50 wall time)", LIMIT, "call")]


def render(res: dict[str, Any]) -> list[str]:
    L = [f"`tools/call` of the responder's `blob` tool returning {BYTES} bytes of text, one "
         f"call in flight, through the official SDK's client session; only the transport "
         f"differs (mcpping's with its defaults). {res['rounds']} rounds{report.passes(res)} "
         "after a warm-up, "
         f"blocks of about {res['target_s'] * 1000:.0f} ms (block sizes: "
         + ", ".join(f"{k} {c['n']}" for k, c in res["commands"].items()) + ").", ""]
    L += report.series_table(LABELS, res["series"], [
        ("p50_us", "p50 µs", 1), ("p99_us", "p99 µs", 1), ("cpu_us_per_op", "CPU µs/call", 1),
        ("csw_per_op", "csw/call", 2)])
    L += report.ratio_table(res["ratios"])
    return L
