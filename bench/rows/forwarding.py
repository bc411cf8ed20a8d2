"""A 16 MiB tool result through the official SDK sessions: mcpping's
transport against each SDK's own."""
from __future__ import annotations

from typing import Any

import method
import report
from rows import ping, tools_call

KEY = "forwarding"
TITLE = "Forwarding a 16 MiB tool result"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
BYTES = 16 << 20

RATIOS = [
    ("py-mcpping/py-sdk time", "py-mcpping", "py-sdk", "p50_us",
     "Python time per call, mcpping transport ÷ SDK transport"),
    ("node-mcpping/ts-sdk time", "node-mcpping", "ts-sdk", "p50_us",
     "Node time per call, mcpping transport ÷ SDK transport"),
    ("py-mcpping/py-sdk cpu", "py-mcpping", "py-sdk", "cpu_us_per_op",
     "Python CPU per call, mcpping transport ÷ SDK transport"),
    ("node-mcpping/ts-sdk cpu", "node-mcpping", "ts-sdk", "cpu_us_per_op",
     "Node CPU per call, mcpping transport ÷ SDK transport"),
]


def run(ctx: Any) -> dict[str, Any]:
    blocks, commands = method.measure(
        tools_call.specs(ctx), {n: {"n": 1, "bytes": BYTES} for n in tools_call.LABELS},
        ctx.rounds(12, 2), ctx.root, ctx.log)
    blocks = ctx.keep("blocks", blocks)
    res = {"rounds": method.rounds(blocks),
           "series": {n: method.summary(b) for n, b in blocks.items()},
           "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}
    if ctx.final_pass:
        res["ts_sdk_default"] = sdk_default(ctx)
    return res


def sdk_default(ctx: Any) -> str:
    """What the TS SDK's transport does with 16 MiB as shipped (10 MiB buffer)."""
    argv, env = tools_call.specs(ctx, "sdk-default")["ts-sdk"]
    try:
        method.measure({"ts-sdk-default": (argv, env)},
                                   {"ts-sdk-default": {"n": 1, "bytes": BYTES}}, 0, ctx.root)
        return "ok"
    except method.WorkerError as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.lstrip().startswith(
            ("McpError", "Error"))]
        return "failed: " + (lines[0] if lines else str(e).splitlines()[0])

def render(res: dict[str, Any]) -> list[str]:
    L = [f"`tools/call` of `blob` returning one 16 MiB text content; one call per block, "
         f"{res['rounds']} rounds{report.passes(res)} after a warm-up; only the transport "
         "differs. The TS SDK's "
         "transport runs with `maxBufferSize` raised to 64 MiB; as shipped (10 MiB) it "
         f"gives: {res.get('ts_sdk_default')}.", ""]
    L += report.series_table(tools_call.LABELS, _ms(res["series"]), [
        ("p50_us", "ms per call", 1), ("cpu_us_per_op", "CPU ms per call", 1)])
    L += report.ratio_table(res["ratios"])
    return L


def _ms(series: dict[str, Any]) -> dict[str, Any]:
    """The series' µs figures in ms."""
    def scale(s: dict[str, Any]) -> dict[str, Any]:
        return {k: (v / 1000 if k in ("iqm", "median", "q1", "q3") and v is not None else v)
                for k, v in s.items()}
    return {n: {f: scale(s[f]) for f in ("p50_us", "cpu_us_per_op")} for n, s in series.items()}
