"""The reconnect row, Python: time from a server crash to the first
successful tools/call after it.

    python3 reconnect.py mcpping|sdk RESPONDER CYCLES

mcpping: ClientSession over mcpping.sdk.stdio_peer with reconnect (1 ms
backoff, no jitter, and a retry budget wide enough for every cycle, so the
figure is mcpping's own reconnect, not the fleet budget's 2 a second); a
call that fails in doubt is retried at once. sdk: ClientSession over mcp.client.stdio's
stdio_client, as an application does it by hand: when a call fails, close
the session and the transport, open new ones, initialize, call again. Each
cycle SIGKILLs the server and times until a call succeeds. Prints one JSON
object: {"samples_ms": [...], "failures": N}.
"""
import asyncio
import contextlib
import json
import os
import signal
import sys
import time

BYTES = 64


def children(name):
    """Pids of this process's children running `name` (the SDK hides its child)."""
    out = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if os.path.basename(f.read().split(b"\0")[0]).decode() == name:
                        out.append(pid)
            except OSError:
                pass
    return out


async def call(session):
    res = await session.call_tool("blob", {"bytes": BYTES})
    if len(res.content[0].text) != BYTES:
        raise SystemExit("wrong answer")


async def with_mcpping(responder, cycles):
    import mcpping
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcpping.sdk import stdio_peer

    mcpping.set_retry_budget(burst=1_000_000, per_second=1e6)
    policy = mcpping.Reconnect(initial=0.001, max_delay=0.001, jitter=0.0, max_attempts=100)
    params = StdioServerParameters(command=responder, args=[])
    samples, failures = [], 0
    async with stdio_peer(params, keepalive=None, reconnect=policy) as (r, w, peer):
        async with ClientSession(r, w) as session:
            await session.initialize()
            await call(session)
            for _ in range(cycles):
                old = peer.pid
                t0 = time.perf_counter()
                os.kill(old, signal.SIGKILL)
                while True:
                    try:
                        await call(session)
                        break
                    except Exception:
                        failures += 1  # in doubt: the crash caught it in flight
                if peer.pid == old:
                    raise SystemExit("the call succeeded on the killed server")
                samples.append((time.perf_counter() - t0) * 1000)
    return samples, failures


async def by_hand(responder, cycles):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=responder, args=[])

    async def open_session():
        stack = contextlib.AsyncExitStack()
        r, w = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(r, w))
        await session.initialize()
        return stack, session

    samples, failures = [], 0
    stack, session = await open_session()
    await call(session)
    try:
        for _ in range(cycles):
            (old,) = children(os.path.basename(responder))
            t0 = time.perf_counter()
            os.kill(old, signal.SIGKILL)
            while True:
                try:
                    await call(session)
                    break
                except Exception:
                    failures += 1
                    with contextlib.suppress(Exception):
                        await stack.aclose()
                    stack, session = await open_session()
            if old in children(os.path.basename(responder)):
                raise SystemExit("the call succeeded on the killed server")
            samples.append((time.perf_counter() - t0) * 1000)
    finally:
        with contextlib.suppress(Exception):
            await stack.aclose()
    return samples, failures


async def main(mode, responder, cycles):
    run = with_mcpping if mode == "mcpping" else by_hand
    samples, failures = await run(responder, cycles)
    print(json.dumps({"samples_ms": samples, "failures": failures}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
