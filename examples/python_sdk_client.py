"""The official `mcp` ClientSession, with mcpping underneath.

The only change from a plain SDK client is the import of stdio_client: the
server's pipes then belong to mcpping's native I/O thread, which answers the
server's pings and sends keepalive pings whenever the line goes quiet.

    python examples/python_sdk_client.py
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters

import mcpping
from mcpping.sdk import stdio_client  # instead of mcp.client.stdio.stdio_client

# The bundled demo server (stdlib only): tools `echo` and `add`.
SERVER = StdioServerParameters(command=sys.executable, args=["-m", "mcpping.demo"])

# A short interval so the demo shows keepalive within a second; real
# deployments use seconds to minutes (min_interval lowers the 1 s floor).
KEEPALIVE = mcpping.KeepAlive(interval=0.2, timeout=2, failures=3, min_interval=0.1)
KEEPALIVE_PONGS = 2  # how many keepalive pongs to see before leaving


async def main() -> int:
    keepalive_pongs = asyncio.Queue[mcpping.Event]()

    def on_event(ev: mcpping.Event) -> None:
        # Called on this loop for every liveness event of the connection.
        if ev.name == "pong":
            kind = "manual" if ev.manual else "keepalive"
            print(f"pong ({kind}) seq={ev.ping_seq} rtt={ev.rtt * 1000:.3f} ms", flush=True)
            if not ev.manual:
                keepalive_pongs.put_nowait(ev)
        elif ev.name in ("suspect", "stale", "recovered"):
            print(f"{ev.name}: failures={ev.failure_count} in_flight={ev.in_flight}", flush=True)

    async with stdio_client(SERVER, keepalive=KEEPALIVE, on_event=on_event) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"connected to {init.server_info.name} (protocol {init.protocol_version})")
            tools = await session.list_tools()
            print("tools:", ", ".join(t.name for t in tools.tools))
            result = await session.call_tool("add", {"a": 2, "b": 3})
            print("add(2, 3) =", result.content[0].text)
            result = await session.call_tool("echo", {"text": "hello"})
            print("echo('hello') =", result.content[0].text)
            # The session is idle now: keepalive pings go out underneath it.
            # A bounded wait, so a broken keepalive fails instead of hanging.
            for _ in range(KEEPALIVE_PONGS):
                await asyncio.wait_for(keepalive_pongs.get(), 10)
    # Leaving the block closed the session and reaped the server.
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
