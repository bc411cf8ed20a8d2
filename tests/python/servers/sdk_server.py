"""An MCP server built with the official SDK (MCPServer, FastMCP's 2.x name;
FastMCP on mcp 1.x, so the adapter tests run against both majors).

Usage: sdk_server.py [stdio | http PORT [IDLE_TIMEOUT [resumable]]]. Tools: echo, add,
pid, and ping_client, which logs "pinging" to the client, waits a little,
then pings the client with the session's send_ping() and returns each ping's
CLOCK_MONOTONIC send/answer times (shared by every process on the host);
ping_listener pings the client on the connection's standalone stream (the
client's GET listening stream over HTTP); ask_roots asks the client
roots/list (5 s at most) and returns "roots: N", "refused: CODE MESSAGE" or
"no answer". IDLE_TIMEOUT (seconds) is the
session manager's session_idle_timeout: past it the session answers 404.
"resumable" gives the server an event store (SEP-1699: every SSE stream
starts with a priming event, an id and no data; retry 100 ms); its tool
close_stream {seconds} closes the request's stream (ctx.close_sse_stream),
waits (0.3 s by default), and returns "done", which the client gets only by resuming the
stream with Last-Event-ID.
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


@app.tool()
async def close_stream(ctx: Context, seconds: float = 0.3) -> str:
    """Closes this request's SSE stream, then answers on the stored stream."""
    await ctx.close_sse_stream()
    await anyio.sleep(seconds)
    return "done"


class MemoryEventStore:
    """The SDK's EventStore kept in a list (the SDK ships none)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []  # (stream, event id, message or None)

    async def store_event(self, stream_id, message):
        self.events.append((stream_id, str(len(self.events) + 1), message))
        return self.events[-1][1]

    async def replay_events_after(self, last_event_id, send_callback):
        from mcp.server.streamable_http import EventMessage
        at = next((i for i, e in enumerate(self.events) if e[1] == last_event_id), None)
        if at is None:
            return None
        stream = self.events[at][0]
        for s, eid, message in self.events[at + 1:]:
            if s == stream and message is not None:
                await send_callback(EventMessage(message, eid))
        return stream


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        host, port = "127.0.0.1", int(sys.argv[2])
        idle = float(sys.argv[3]) if len(sys.argv) > 3 else 30 * 60
        resumable = {}
        if sys.argv[4:5] == ["resumable"]:
            resumable = {"event_store": MemoryEventStore(), "retry_interval": 100}
        if "port" in inspect.signature(app.run_streamable_http_async).parameters:
            anyio.run(lambda: app.run_streamable_http_async(host=host, port=port,
                                                            session_idle_timeout=idle, **resumable))
        else:  # mcp 1.x: host and port are settings (and no idle timeout)
            app.settings.host, app.settings.port = host, port
            anyio.run(app.run_streamable_http_async)
    else:
        app.run("stdio")
