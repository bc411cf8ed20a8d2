"""mcpping.reaper: the server role over Streamable HTTP, ending dead clients' sessions.

The official SDK's ``StreamableHTTPSessionManager`` keeps a session until
the client sends DELETE, or until nothing has been in flight for its
``session_idle_timeout``. A client that died without a DELETE while its GET
listening stream was open, or behind a proxy that keeps the stream up,
holds its session, its server task and its memory until then (30 minutes
by default; never with ``None``). :class:`SessionReaper` puts the engine in
the server role under each session the manager opens: it answers the
client's pings, pings an idle client on keepalive, and when the client went
stale (``failures`` consecutive pings unanswered) it ends the session, so
the manager forgets it and its resources are freed.

A server's ping reaches the client only on the client's GET listening
stream. Until the client opens one, its silence is not held against it
(no keepalive ping, nothing times out); a client that has opened none
within ``stream_grace`` of the session's start is "unsupported", never "stale" (the manager's own idle timeout still bounds
such sessions). A client whose stream was open and then dropped is pinged
as before: a live client opens it again, a dead one does not answer.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from . import _check, _native
from .events import Event
from .guard import Guard, guard
from .keepalive import PING_TIMEOUT, KeepAlive
from .records import RecordSink, RecordTarget

__all__ = ["SessionReaper"]

#: What a session listener gets: the session id and the event.
SessionListener = Callable[[str, Event], Any]


class SessionReaper:
    """Watches every session of one ``StreamableHTTPSessionManager``.

    Create it right after the manager, before the manager serves (``async
    with manager.run()``, the Starlette lifespan): it watches the sessions
    opened from then on. ``keepalive`` is the policy for each session
    (``on_stale="close"`` ends a stale session; ``"report"`` only reports
    it); ``ping_timeout`` bounds each manual :meth:`Guard.ping`; ``record``
    takes the governance records of every session (one JSONL file, a
    callable, or None for the ``mcpping`` logger), each naming its
    ``session_id``. ``stream_grace`` (seconds; None: ``interval + timeout
    * failures``) is how long a new client has to open its listening
    stream before it is "unsupported".
    """

    def __init__(self, manager: Any, *, keepalive: KeepAlive = KeepAlive(),
                 ping_timeout: float = PING_TIMEOUT, record: RecordTarget = None,
                 stream_grace: float | None = None) -> None:
        if not isinstance(keepalive, KeepAlive):
            raise TypeError(f"keepalive must be a KeepAlive, not {type(keepalive).__name__} {keepalive!r}")
        _check.seconds("ping_timeout", ping_timeout)
        _check.optional_seconds("stream_grace", stream_grace,
                                none="interval + timeout x failures")
        if stream_grace is None:
            ka = keepalive.settings()
            stream_grace = _native.stale_bound_ms(ka["interval_ms"], ka["timeout_ms"], ka["failures"]) / 1000
        self._grace = stream_grace
        admit = getattr(manager, "_admit_session", None)
        if not callable(admit) or not isinstance(getattr(manager, "_server_instances", None), dict):
            raise TypeError("manager must be an mcp StreamableHTTPSessionManager (mcp >= 2.3), "
                            f"not {type(manager).__name__}")
        if getattr(manager, "stateless", False):
            raise ValueError("a stateless StreamableHTTPSessionManager has no sessions to reap")
        if getattr(admit, "_mcpping_reaper", None) is not None:
            raise ValueError("this manager already has a SessionReaper")
        self._manager = manager
        self._keepalive = keepalive
        self._ping_timeout = ping_timeout
        self._record = record
        self._sink: RecordSink | None = None
        self._guards: dict[str, Guard] = {}
        self._listeners: list[tuple[str, SessionListener]] = []
        #: Sessions this reaper ended because their client went stale.
        self.reaped = 0

        def admit_watched(*args: Any, **kwargs: Any) -> Any:
            transport = admit(*args, **kwargs)
            if transport is not None:
                self._watch(transport)
            return transport

        admit_watched._mcpping_reaper = self  # type: ignore[attr-defined]
        manager._admit_session = admit_watched

    # ------------------------------------------------------------ public

    @property
    def sessions(self) -> dict[str, Guard]:
        """The sessions watched now, by session id (a copy)."""
        return dict(self._guards)

    def on(self, event: str, callback: SessionListener) -> Callable[[], None]:
        """Calls ``callback(session_id, Event)`` for each ``event`` of every
        session ("*": all), sessions opened later included; returns a remover."""
        entry = (event, callback)
        self._listeners.append(entry)

        def remove() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)

        return remove

    # ------------------------------------------------------------ internals

    def _watch(self, transport: Any) -> None:
        """Wraps the new session's connect() so its streams run through a
        guard, and its GET handler so the guard learns of the stream."""
        session_id = transport.mcp_session_id
        inner_connect = transport.connect
        inner_get = transport._handle_get_request
        ka = self._keepalive
        grace = self._grace  # how long a new client has to open its listening stream
        seen_stream = False
        current: list[Guard] = []

        def stream_opened() -> None:
            nonlocal seen_stream
            if not seen_stream:
                seen_stream = True
                for g in current:
                    g._driver.set_reading(True)

        def grace_over() -> None:
            # Still no stream: keepalive may ping now, and the ping that
            # finds no stream is answered "unsupported" (never "stale").
            for g in current:
                if g.state != "closed":
                    g._driver.set_reading(True)

        def reachable() -> bool:
            # The stream the server's pings travel on was opened: a live
            # client that lost it opens it again, a dead one does not.
            return seen_stream

        async def handle_get(*args: Any, **kwargs: Any) -> Any:
            stream_opened()
            return await inner_get(*args, **kwargs)

        @asynccontextmanager
        async def connect() -> AsyncIterator[tuple[Any, Any]]:
            if self._sink is None:
                self._sink = RecordSink(self._record)
            async with inner_connect() as (read, write):
                async with guard(read, write, role="server", keepalive=ka,
                                 transport="streamable-http", codec="sdk",
                                 ping_timeout=self._ping_timeout, record=self._sink,  # type: ignore[arg-type]
                                 probe=None, session_id=session_id,
                                 _reachable=reachable) as (g_read, g_write, g):
                    # No stream yet: the silence is ours, not the client's.
                    g._driver.set_reading(seen_stream)
                    timer = asyncio.get_running_loop().call_later(grace, grace_over)
                    current.append(g)
                    self._guards[session_id] = g
                    g.on("*", lambda ev: self._emit(session_id, ev))
                    g.on("closed", lambda ev: self._closed(ev, transport))
                    try:
                        yield g_read, g_write
                    finally:
                        timer.cancel()
                        current.remove(g)
                        self._guards.pop(session_id, None)

        transport.connect = connect
        transport._handle_get_request = handle_get

    def _closed(self, ev: Event, transport: Any) -> None:
        """The guard closed a stale session (its policy said close): end the
        transport too, so its open HTTP responses end and the manager
        forgets the session."""
        if ev.code != _native.MCPP_ERR_STALE:
            return
        self.reaped += 1
        if not transport.is_terminated:
            task = asyncio.ensure_future(transport.terminate())
            task.add_done_callback(_retrieve)

    def _emit(self, session_id: str, ev: Event) -> None:
        for name, callback in list(self._listeners):
            if name in ("*", ev.name):
                result = callback(session_id, ev)
                if inspect.isawaitable(result):
                    asyncio.ensure_future(result).add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Reads a finished task's outcome so an error is logged, never lost."""
    if not task.cancelled() and task.exception() is not None:
        loop = asyncio.get_running_loop()
        loop.call_exception_handler({"message": "mcpping.reaper: a session task failed",
                                     "exception": task.exception()})
