"""mcpping.guard over Streamable HTTP: a client-role guard on the SDK's HTTP client.

    python examples/python_guard_http_server.py

It starts an MCPServer (FastMCP's name in mcp 2.x) on 127.0.0.1 inside this
process, connects the official ClientSession to it through
mcp.client.streamable_http wrapped in mcpping.guard, calls a tool, pings, waits
for keepalive pongs, then shuts the server down and exits.

Why the client role: guard works on any (read_stream, write_stream) pair, but
the SDK's StreamableHTTPSessionManager opens each session's streams inside
itself and offers no hook to wrap them, so a server-role guard there would
mean patching SDK internals.
"""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

import mcpping

# log_level: MCPServer configures root logging; WARNING keeps the demo output readable.
app = MCPServer("guarded-http-demo", log_level="WARNING")


@app.tool()
def echo(text: str) -> str:
    """Returns text unchanged."""
    return text


# Short so the demo shows keepalive at once; min_interval lowers the 1 s floor.
KEEPALIVE = mcpping.KeepAlive(interval=0.2, timeout=3, failures=3, min_interval=0.1)


async def client(url: str) -> None:
    async with streamable_http_client(url) as (http_read, http_write):
        # The guard sits between the transport and the session: pings go out
        # and are answered underneath, everything else passes untouched.
        async with mcpping.guard(http_read, http_write, role="client", keepalive=KEEPALIVE,
                                 transport="streamable-http") as (read, write, g):
            keepalive_pongs = g.events("pong")  # subscribe before anything can pong
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                print(f"connected to {init.server_info.name} over Streamable HTTP")
                result = await session.call_tool("echo", {"text": "through the guard"})
                print("echo =", result.content[0].text)
                print(f"manual ping rtt={await g.ping(timeout=3) * 1000:.3f} ms")
                # Idle now: keepalive pings travel as ordinary HTTP POSTs.
                # Bounded, so a broken keepalive fails instead of hanging.
                with anyio.fail_after(10):
                    async for ev in keepalive_pongs:
                        if not ev.manual:
                            print(f"keepalive pong rtt={ev.rtt * 1000:.3f} ms state={g.state}")
                            break
            print(f"stats: {g.stats}")


async def main() -> int:
    # Bind first (port 0: any free port) so the client can connect at once:
    # the kernel queues the connection until uvicorn starts accepting.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            await client(f"http://127.0.0.1:{port}/mcp")
        finally:
            server.should_exit = True  # uvicorn's graceful stop; serve() then returns
    sock.close()
    print("server stopped")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
