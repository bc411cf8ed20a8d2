"""mcpping.guard: liveness as middleware over any transport's streams.

``guard`` sits between a transport (stdio, Streamable HTTP, in-memory, ...)
and an MCP session, in either role. It answers the peer's pings, pings the
peer on keepalive, forwards every other message untouched and in order, and
when the peer goes stale (``on_stale="close"``) it ends the session's
streams so a server drops a dead client's session.

The server role needs the session's own streams: wrap them where you create
the session (``server.run(read, write, ...)`` over stdio, an in-memory pair,
or your own transport). The SDK's Streamable HTTP session manager creates
each session's streams internally and offers no hook to wrap them. Over
Streamable HTTP the ``Mcp-Session-Id`` travels in headers the streams do not
carry: pass it with ``Guard.set_session_id()`` to have records name it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import asyncio

from . import _check, _native
from ._driver import EngineDriver
from .events import Event, Listener
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive
from .records import RecordTarget
from .stats import Stats

__all__ = ["guard", "Guard"]


class _Codec:
    """Converts stream items to JSON frames and back.

    ``sdk`` streams carry mcp's SessionMessage (or Exception on the read
    side); ``json`` streams carry dicts.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "sdk":
            from . import _mcp

            self._mcp = _mcp
        else:
            _check.choice("codec", kind, ("sdk", "json"))

    def encode(self, item: Any) -> bytes:
        if self.kind == "sdk":
            return self._mcp.encode(item.message).encode()
        return json.dumps(item, separators=(",", ":")).encode()

    def decode(self, frame: bytes) -> Any:
        if self.kind == "sdk":
            return self._mcp.SessionMessage(self._mcp.decode(frame))
        return json.loads(frame)


