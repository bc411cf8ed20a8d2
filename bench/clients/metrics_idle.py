"""Block-protocol worker (bench/method.py): keepalive over idle connections,
with or without mcpping.metrics, from Python.

    python3 metrics_idle.py off|prometheus|otel CONNS INTERVAL_MS RESPONDER

Opens CONNS connections to the responder with keepalive every INTERVAL_MS
(jitter 10%) and lets them run. A command {"n": MS} lets keepalive run for
MS milliseconds; ops is the keepalive pongs in it, so cpu_us_per_op is the
CPU per keepalive ping. With "metrics": false the block runs with every
connection's C cell detached (what a process that never turned metrics on
runs), so one process measures both, alternating: the same heap, threads
and connections on either side. A command {"n": K, "collect":
true} (metrics on) collects K times in a row (a Prometheus scrape of the
text format, or an OpenTelemetry collection through an in-memory reader):
cpu_us_per_op is the CPU of one collection. A command {"n": K, "events":
true} hands K ping-and-pong event pairs to a hub of its own (no listener),
with metrics on or not ("metrics"): cpu_us_per_op is the CPU of one pair,
so hooked minus unhooked is what metrics cost the binding per keepalive ping
(nothing since C counts: the hub no longer taps events), without the noise
of the I/O around it.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker import serve  # noqa: E402


def collector(mode):
    """Turns metrics on and returns a function that collects them once."""
    import mcpping

    if mode == "prometheus":
        from prometheus_client import CollectorRegistry, generate_latest

        registry = CollectorRegistry()
        mcpping.metrics.register_prometheus(registry)
        return lambda: generate_latest(registry)
    if mode == "otel":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        reader = InMemoryMetricReader()
        mcpping.metrics.instrument_otel(MeterProvider(metric_readers=[reader]))
        return reader.get_metrics_data
    if mode != "off":
        raise SystemExit(f"mode must be off, prometheus or otel, not {mode!r}")
    return None


async def main(mode, conns, interval_ms, responder):
    import mcpping

    from mcpping import _native, events

    collect = collector(mode)
    tally = events.tap
    ka = mcpping.KeepAlive(interval=interval_ms / 1000, timeout=5, min_interval=0.01, jitter_pct=10)
    peers = [await mcpping.connect([responder], keepalive=ka) for _ in range(conns)]
    try:
        hub = events.EventHub(None, peer="bench-events", transport="custom")
        ping = events.Event(name="ping", state="alive")
        pong = events.Event(name="pong", state="alive", rtt=0.0001)

        async def block(cmd):
            if cmd.get("events"):
                events.tap = tally if cmd.get("metrics", True) else None
                for _ in range(cmd["n"]):
                    hub.emit(ping)
                    hub.emit(pong)
                events.tap = tally
                return {"ops": cmd["n"]}
            if cmd.get("collect"):
                for _ in range(cmd["n"]):
                    collect()
                return {"ops": cmd["n"]}
            # Unhooked: the connections count into no C cell, as in a
            # process that never turned metrics on.
            on = cmd.get("metrics", True)
            for p in peers:
                _native.metrics_attach(p._id, p._events.figures if on else None)
            pongs0 = sum(p.stats.received for p in peers)
            await asyncio.sleep(cmd["n"] / 1000)
            return {"ops": max(1, sum(p.stats.received for p in peers) - pongs0)}

        await serve(block, conns=conns)
    finally:
        for p in peers:
            await p.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
