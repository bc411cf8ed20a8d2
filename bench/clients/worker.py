"""The worker half of the block protocol (bench/method.py), for Python clients.

A client module connects however it does, then hands ``serve`` an async
function that runs one block: it gets the command object and returns
{"ops": N, ...} (plus "samples_us" etc. as it measures them). ``serve``
times each block (wall clock, the process's CPU over all its threads, its
context switches) and answers one JSON line per command until stdin ends;
a command with "samples": false gets its answer without the per-op lists
(a profiled block should not spend its time printing them).
"""
import asyncio
import json
import os
import resource
import sys
import time


def usage():
    """CPU seconds (user + system, all threads) and context switches so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_nvcsw + ru.ru_nivcsw


def _say(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


async def serve(block, **ready_info):
    loop = asyncio.get_running_loop()
    _say({"ready": True, "pid": os.getpid(), **ready_info})
    while True:
        # Read in a thread so the event loop stays free between blocks.
        line = await loop.run_in_executor(None, sys.stdin.buffer.readline)
        if not line:
            return
        cmd = json.loads(line)
        cpu0, csw0 = usage()
        t0 = time.perf_counter()
        res = await block(cmd)
        t1 = time.perf_counter()
        cpu1, csw1 = usage()
        res.update(wall_s=t1 - t0, cpu_s=cpu1 - cpu0, csw=csw1 - csw0)
        if cmd.get("samples") is False:
            res = {k: v for k, v in res.items() if k not in ("samples_us", "native_us")}
        _say(res)


async def timed(op, n, depth=1):
    """Runs op() n times with depth in flight; one latency per op when
    sequential. Returns the block result and the ops' own return values
    (sequential only)."""
    clock = time.perf_counter_ns
    samples, values = [], []
    if depth == 1:
        for _ in range(n):
            a = clock()
            values.append(await op())
            samples.append((clock() - a) / 1e3)
        return {"ops": n, "samples_us": samples}, values
    left = n

    async def worker():
        nonlocal left
        while left > 0:
            left -= 1
            await op()

    await asyncio.gather(*(worker() for _ in range(min(depth, n))))
    return {"ops": n}, values
