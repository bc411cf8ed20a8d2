"""Block-protocol worker (bench/method.py): pings from Python.

    python3 ping_worker.py api|sdk RESPONDER

api: mcpping's own API (mcpping.connect, keepalive off, peer.ping());
sdk: the official SDK (mcp.client.stdio.stdio_client + ClientSession,
send_ping()). A command {"n": N, "depth": D} runs N pings with D in flight.
Each latency is the wall time around one awaited ping on the asyncio loop,
which is what a caller sees; for api, "native_us" also holds the RTT that
mcpping reported (timed in C by the runtime's loop: on the asyncio loop's
thread in host mode, on the native thread in thread mode).
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker import serve, timed  # noqa: E402


async def run_api(responder):
    import mcpping

    # Which mode the runtime runs in and why (host or thread, issue 21), in
    # the ready line; each block counts the watchdog's takeovers. A build
    # from before host mode has neither.
    hosted = hasattr(mcpping, "runtime_mode")
    if hosted:
        from mcpping._runtime import host_stats

    async with mcpping.connect([responder], keepalive=None) as peer:
        async def block(cmd):
            before = host_stats()["takeovers"] if hosted else 0
            res, rtts = await timed(peer.ping, cmd["n"], cmd.get("depth", 1))
            if rtts:
                res["native_us"] = [r * 1e6 for r in rtts]
            if hosted:
                res["takeovers"] = host_stats()["takeovers"] - before
            return res

        await serve(block, **({"runtime_mode": list(mcpping.runtime_mode())} if hosted else {}))


async def run_sdk(responder):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=responder, args=[])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()

        async def block(cmd):
            res, _ = await timed(session.send_ping, cmd["n"], cmd.get("depth", 1))
            return res

        await serve(block)


if __name__ == "__main__":
    mode, responder = sys.argv[1], sys.argv[2]
    asyncio.run({"api": run_api, "sdk": run_sdk}[mode](responder))
