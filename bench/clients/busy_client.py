"""The busy-client row, Python clients: block the asyncio loop for 2 s while the server pings.

    python3 busy_client.py api|sdk|sdk-mcpping SERVER_OUT_FILE [PRE POST BLOCK]

Spawns bench/clients/ping_server.py, which pings every 100 ms; after the
handshake the client waits PRE s, then blocks its event loop with
time.sleep(BLOCK) inside an asyncio callback, then waits POST s and closes.
Prints {"block_start_ns", "block_end_ns"} (CLOCK_MONOTONIC); the server's
log tells which pings were answered and when.

api: mcpping.connect; sdk: mcp ClientSession over mcp.client.stdio;
sdk-mcpping: mcp ClientSession over mcpping.sdk.stdio_client.
"""
import asyncio
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


async def block_loop(pre, block, post):
    await asyncio.sleep(pre)
    window = {}

    def block_now():
        window["block_start_ns"] = time.monotonic_ns()
        time.sleep(block)
        window["block_end_ns"] = time.monotonic_ns()

    asyncio.get_running_loop().call_soon(block_now)
    await asyncio.sleep(0)
    await asyncio.sleep(post)
    return window


async def main():
    mode, log = sys.argv[1], sys.argv[2]
    pre, post, block = (float(x) for x in (sys.argv[3:6] or (0.4, 1.2, 2.0)))
    cmd = [sys.executable, os.path.join(HERE, "ping_server.py"), log,
           "--duration", str(pre + block + post - 0.2)]
    if mode == "api":
        import mcpping

        async with mcpping.connect(cmd, keepalive=None) as peer:
            return await block_loop(pre, block, post)
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters

    if mode == "sdk":
        from mcp.client.stdio import stdio_client
    else:
        from mcpping.sdk import stdio_client
    params = StdioServerParameters(command=cmd[0], args=cmd[1:])
    kwargs = {"keepalive": None} if mode == "sdk-mcpping" else {}
    async with stdio_client(params, **kwargs) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        return await block_loop(pre, block, post)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
