"""What keeping mcpping.metrics costs keepalive: CPU per keepalive ping with
the figures kept and not, in one process (Prometheus collector or
OpenTelemetry instruments, both bindings; issue 10: at most 5% more), and
the CPU of one collection."""
from __future__ import annotations

import os
from typing import Any

import method
import report
from rows import ping

KEY = "metrics"
TITLE = "Keepalive CPU with metrics on"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
CONNS, INTERVAL_MS, BLOCK_MS, COLLECTIONS, EVENT_PAIRS = 20, 50, 1000, 20, 100_000

# Worker -> (language label, exporter label).
WORKERS = {
    "py-prometheus": ("Python", "`register_prometheus`"),
    "py-otel": ("Python", "`instrument_otel`"),
    "node-prometheus": ("Node", "`registerPrometheus`"),
    "node-otel": ("Node", "`instrumentOtel`"),
}
# Two series per worker: its blocks alternate between the tally unhooked
# ("-off") and hooked, so both sides share one process.
LABELS = {}
for _w, (_lang, _fn) in WORKERS.items():
    LABELS[f"{_w}-off"] = f"{_lang}, {_fn} process, tally unhooked"
    LABELS[_w] = f"{_lang}, {_fn}"

RATIOS = [(f"{w}/{w}-off cpu", w, f"{w}-off", "cpu_us_per_op",
           f"{lang} CPU per keepalive ping, {fn} ÷ unhooked") for w, (lang, fn) in WORKERS.items()]


def specs(ctx: Any) -> dict[str, list[str]]:
    args = [str(CONNS), str(INTERVAL_MS), ctx.programs["responder"]]
    py = os.path.join(ctx.clients, "metrics_idle.py")
    js = os.path.join(ctx.clients, "metrics_idle.js")
    return {w: ([ctx.py, py] if w.startswith("py") else [ctx.node, js]) + [w.split("-")[1], *args]
            for w in WORKERS}


def run(ctx: Any) -> dict[str, Any]:
    rounds = ctx.rounds(12, 3)
    block_ms = ctx.pick(BLOCK_MS, 500)
    workers: dict[str, method.Worker] = {}
    try:
        for w, argv in specs(ctx).items():
            workers[w] = method.Worker(w, argv, cwd=ctx.root)
        series = {name: workers[name.removesuffix("-off")] for name in LABELS}
        commands = {name: {"n": block_ms, "metrics": not name.endswith("-off")} for name in LABELS}
        blocks, _ = method.interleave(series, commands, rounds, ctx.log)
        collect, _ = method.interleave(workers, {w: {"n": COLLECTIONS, "collect": True}
                                                 for w in WORKERS}, rounds, ctx.log)
        micro, _ = method.interleave(series, {n: {"n": EVENT_PAIRS, "events": True,
                                                  "metrics": not n.endswith("-off")}
                                              for n in LABELS}, rounds, ctx.log)
    finally:
        for w in workers.values():
            w.close()
    blocks, collect, micro = ctx.keep("blocks", blocks), ctx.keep("collect", collect), \
        ctx.keep("events", micro)
    series_sum = {n: method.summary(b) for n, b in blocks.items()}
    events = {n: method.summary(b) for n, b in micro.items()}
    figures = {}
    for w, (lang, fn) in WORKERS.items():
        added = events[w]["cpu_us_per_op"]["iqm"] - events[f"{w}-off"]["cpu_us_per_op"]["iqm"]
        base = series_sum[f"{w}-off"]["cpu_us_per_op"]["iqm"]
        figures[f"{w} counting share"] = {
            "label": f"{lang}, {fn}: counting's CPU per keepalive ping ÷ the ping's CPU",
            "value": added / base, "added_us": added}
    return {"rounds": method.rounds(blocks), "block_ms": block_ms, "commands": commands,
            "series": series_sum, "collect": {n: method.summary(b) for n, b in collect.items()},
            "events": events, "figures": figures,
            "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, *_rest, label in RATIOS:
        r = res["ratios"].get(key, {})
        met, note = method.judge(r, 1.05, at_most=True)
        out.append(method.goal(label, "≤ 1.05×", report.times(r), met, note))
    return out


def render(res: dict[str, Any]) -> list[str]:
    L = [f"`bench/clients/metrics_idle.{{py,js}}`: each worker turns one exporter on, keeps "
         f"{CONNS} connections to the responder with keepalive every {INTERVAL_MS} ms (jitter "
         f"10%) and measures blocks of {res['block_ms']} ms: the process's CPU (all threads) "
         "over the keepalive pongs in the block. Its blocks alternate between metrics "
         "hooked and unhooked (every connection's C cell detached: what a process that never "
         "turned metrics on runs), so each "
         "ratio compares one process with itself. "
         f"{res['rounds']} rounds{report.passes(res)}, the order rotating.", ""]
    L += report.series_table(LABELS, res["series"], [
        ("cpu_us_per_op", "CPU µs per keepalive ping", 1), ("rate", "pongs/s", 0)])
    L += report.ratio_table(res["ratios"])
    L += ["One collection (a Prometheus scrape of the text format, an OpenTelemetry collection "
          f"into an in-memory reader), {COLLECTIONS} in a row per block, one label set. "
          "Prometheus scrapes every 15 s or more, so its share of a core is this over 15 s:", ""]
    L += report.series_table({w: f"{lang}, {fn}" for w, (lang, fn) in WORKERS.items()},
                             res.get("collect", {}), [("cpu_us_per_op", "CPU µs per collection", 0)])
    if res.get("figures"):
        L += [f"The counting alone, without the I/O around it: {EVENT_PAIRS:,} ping-and-pong "
              "event pairs handed to a hub (Python) or what the binding does per event for metrics "
              "(Node: nothing, C counts) per block, hooked and "
              "not. The µs it adds per keepalive ping, and that over the CPU of a keepalive "
              "ping measured above (unhooked). With OpenTelemetry the pong's "
              "`Histogram.record()` is included:", ""]
        L += report.table(["series", "µs added per keepalive ping", "share of the ping's CPU"], [
            [f"{lang}, {fn}", f"{res['figures'][f'{w} counting share']['added_us']:.2f}",
             f"{100 * res['figures'][f'{w} counting share']['value']:.1f}%"]
            for w, (lang, fn) in WORKERS.items()])
    return L
