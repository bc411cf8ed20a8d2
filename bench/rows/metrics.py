"""What keeping mcpping.metrics costs keepalive: CPU per keepalive ping with
metrics off, with the Prometheus collector and with OpenTelemetry
instruments, in both bindings (issue 10: at most 5% more)."""
from __future__ import annotations

import os
from typing import Any

import method
import report
from rows import ping

KEY = "metrics"
TITLE = "Keepalive CPU with metrics on"
CONNS, INTERVAL_MS, BLOCK_MS = 20, 50, 1000

LABELS = {
    "py-off": "Python, no metrics",
    "py-prometheus": "Python, `register_prometheus`",
    "py-otel": "Python, `instrument_otel`",
    "node-off": "Node, no metrics",
    "node-prometheus": "Node, `registerPrometheus`",
    "node-otel": "Node, `instrumentOtel`",
}
COLLECTORS = [n for n in LABELS if not n.endswith("-off")]
COLLECTIONS = 20

RATIOS = [(f"{lang}-{mode}/{lang}-off cpu", f"{lang}-{mode}", f"{lang}-off", "cpu_us_per_op",
           f"{name} CPU per keepalive ping, {what} ÷ none")
          for lang, name in (("py", "Python"), ("node", "Node"))
          for mode, what in (("prometheus", "Prometheus"), ("otel", "OpenTelemetry"))]


def specs(ctx: Any) -> dict[str, tuple[list[str], None]]:
    r = ctx.programs["responder"]
    args = [str(CONNS), str(INTERVAL_MS), r]
    py = os.path.join(ctx.clients, "metrics_idle.py")
    js = os.path.join(ctx.clients, "metrics_idle.js")
    out = {}
    for mode in ("off", "prometheus", "otel"):
        out[f"py-{mode}"] = ([ctx.py, py, mode, *args], None)
        out[f"node-{mode}"] = ([ctx.node, js, mode, *args], None)
    return out


def run(ctx: Any) -> dict[str, Any]:
    rounds = ctx.pick(12, 3)
    block_ms = ctx.pick(BLOCK_MS, 500)
    commands = {n: {"n": block_ms} for n in LABELS}
    # The same workers measure keepalive, then collection: interleave() runs
    # one warm-up round and then `rounds` rounds of each command set.
    workers: dict[str, method.Worker] = {}
    try:
        for n, (argv, env) in specs(ctx).items():
            workers[n] = method.Worker(n, argv, env=env, cwd=ctx.root)
        blocks, _ = method.interleave(workers, commands, rounds, ctx.log)
        collect, _ = method.interleave({n: workers[n] for n in COLLECTORS},
                                       {n: {"n": COLLECTIONS, "collect": True} for n in COLLECTORS},
                                       rounds, ctx.log)
    finally:
        for w in workers.values():
            w.close()
    return {"rounds": rounds, "block_ms": block_ms, "commands": commands,
            "series": {n: method.summary(b) for n, b in blocks.items()},
            "collect": {n: method.summary(b) for n, b in collect.items()},
            "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, *_rest, label in RATIOS:
        r = res["ratios"].get(key, {})
        met, note = method.judge(r, 1.05, at_most=True)
        out.append(method.goal(label, "≤ 1.05×", report.times(r), met, note))
    return out


def render(res: dict[str, Any]) -> list[str]:
    L = [f"`bench/clients/metrics_idle.{{py,js}}`: each worker keeps {CONNS} connections to "
         f"the responder with keepalive every {INTERVAL_MS} ms (jitter 10%) and measures "
         f"blocks of {res['block_ms']} ms: the process's CPU (all threads) over the keepalive "
         f"pongs in the block. {res['rounds']} rounds, the order rotating.", ""]
    L += report.series_table(LABELS, res["series"], [
        ("cpu_us_per_op", "CPU µs per keepalive ping", 1), ("rate", "pongs/s", 0)])
    L += report.ratio_table(res["ratios"])
    L += ["A collection (one Prometheus scrape, one OpenTelemetry collection) by the same "
          f"workers, {COLLECTIONS} in a row per block; with one label set here. Prometheus "
          "scrapes every 15 s or more, so its share of a core is this over 15 s:", ""]
    L += report.series_table({n: LABELS[n] for n in COLLECTORS}, res.get("collect", {}), [
        ("cpu_us_per_op", "CPU µs per collection", 0)])
    return L
