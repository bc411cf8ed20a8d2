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

import asyncio
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio

# The installed mcp's major (1.x or 2.x) is chosen there, once.
from . import _native
from ._mcp import SessionMessage, StdioServerParameters, decode, encode, get_default_environment
from .events import Event
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive
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


class _Reader:
    """Hands the server's messages to the session's zero-buffer stream, in order.

    A message goes straight into the session's hand when it waits for one;
    otherwise it waits here, and the pump task sends it when the session
    takes it. A message waiting here keeps its bytes counted against the
    connection's max_pending_bytes until then, so a session that is behind
    pauses its server (the runtime's cap bounds what waits here).
    """

    def __init__(self, writer: Any, peer: Peer) -> None:
        self.writer = writer
        self.peer = peer
        #: (item, bytes it keeps counted), oldest first.
        self.items: deque[tuple[Any, int]] = deque()
        self.ended = False
        self.stopped = False
        self._wakeup = asyncio.Event()

    def put(self, item: Any, size: int) -> None:
        if self.stopped:
            return
        if not self.items:
            try:
                self.writer.send_nowait(item)
                return
            except anyio.WouldBlock:
                pass
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self.stop()  # the session is gone: nobody reads any more
                return
        self.items.append((item, self.peer._charge(size)))
        self._wakeup.set()

    def end(self) -> None:
        """The connection closed: the stream ends after what waits here."""
        self.ended = True
        self._wakeup.set()

    def stop(self) -> None:
        """Nobody reads any more: drop what waits, count none of it."""
        self.stopped = True
        items, self.items = self.items, deque()
        self.peer._uncharge(sum(charged for _, charged in items))
        self._wakeup.set()

    async def pump(self) -> None:
        try:
            while not self.stopped:
                if not self.items:
                    if self.ended:
                        break
                    self._wakeup.clear()
                    await self._wakeup.wait()
                    continue
                item, charged = self.items[0]
                await self.writer.send(item)
                self.items.popleft()
                self.peer._uncharge(charged)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.stop()
            return
        finally:
            if self.items and not self.ended:
                self.stop()  # cancelled: what waits is read by nobody
        self.writer.close()


class _Writer:
    """The session's write stream: each message goes to the peer in the
    sender's own ``send``, in order, with no task in between.

    The SDK's stdio transport (and this adapter before) hands every message
    through a zero-buffer stream to a writer task: one more loop turn per
    request. Here ``send`` waits, cancellably, while earlier messages are
    still queued (the writer task was busy: the message was not yet taken),
    then hands the message over, which commits it, and waits until it is
    handed to the native runtime (backpressure). When the server is gone,
    the message is dropped as the writer task dropped it, the read side
    ends, and later sends raise ``BrokenResourceError``, as they did then.
    """

    def __init__(self, peer: Peer, encoding: str, errors: str, reader: "_Reader",
                 state: dict[str, Any] | None = None) -> None:
        self._peer = peer
        self._encoding = encoding
        self._errors = errors
        self._reader = reader
        self._closed = False
        # Shared by clones: one peer, one broken flag.
        self._state = state if state is not None else {"broken": False}

    def _check(self) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._state["broken"]:
            raise anyio.BrokenResourceError

    def _commit(self, msg: Any) -> None:
        data = encode(msg.message)
        try:
            self._peer.send(data.encode(self._encoding, self._errors))
        except Exception:
            self._broken()

    def _broken(self) -> None:
        # The server is gone: end the session's read side too.
        self._state["broken"] = True
        self._reader.end()

    async def send(self, msg: Any) -> None:
        self._check()
        peer = self._peer
        try:
            while peer._outbox:
                await peer.drain()
        except Exception:
            self._broken()
            return
        self._check()
        self._commit(msg)
        if peer._outbox and not self._state["broken"]:
            try:
                await peer.drain()
            except Exception:
                self._broken()

    def send_nowait(self, msg: Any) -> None:
        self._check()
        if self._peer._outbox:
            raise anyio.WouldBlock
        self._commit(msg)

    def clone(self) -> "_Writer":
        self._check()
        return _Writer(self._peer, self._encoding, self._errors, self._reader, self._state)

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self.close()

    def __enter__(self) -> "_Writer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "_Writer":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()


@asynccontextmanager
async def stdio_peer(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    record: RecordTarget = None,
    on_event: Callable[[Event], Any] | None = None,
    kill_grace: float = _native.DEFAULT_KILL_GRACE_MS / 1000,
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
    # Zero-buffered, as the official SDK's stdio transport: the session takes
    # each message from the sender's hand, so a session that is behind
    # pushes back (through _Reader) to the server.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    encoding, errors = server.encoding, server.encoding_error_handler

    def on_message(frame: bytes) -> None:
        # Runs on the loop, in arrival order.
        item: SessionMessage | Exception
        try:
            text = frame.decode(encoding, errors)
            item = SessionMessage(decode(text))
        except ValueError as exc:
            item = exc
        reader.put(item, len(frame))

    peer = Peer(
        [server.command, *server.args],
        keepalive=keepalive,
        env=get_default_environment() | (server.env or {}),
        cwd=server.cwd,
        stderr=_stderr_target(errlog),
        record=record,
        ping_timeout=keepalive.timeout if isinstance(keepalive, KeepAlive) else PING_TIMEOUT,
        request_timeout=request_timeout,
        kill_grace=kill_grace,
        on_message=on_message,
        on_close=lambda info: reader.end(),
        on_event=on_event,
        max_pending_bytes=max_pending_bytes,
        probe=probe,
        reconnect=reconnect,
    )

    # The callbacks above run on later loop turns only.
    reader = _Reader(read_writer, peer)
    write_stream = _Writer(peer, encoding, errors, reader)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader.pump)
            try:
                yield read_stream, write_stream, peer
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            reader.stop()
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
