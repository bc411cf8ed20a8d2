"""An MCP server built with the official SDK (MCPServer, FastMCP's 2.x name;
FastMCP on mcp 1.x, so the adapter tests run against both majors).

Usage: sdk_server.py [stdio | http PORT]. Tools: echo, add, pid, and
ping_client, which logs "pinging" to the client, waits a little, then pings
the client with the session's send_ping() and returns each ping's
CLOCK_MONOTONIC send/answer times (shared by every process on the host).
"""

import inspect
import os
import sys
import time

import anyio
try:
    from mcp.server.mcpserver import Context, MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP as MCPServer

app = MCPServer("sdk-server")


@app.tool()
def echo(text: str) -> str:
    """Returns text unchanged."""
    return text


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
async def ping_client(count: int, delay: float, ctx: Context) -> list[list[float]]:
    """Pings the client `count` times after `delay` s; returns [sent, answered] times."""
    await ctx.info("pinging")
    await anyio.sleep(delay)
    times = []
    for _ in range(count):
        t0 = time.monotonic()
        await ctx.session.send_ping()
        times.append([t0, time.monotonic()])
    return times


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        host, port = "127.0.0.1", int(sys.argv[2])
        if "port" in inspect.signature(app.run_streamable_http_async).parameters:
            anyio.run(lambda: app.run_streamable_http_async(host=host, port=port))
        else:  # mcp 1.x: host and port are settings
            app.settings.host, app.settings.port = host, port
            anyio.run(app.run_streamable_http_async)
    else:
        app.run("stdio")
