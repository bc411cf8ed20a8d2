"""idle_binding.py: what watching N idle connections costs a Python process
through the binding (idle_cost.c's measure, one level up): N connections to
the responder, keepalive every 1 s (jitter 10%), no listener; after 2.5 s to
settle, WINDOWS windows of WINDOW_S s each print one JSON line: CPU % of one
core (getrusage, all threads), context switches of all threads (/proc) and
keepalive pongs (peer.stats.received). Says "settled" on stderr first.

    python3 idle_binding.py N WINDOWS WINDOW_S RESPONDER
"""
import asyncio
import glob
import json
import resource
import sys
import time


def csw():
    n = 0
    for path in glob.glob("/proc/self/task/*/status"):
        try:
            with open(path) as f:
                for line in f:
                    if "ctxt_switches" in line:
                        n += int(line.split()[1])
        except OSError:
            pass
    return n


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def main(n, windows, window_s, responder):
    import mcpping

    ka = mcpping.KeepAlive(interval=1.0, timeout=5, jitter_pct=10)
    peers = [await mcpping.connect([responder], keepalive=ka) for _ in range(n)]
    await asyncio.sleep(2.5)
    print("settled", file=sys.stderr, flush=True)
    for _ in range(windows):
        # The pongs are summed outside the window: reading N peers' stats is
        # the benchmark's work, not keepalive's.
        p0 = sum(p.stats.received for p in peers)
        c0, s0, t0 = cpu(), csw(), time.monotonic()
        await asyncio.sleep(window_s)
        c1, s1, t1 = cpu(), csw(), time.monotonic()
        pongs = sum(p.stats.received for p in peers) - p0
        print(json.dumps({"cpu_pct": round(100 * (c1 - c0) / (t1 - t0), 3), "pongs": pongs,
                          "cpu_us_per_ping": round(1e6 * (c1 - c0) / max(1, pongs), 2),
                          "csw_per_ping": round((s1 - s0) / max(1, pongs), 3)}), flush=True)
    for p in peers:
        await p.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]))
