"""Drop-in transports for the official ``mcp`` SDK (``pip install mcpping[sdk]``).

``mcpping.sdk.stdio_client`` replaces ``mcp.client.stdio.stdio_client``: it
yields the ``(read_stream, write_stream)`` pair ``mcp.ClientSession`` takes,
but the server's pipes belong to mcpping's native I/O thread. The server's
pings are answered there (also while this asyncio loop is blocked), keepalive
runs underneath, and everything else passes through untouched and in order.

It works with mcp 1.x (>= 1.24) and 2.x, whichever is installed; any other
mcp fails at import with an ImportError naming its version.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio

# The installed mcp's major (1.x or 2.x) is chosen there, once.
from ._mcp import SessionMessage, StdioServerParameters, decode, encode, get_default_environment
from .events import Event
from .keepalive import AUTO_PROBE, KeepAlive
from .peer import Peer, StderrTarget
from .reconnect import Reconnect
from .records import RecordTarget

__all__ = ["stdio_client", "stdio_peer", "StdioServerParameters"]


def _stderr_target(errlog: TextIO) -> StderrTarget:
    """Lets the server write straight to fd 2 when that is where errlog goes."""
    try:
        if errlog.fileno() == 2:
            return "inherit"
    except (AttributeError, OSError, ValueError):
        pass
    return errlog


@asynccontextmanager
async def stdio_peer(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    record: RecordTarget = None,
    on_event: Callable[[Event], Any] | None = None,
    kill_grace: float = 2.0,
    request_timeout: float | None = None,
    max_pending_bytes: int | None = None,
    probe: str | None = AUTO_PROBE,
    reconnect: Reconnect | None = None,
) -> AsyncIterator[tuple[Any, Any, Peer]]:
    """Like :func:`stdio_client`, also yielding the :class:`mcpping.Peer`.

    The peer learns the protocol version and the server's name from the
    handshake the session runs (``peer.protocol_version``, ``peer.name``,
    ``peer.info()``).
    """
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    encoding, errors = server.encoding, server.encoding_error_handler

    def on_message(frame: bytes) -> None:
        # Runs on the loop, in arrival order; the buffer is unbounded so
        # order holds without awaiting here.
        item: SessionMessage | Exception
        try:
            text = frame.decode(encoding, errors)
            item = SessionMessage(decode(text))
        except ValueError as exc:
            item = exc
        try:
            read_writer.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    peer = Peer(
        [server.command, *server.args],
        keepalive=keepalive,
        env=get_default_environment() | (server.env or {}),
        cwd=server.cwd,
        stderr=_stderr_target(errlog),
        record=record,
        ping_timeout=keepalive.timeout if isinstance(keepalive, KeepAlive) else 5.0,
        request_timeout=request_timeout,
        kill_grace=kill_grace,
        on_message=on_message,
        on_close=lambda info: read_writer.close(),
        on_event=on_event,
        max_pending_bytes=max_pending_bytes,
        probe=probe,
        reconnect=reconnect,
    )

    async def stdin_writer() -> None:
        async with write_reader:
            async for msg in write_reader:
                data = encode(msg.message)
                try:
                    peer.send(data.encode(encoding, errors))
                    # Backpressure: the next message waits while the
                    # server is not keeping up.
                    await peer.drain()
                except Exception:
                    # The server is gone: end the session's read side too.
                    read_writer.close()
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin_writer)
            try:
                yield read_stream, write_stream, peer
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await peer.close()
            read_writer.close()
            write_stream.close()


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    record: RecordTarget = None,
    on_event: Callable[[Event], Any] | None = None,
    request_timeout: float | None = None,
    max_pending_bytes: int | None = None,
    probe: str | None = AUTO_PROBE,
    reconnect: Reconnect | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawns an MCP server and yields the streams ``mcp.ClientSession`` takes.

    Same parameters and streams as ``mcp.client.stdio.stdio_client``, plus
    ``keepalive`` (None: off), ``record`` (governance records: path, callable
    or None for the ``mcpping`` logger), ``on_event`` (every Event),
    ``probe`` (the idle probe on sessions without ping: "auto", a method
    name, or None for none), ``request_timeout`` (seconds, None: off: the
    engine's deadline for every request the session sends; past it the
    server gets ``notifications/cancelled`` and the session a -32001 error,
    so ``ClientSession`` raises ``MCPError``) and ``max_pending_bytes``
    (backpressure, default 16 MiB) and ``reconnect`` (a
    :class:`mcpping.Reconnect`, default None: off): a server that fails is
    spawned again under the same ``ClientSession``, with no code change;
    requests in flight then fail with a -32003 error (``MCPError``). It works under ``mcp.Client`` in every mode:
    on a 2026-07-28 session (no ping) liveness comes from traffic, the
    idle ``server/discover`` probe and the server process's state.
    Raises :class:`mcpping.SpawnError` (an OSError) if the server cannot start.
    """
    async with stdio_peer(server, errlog, keepalive=keepalive, record=record,
                          on_event=on_event, probe=probe, request_timeout=request_timeout,
                          max_pending_bytes=max_pending_bytes,
                          reconnect=reconnect) as (read_stream, write_stream, _peer):
        yield read_stream, write_stream
