"""Rows 1 and 2 from Python: sequential ping RTT and pipelined throughput.

    python3 py_ping.py api|sdk N DEPTH RESPONDER

``api`` is mcpping's own API (``mcpping.connect`` + ``peer.ping()``);
``sdk`` is the official SDK (``mcp.client.stdio.stdio_client`` +
``ClientSession.send_ping()``). Each RTT is the wall time around one awaited
ping on the asyncio loop, which is what a caller sees. DEPTH 1 is
sequential; DEPTH > 1 runs DEPTH concurrent ping loops. Prints one JSON
object like c_ping. 200 warm-up pings are not counted.
"""
import asyncio
import json
import sys
import time

WARMUP = 200


async def measure(ping, n, depth):
    for _ in range(WARMUP):
        await ping()
    samples = []
    clock = time.perf_counter_ns
    if depth == 1:
        t0 = clock()
        for _ in range(n):
            a = clock()
            await ping()
            samples.append((clock() - a) / 1e3)
        t1 = clock()
    else:
        left = n

        async def worker():
            nonlocal left
            while left > 0:
                left -= 1
                await ping()

        t0 = clock()
        await asyncio.gather(*(worker() for _ in range(depth)))
        t1 = clock()
    secs = (t1 - t0) / 1e9
    return {"n": n, "depth": depth, "elapsed_s": secs, "rate": n / secs,
            "samples_us": [round(x, 3) for x in samples]}


async def run_api(n, depth, responder):
    import mcpping

    async with mcpping.connect([responder], keepalive=None) as peer:
        return await measure(peer.ping, n, depth)


async def run_sdk(n, depth, responder):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=responder, args=[])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        return await measure(session.send_ping, n, depth)


def main():
    mode, n, depth, responder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    fn = {"api": run_api, "sdk": run_sdk}[mode]
    print(json.dumps(asyncio.run(fn(n, depth, responder))))


if __name__ == "__main__":
    main()
