#!/usr/bin/env python3
"""RTT and throughput of mcpping's peer.ping() next to the official SDK's
ClientSession.send_ping(), against the same server, in the same run.

Usage: bench_ping.py [-n N] [--server demo|sdk] [--json]

Each client spawns its own copy of the server and sends N sequential pings
after a warm-up; the report gives p50/p90/p99 RTT in ms, pings per second,
and the SDK/mcpping ratios (above 1 means mcpping is faster). `--json` prints
one object for bench/run.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from pathlib import Path

import mcpping
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
SERVERS = {
    "demo": [sys.executable, "-m", "mcpping.demo"],
    "sdk": [sys.executable, str(ROOT / "tests" / "python" / "servers" / "sdk_server.py")],
}


def pct(sorted_ms: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    return sorted_ms[max(1, math.ceil(p / 100 * len(sorted_ms))) - 1]


def summarize(rtts_s: list[float], wall_s: float) -> dict[str, float]:
    ms = sorted(r * 1000 for r in rtts_s)
    return {"p50_ms": pct(ms, 50), "p90_ms": pct(ms, 90), "p99_ms": pct(ms, 99),
            "mean_ms": sum(ms) / len(ms), "pings_per_s": len(ms) / wall_s}


async def bench_mcpping(cmd: list[str], n: int, warmup: int) -> dict[str, float]:
    async with mcpping.connect(cmd, keepalive=None) as peer:
        for _ in range(warmup):
            await peer.ping()
        rtts, walls = [], []
        t0 = time.perf_counter()
        for _ in range(n):
            s = time.perf_counter()
            rtts.append(await peer.ping())
            walls.append(time.perf_counter() - s)
        wall = time.perf_counter() - t0
    # "native": the RTT the C thread measured (no asyncio lag in it);
    # the top-level figures are await-to-await, comparable with the SDK's.
    return {**summarize(walls, wall), "native": summarize(rtts, wall)}


async def bench_sdk(cmd: list[str], n: int, warmup: int) -> dict[str, float]:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for _ in range(warmup):
            await session.send_ping()
        rtts = []
        t0 = time.perf_counter()
        for _ in range(n):
            s = time.perf_counter()
            await session.send_ping()
            rtts.append(time.perf_counter() - s)
        wall = time.perf_counter() - t0
    return summarize(rtts, wall)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--server", choices=sorted(SERVERS), default="demo")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cmd = SERVERS[a.server]
    mine = await bench_mcpping(cmd, a.n, a.warmup)
    sdk = await bench_sdk(cmd, a.n, a.warmup)
    ratio = {"p50": sdk["p50_ms"] / mine["p50_ms"], "p99": sdk["p99_ms"] / mine["p99_ms"],
             "throughput": mine["pings_per_s"] / sdk["pings_per_s"]}
    out = {"bench": "python_ping", "server": a.server, "n": a.n, "mcpping": mine,
           "sdk": sdk, "ratio_sdk_over_mcpping": ratio}
    if a.json:
        print(json.dumps(out))
        return
    print(f"{a.n} sequential pings to the {a.server} server (stdio)")
    print(f"{'':18}{'p50 ms':>10}{'p90 ms':>10}{'p99 ms':>10}{'pings/s':>12}")
    rows = (("mcpping.ping()", mine), ("  native RTT", mine["native"]), ("SDK send_ping()", sdk))
    for name, r in rows:
        print(f"{name:18}{r['p50_ms']:10.3f}{r['p90_ms']:10.3f}{r['p99_ms']:10.3f}"
              f"{r['pings_per_s']:12.0f}")
    print("(await-to-await times; 'native RTT' is what the C thread measured)")
    print(f"SDK/mcpping: p50 x{ratio['p50']:.1f}, p99 x{ratio['p99']:.1f}, "
          f"throughput x{ratio['throughput']:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
