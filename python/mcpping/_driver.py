"""The sans-I/O engine driven on an asyncio loop (guard and HTTP pinging).

The engine reads no clock and arms no timer: this driver feeds it
``time.monotonic_ns() // 1000`` and re-arms one ``loop.call_at`` whenever the
engine's next deadline moves earlier, the lazy re-arm the C driver uses.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from . import _check, _native
from .errors import PeerClosed, ping_refusal
from .events import Event, EventHub, Listener
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive, now_us, settings as make_settings
from .peer import _ping_outcome
from .records import RecordSink, RecordTarget
from .stats import Stats

__all__ = ["EngineDriver"]


class EngineDriver:
    """An Engine plus its timer, events, stats, records and pending pings."""

    def __init__(
        self,
        send: Callable[[int, bytes], None],
        *,
        keepalive: KeepAlive | None,
        role: str = "client",
        transport: str = "custom",
        ping_timeout: float = PING_TIMEOUT,
        request_timeout: float | None = None,
        peer_name: str | None = None,
        record: RecordTarget | RecordSink = None,
        deliver: Callable[[bytes, str], None] | None = None,
        on_stale: Callable[[], None] | None = None,
        probe: str | None = AUTO_PROBE,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self._ping_timeout = ping_timeout
        self._events = EventHub(self, peer=peer_name, transport=transport)
        self._stats = Stats()
        self._state = "alive"
        # A sink shared by many connections (the reaper's) stays open at our close.
        self._own_records = not isinstance(record, RecordSink)
        self._records = record if isinstance(record, RecordSink) else RecordSink(record)
        self._pings: dict[int, asyncio.Future[float]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: int | None = None
        self._on_stale = on_stale
        s = make_settings(keepalive, role=role, transport=transport, ping_timeout=ping_timeout,
                          request_timeout=request_timeout, peer_name=peer_name, probe=probe)
        self.engine = _native.Engine(s, send, self._event, self._records.write, deliver, now_us())
        # Metrics are counted by the engine (mcpping.metrics' cell).
        self._events.count_into(functools.partial(_native.metrics_attach_engine, self.engine))
        self._arm()

    # ------------------------------------------------------------ public

    @property
    def state(self) -> str:
        """``alive``, ``suspect``, ``stale`` or ``closed``."""
        return self._state

    @property
    def stats(self) -> Stats:
        """Ping counts and RTT figures."""
        return self._stats

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(Event)`` for each ``event`` ("*": all); returns a remover."""
        return self._events.on(event, callback)

    def events(self, *names: str) -> AsyncIterator[Event]:
        """Async iterator over events, ending at ``closed``."""
        return self._events.events(*names)

    def info(self) -> dict[str, Any]:
        """The engine's counters and flags, ``healthy`` included."""
        return self.engine.info(now_us())

    def recv(self, frame: bytes) -> bool:
        """Feeds an inbound frame; True if the application should get it."""
        try:
            return self.engine.recv(frame, now_us()) == 0
        finally:
            self._arm()

    def observe_outbound(self, frame: bytes, timeout_ms: int = 0) -> None:
        """Tells the engine the application sends ``frame``.

        A request is timed by the engine: ``timeout_ms`` (checked by the
        caller; 0: ``request_timeout``). On expiry it sends
        ``notifications/cancelled`` and delivers a -32001 error answer.
        """
        try:
            self.engine.observe_outbound(frame, now_us(), timeout_ms)
        finally:
            self._arm()

    def cancel_request(self, request_id: Any) -> bool:
        """Abandons an in-flight request (cancelled on the wire, a -32800
        answer delivered); False if it is not in flight."""
        id_json = json.dumps(request_id, separators=(",", ":")).encode()
        try:
            return self.engine.cancel_request(id_json, now_us())
        finally:
            self._arm()

    def fail_request(self, request_id: Any) -> bool:
        """Fails an in-flight request whose answer cannot come any more (an
        in-doubt or cancelled -32003 answer delivered, nothing sent); False
        if it is not in flight."""
        id_json = json.dumps(request_id, separators=(",", ":")).encode()
        try:
            return self.engine.fail_request(id_json, now_us())
        finally:
            self._arm()

    def awaits(self, frame: bytes) -> bool:
        """True while frame, a request that went out (our ping or probe, an
        application request), still waits for its answer."""
        return self.engine.awaits(frame)

    def unreadable(self) -> str | None:
        """Which frames from the server were not JSON-RPC (C's sentence),
        None if none: what a handshake that timed out says it met."""
        return self.engine.unreadable() or None

    def set_session_id(self, session_id: str) -> None:
        """Sets the session id printed in records."""
        self.engine.set_session_id(session_id)

    def record_reconnect(self) -> None:
        """Emits a ``reconnect`` record (the session was initialized again)."""
        self.engine.record_reconnect(now_us())

    def set_reading(self, reading: bool) -> None:
        """False while the peer cannot be heard or reached through no fault
        of its own: no keepalive ping goes out and nothing times out."""
        self.engine.set_reading(reading, now_us())
        self._arm()

    def touch(self) -> None:
        """Bytes that are no message arrived (an SSE comment): proof of life only."""
        self.engine.touch(now_us())
        self._arm()

    async def ping(self, timeout: float | None = None) -> float:
        """Pings the peer; returns the RTT in seconds or raises a PingFailure."""
        timeout_ms = _check.seconds("timeout", self._ping_timeout if timeout is None else timeout)
        try:
            seq = self.engine.ping(timeout_ms, now_us())
        except _native.NativeError as e:
            raise ping_refusal(e.args[0]) from None
        finally:
            self._arm()
        fut = self._pings.get(seq)
        if fut is None:
            # The outcome may already be known (a synchronous send error).
            fut = self._pings[seq] = self.loop.create_future()
        try:
            return await fut
        finally:
            self._pings.pop(seq, None)

    @property
    def stale_reason(self) -> str:
        """Why the connection went stale, the reason to close it with (C's)."""
        return self.engine.stale_reason()

    def close(self, reason: str | None = None, err: int = 0) -> None:
        """Marks the connection closed; emits ``closed`` once."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.engine.close(err, reason, now_us())
        for fut in self._pings.values():
            if not fut.done():
                fut.set_exception(PeerClosed(_native.PING_CLOSED_MESSAGE))
        self._events.finish()
        if self._own_records:
            self._records.close()

    # ------------------------------------------------------------ internals

    def _event(self, d: dict[str, Any]) -> None:
        ev = Event.from_native(d)
        self._state = ev.state
        self._stats.observe(d)
        if ev.name == "ping" and ev.manual:
            self._pings.setdefault(ev.ping_seq, self.loop.create_future())
        if ev.manual and ev.name in ("pong", "timeout", "ping_error", "unsupported"):
            fut = self._pings.get(ev.ping_seq)
            if fut is None:
                fut = self._pings[ev.ping_seq] = self.loop.create_future()
            if not fut.done():
                out = _ping_outcome(ev)
                if isinstance(out, BaseException):
                    fut.set_exception(out)
                else:
                    fut.set_result(out)
        self._events.emit(ev)
        # The stale policy is the C core's: close on on_stale="close", and
        # always when the server's process is gone.
        if self._on_stale is not None and self.engine.should_close(d):
            self.loop.call_soon(self._on_stale)

    def _arm(self) -> None:
        """Re-arms the timer only when the deadline moved earlier (or none is armed)."""
        d = self.engine.next_deadline()
        if d is None or self._state == "closed":
            return
        if self._timer is not None and self._timer_at is not None and self._timer_at <= d:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = d
        # loop.time() is time.monotonic(), the engine's clock in seconds.
        self._timer = self.loop.call_at(d / 1e6, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._timer_at = None
        try:
            self.engine.on_timer(now_us())
        except _native.NativeError:
            pass  # a failed send; the transport reports its own errors
        self._arm()
