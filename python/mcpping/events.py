"""Events a connection reports, and the hub that hands them to listeners."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "EVENT_NAMES", "EventHub", "EventStream"]

logger = logging.getLogger("mcpping")

#: The public event names (docs/design.md), plus the two extra engine events.
EVENT_NAMES = (
    "ping", "pong", "timeout", "ping_error", "unsupported", "ping_answered",
    "suspect", "stale", "recovered", "closed", "request_timeout", "initialized",
)


@dataclass(frozen=True)
class Event:
    """One thing that happened on a connection.

    ``rtt`` and ``timeout`` are in seconds. ``invalid`` marks a ``ping_error``
    whose pong had no object result. ``disposition`` says what became of the
    in-flight application requests (``continued``, ``cancelled``,
    ``in_doubt``).
    """

    name: str
    state: str
    ping_seq: int = 0
    manual: bool = False
    rtt: float | None = None
    timeout: float | None = None
    code: int | None = None
    message: str | None = None
    invalid: bool = False
    ping_id: str | None = None
    failure_count: int = 0
    in_flight: int = 0
    disposition: str = "continued"
    #: How a ping ended, for its final event (``pong``, ``timeout``,
    #: ``error``, ``invalid``, ``unsupported``, ``closed``: abandoned because
    #: the connection closed), else None.
    outcome: str | None = None

    @classmethod
    def from_native(cls, d: dict[str, Any]) -> "Event":
        """Builds an Event from the dict the native layer produces."""
        name = d["type"]
        return cls(
            name=name,
            state=d["state"],
            ping_seq=d["ping_seq"],
            manual=d["manual"],
            rtt=d["rtt_us"] / 1e6 if name == "pong" else None,
            timeout=d["timeout_ms"] / 1000 if d["timeout_ms"] else None,
            code=d["error_code"] if name in ("ping_error", "unsupported", "closed") else None,
            message=d["message"],
            invalid=d["invalid"],
            ping_id=d["id"],
            failure_count=d["failure_count"],
            in_flight=d["in_flight"],
            disposition=d["disposition"],
            outcome=d.get("outcome"),
        )


Listener = Callable[[Event], Any]


class EventHub:
    """Delivers events to callbacks (``on``) and async iterators (``events``)."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[Listener]] = {}
        self._queues: list[tuple[asyncio.Queue[Event | None], frozenset[str]]] = []
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()

    def on(self, name: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(event)`` for every event named ``name`` ("*" for all).

        A coroutine function is run as a task. Returns a function that removes
        the listener.
        """
        if name != "*" and name not in EVENT_NAMES:
            raise ValueError(f"unknown event {name!r}; one of {', '.join(EVENT_NAMES)}")
        self._listeners.setdefault(name, []).append(callback)

        def off() -> None:
            lst = self._listeners.get(name, [])
            if callback in lst:
                lst.remove(callback)

        return off

    def events(self, *names: str) -> "EventStream":
        """An async iterator over events (all, or only those named) until ``closed``.

        It subscribes when created, so events emitted before the first
        ``__anext__`` are not lost.
        """
        return EventStream(self, frozenset(names))

    def emit(self, ev: Event) -> None:
        """Hands ``ev`` to every matching listener and iterator."""
        for cb in [*self._listeners.get(ev.name, ()), *self._listeners.get("*", ())]:
            try:
                res = cb(ev)
                if inspect.isawaitable(res):
                    task = asyncio.ensure_future(res)
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
            except Exception:
                # A broken listener must not break liveness reporting.
                logger.exception("mcpping event listener for %r failed", ev.name)
        for q, names in self._queues:
            if not names or ev.name in names:
                q.put_nowait(ev)
        if ev.name == "closed":
            self.finish()

    def finish(self) -> None:
        """Ends every iterator (after the events already queued)."""
        self._closed = True
        for q, _ in self._queues:
            q.put_nowait(None)


class EventStream:
    """Async iterator over one hub's events; ends after ``closed``."""

    def __init__(self, hub: EventHub, names: frozenset[str]) -> None:
        self._hub = hub
        self._q: asyncio.Queue[Event | None] = asyncio.Queue()
        self._entry = (self._q, names)
        if hub._closed:
            self._q.put_nowait(None)
        else:
            hub._queues.append(self._entry)

    def __aiter__(self) -> "EventStream":
        return self

    async def __anext__(self) -> Event:
        ev = await self._q.get()
        if ev is None:
            self._q.put_nowait(None)
            await self.aclose()
            raise StopAsyncIteration
        return ev

    async def aclose(self) -> None:
        """Unsubscribes."""
        if self._entry in self._hub._queues:
            self._hub._queues.remove(self._entry)
