"""Pipelined rate: 64 pings in flight, the same series as the ping row."""
from __future__ import annotations

from typing import Any

import method
import report
from rows import ping

KEY = "pipelined"
TITLE = "Pipelined rate (64 pings in flight)"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
DEPTH = 64

RATIOS = [
    ("c-driver/floor rate", "c-driver", "floor", "rate", "C driver rate ÷ bare pipe rate"),
    ("py-api/floor rate", "py-api", "floor", "rate", "mcpping Python rate ÷ bare pipe rate"),
    ("node-api/floor rate", "node-api", "floor", "rate", "mcpping Node rate ÷ bare pipe rate"),
    ("py-api/py-sdk rate", "py-api", "py-sdk", "rate", "mcpping Python rate ÷ Python SDK rate"),
    ("node-api/ts-sdk rate", "node-api", "ts-sdk", "rate", "mcpping Node rate ÷ TS SDK rate"),
    ("py-api/py-sdk cpu", "py-api", "py-sdk", "cpu_us_per_op",
     "Python CPU per ping, mcpping ÷ SDK"),
    ("node-api/ts-sdk cpu", "node-api", "ts-sdk", "cpu_us_per_op",
     "Node CPU per ping, mcpping ÷ SDK"),
]


def run(ctx: Any) -> dict[str, Any]:
    target = ctx.pick(0.1, 0.03)
    blocks, commands = method.measure(
        ping.specs(ctx), {n: {"n": 2000, "depth": DEPTH} for n in ping.LABELS},
        ctx.rounds(40, 6), ctx.root, ctx.log, target_s=target)
    blocks = ctx.keep("blocks", blocks)
    return {"rounds": method.rounds(blocks), "target_s": target, "commands": commands,
            "series": {n: method.summary(b) for n, b in blocks.items()},
            "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}


# Issue 21: the C driver against the pipe, each binding against its SDK.
GOALS = [("c-driver/floor rate", "C driver", "≥ 0.5× the bare pipe's rate", 0.5),
         ("py-api/py-sdk rate", "Python", "≥ 20× the Python SDK's rate", 20.0),
         ("node-api/ts-sdk rate", "Node", "≥ 3× the TS SDK's rate", 3.0)]


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    r = res["ratios"]
    out = []
    for key, who, target, limit in GOALS:
        met, note = method.judge(r.get(key, {}), limit, at_most=False)
        out.append(method.goal(f"pipelined rate, {who}", target, report.times(r.get(key)),
                               met, note))
    return out


def render(res: dict[str, Any]) -> list[str]:
    L = [f"{DEPTH} pings in flight, {res['rounds']} rounds{report.passes(res)} after a "
         "warm-up, blocks of about "
         f"{res['target_s'] * 1000:.0f} ms (block sizes: "
         + ", ".join(f"{ping.LABELS[k].split(' (')[0]} {c['n']}"
                     for k, c in res["commands"].items())
         + "). The floor writes each batch of ping lines in one write, as a pipelining client "
         "would.", ""]
    L += report.series_table(ping.LABELS, res["series"], [
        ("rate", "pings/s", 0), ("cpu_us_per_op", "CPU µs/ping", 2),
        ("csw_per_op", "csw/ping", 2)])
    L += report.ratio_table(res["ratios"])
    L += [cpu_bound(res), ""]
    return L


def cpu_bound(res: dict[str, Any]) -> str:
    """Rate × CPU per ping is how many cores the client keeps busy: about 1
    (or more, across threads) means it is bound by its own CPU, well below 1
    that it waits on the server. Says so with this run's figures."""
    parts = []
    for name, s in res["series"].items():
        rate, cpu = s["rate"]["iqm"], s["cpu_us_per_op"]["iqm"]
        if rate and cpu:
            parts.append(f"{ping.LABELS[name]} {rate * cpu / 1e6:.2f}")
    return ("What bounds each rate: pings/s × CPU per ping is the number of cores the client "
            "process keeps busy, about 1 (or more, across its threads) for a client bound by "
            "its own CPU, well below 1 for one that waits on the responder: "
            + "; ".join(parts) + ".")