class Guard:
    """The running middleware: state, stats, events and manual pings."""

    def __init__(self, driver: EngineDriver) -> None:
        self._driver = driver

    @property
    def state(self) -> str:
        """``alive``, ``suspect``, ``stale`` or ``closed``."""
        return self._driver.state

    @property
    def stats(self) -> Stats:
        """Ping counts and RTT figures."""
        return self._driver.stats

    def info(self) -> dict[str, Any]:
        """The engine's counters and flags, ``healthy`` included."""
        return self._driver.info()

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(Event)`` for each ``event`` ("*": all)."""
        return self._driver.on(event, callback)

    def events(self, *names: str) -> AsyncIterator[Event]:
        """Async iterator over events, ending at ``closed``."""
        return self._driver.events(*names)

    async def ping(self, timeout: float | None = None) -> float:
        """Pings the peer now; returns the RTT in seconds."""
        return await self._driver.ping(timeout)

    def set_session_id(self, session_id: str) -> None:
        """Sets the session id (Mcp-Session-Id) printed in records."""
        self._driver.set_session_id(session_id)


@asynccontextmanager
async def guard(
    read_stream: Any,
    write_stream: Any,
    *,
    role: Literal["client", "server"] = "client",
    keepalive: KeepAlive | None = KeepAlive(),
    transport: Literal["stdio", "streamable-http", "custom"] = "custom",
    codec: Literal["sdk", "json"] = "sdk",
    ping_timeout: float = PING_TIMEOUT,
    request_timeout: float | None = None,
    peer_name: str | None = None,
    record: RecordTarget = None,
    probe: str | None = AUTO_PROBE,
    session_id: str | None = None,
    _reachable: Callable[[], bool] | None = None,
) -> AsyncIterator[tuple[Any, Any, Guard]]:
    """Wraps a transport's (read_stream, write_stream) for a session.

    Yields ``(read_stream, write_stream, guard)``: give the two streams to the
    session (``ClientSession`` or a server session) in place of the
    transport's. Pings are answered and sent underneath; all other messages
    pass through in order. The streams are anyio memory object streams.
    The handshake the session runs (``initialize`` or ``server/discover``)
    tells the engine the protocol version and the peer's name; on a session
    without ping (2026-07-28, or a peer that refuses it) keepalive sends the
    idle ``probe`` instead ("auto", a method name, or None for none) and
    counts all traffic as proof of life. ``session_id`` (e.g. the
    Mcp-Session-Id) is printed in the records from the start.
    """
    import anyio

    c = _Codec(codec)
    if session_id is not None:
        _check.text("session_id", session_id)
    # Zero-buffered, as the SDK's own transports: pump_in waits for the
    # session to take each message, so a session that is behind pushes back
    # to the transport instead of piling messages up here.
    to_session, session_read = anyio.create_memory_object_stream[Any](0)
    session_write, from_session = anyio.create_memory_object_stream[Any](0)
    outbound: asyncio.Queue[Any] = asyncio.Queue()
    done = anyio.Event()

    def engine_send(kind: int, frame: bytes) -> None:
        if kind == _native.MCPP_FRAME_PING and _reachable is not None and not _reachable():
            # Nothing would carry this ping to the peer: it is answered
            # "unsupported" here (soon, outside the engine's callback),
            # so keepalive stops and the peer is never convicted for it.
            asyncio.get_running_loop().call_soon(answer_unreachable, _native.ping_unreachable_answer(frame))
            return
        outbound.put_nowait(c.decode(frame))

    def answer_unreachable(answer: bytes | None) -> None:
        if answer is not None and driver.state != "closed":
            driver.recv(answer)

    def deliver(frame: bytes, kind: str) -> None:
        # A synthetic error answer for an application request that timed out.
        item = c.decode(frame)
        try:
            to_session.send_nowait(item)
        except anyio.WouldBlock:
            # The session is not waiting: hand it over when it takes it
            # (one task per timed-out request, so bounded by the requests).
            # This runs in an engine callback (a timer's too): no anyio
            # context to start a task in, so an asyncio task it is.
            task = asyncio.get_running_loop().create_task(send_later(item))
            late.add(task)
            task.add_done_callback(late.discard)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    late: set[asyncio.Task[None]] = set()

    async def send_later(item: Any) -> None:
        try:
            await to_session.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def stale() -> None:
        # Called only when the engine's stale policy says to close.
        done.set()

    driver = EngineDriver(engine_send, keepalive=keepalive, role=role, transport=transport,
                          ping_timeout=ping_timeout, request_timeout=request_timeout,
                          peer_name=peer_name, record=record, deliver=deliver, on_stale=stale,
                          probe=probe)
    if session_id is not None:
        driver.set_session_id(session_id)

    async def pump_in() -> None:
        try:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await to_session.send(item)
                    continue
                if driver.recv(c.encode(item)):
                    await to_session.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            done.set()

    async def pump_session() -> None:
        try:
            async for item in from_session:
                driver.observe_outbound(c.encode(item))
                outbound.put_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            done.set()

    async def pump_out() -> None:
        # One writer keeps engine frames and session frames in one order.
        try:
            while True:
                item = await outbound.get()
                await write_stream.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            done.set()

    async def pumps() -> None:
        async with anyio.create_task_group() as inner:
            inner.start_soon(pump_in)
            inner.start_soon(pump_session)
            inner.start_soon(pump_out)
            await done.wait()
            inner.cancel_scope.cancel()
        # The peer is gone (stale or EOF): end the session's read stream so
        # the session finishes on its own, and let the transport go.
        to_session.close()
        if driver.state == "stale":
            driver.close(driver.stale_reason, _native.MCPP_ERR_STALE)
            with anyio.CancelScope(shield=True):
                try:
                    await write_stream.aclose()
                except Exception:
                    pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(pumps)
        try:
            yield session_read, session_write, Guard(driver)
        finally:
            done.set()
            driver.close(_native.TRANSPORT_CLOSED_REASON)  # a no-op after a stale close
            for task in list(late):
                task.cancel()  # answers nobody will read now
            to_session.close()
            from_session.close()
