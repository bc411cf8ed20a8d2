"""An MCP server built with the official SDK (MCPServer, FastMCP's 2.x name;
FastMCP on mcp 1.x, so the adapter tests run against both majors).

Usage: sdk_server.py [stdio | http PORT [IDLE_TIMEOUT]]. Tools: echo, add,
pid, and ping_client, which logs "pinging" to the client, waits a little,
then pings the client with the session's send_ping() and returns each ping's
CLOCK_MONOTONIC send/answer times (shared by every process on the host);
ping_listener pings the client on the connection's standalone stream (the
client's GET listening stream over HTTP); ask_roots asks the client
roots/list (5 s at most) and returns "roots: N", "refused: CODE MESSAGE" or
"no answer". IDLE_TIMEOUT (seconds) is the
session manager's session_idle_timeout: past it the session answers 404.
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


@app.tool()
async def ping_listener(count: int, ctx: Context) -> int:
    """Pings the client `count` times on the standalone stream; returns how many were answered."""
    answered = 0
    for _ in range(count):
        await ctx.session.send_ping()  # no related request: the standalone stream
        answered += 1
    return answered


@app.tool()
async def ask_roots(ctx: Context) -> str:
    """Asks the client for its roots; says what came back."""
    try:
        with anyio.fail_after(5):
            out = await ctx.session.list_roots()
    except TimeoutError:
        return "no answer"
    except Exception as e:  # the SDK's error for a JSON-RPC error answer (MCPError, McpError in 1.x)
        error = getattr(e, "error", None)
        return f"refused: {getattr(error, 'code', None)} {getattr(error, 'message', e)}"
    return f"roots: {len(out.roots)}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        host, port = "127.0.0.1", int(sys.argv[2])
        idle = float(sys.argv[3]) if len(sys.argv) > 3 else 30 * 60
        if "port" in inspect.signature(app.run_streamable_http_async).parameters:
            anyio.run(lambda: app.run_streamable_http_async(host=host, port=port,
                                                            session_idle_timeout=idle))
        else:  # mcp 1.x: host and port are settings (and no idle timeout)
            app.settings.host, app.settings.port = host, port
            anyio.run(app.run_streamable_http_async)
    else:
        app.run("stdio")
