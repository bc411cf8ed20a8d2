"""Events a connection reports, and the hub that hands them to listeners."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from . import _isolation, _native

__all__ = ["Event", "EVENT_NAMES", "EventHub", "EventStream"]

#: The public event names (docs/design.md), plus the extra engine events:
#: requests, the handshake, the idle probe of sessions without ping, and
#: the detector's verdicts short of stale (``ping_deaf``, ``busy``): C's
#: names (mcpp_event_name), in the enum's order.
EVENT_NAMES: tuple[str, ...] = _native.EVENT_NAMES

# Events whose ``code`` is the peer's JSON-RPC code (native ``rpc_code``);
# every other event's is our own MCPP_ERR_* code (native ``error``).
_RPC_CODED = ("ping_error", "unsupported", "probe_ok")
# Events whose code is meaningful even when 0.
_CODED = ("ping_error", "unsupported", "closed")


@dataclass(frozen=True)
class Event:
    """One thing that happened on a connection.

    ``rtt`` and ``timeout`` are in seconds. ``code`` is, by event: the
    peer's JSON-RPC code for ``ping_error``, ``unsupported`` and a
    ``probe_ok`` answered with an error; our MCPP_ERR_* code for ``closed``
    (0 for a requested close) and for a ``timeout`` whose ping the close
    abandoned (MCPP_ERR_CLOSED); else None. ``invalid`` marks a ``ping_error``
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
    proof: str | None = None
    #: ``reconnecting``/``reconnected``: the attempt (1 for the first after
    #: a failure); ``reconnecting``: the wait before it, in seconds;
    #: ``reconnected``: the new server's pid.
    attempt: int | None = None
    delay: float | None = None
    pid: int | None = None

    @classmethod
    def from_native(cls, d: dict[str, Any]) -> "Event":
        """Builds an Event from the dict the native layer produces."""
        name = d["type"]
        c = d["rpc_code"] if name in _RPC_CODED else d["error"]
        return cls(
            name=name,
            state=d["state"],
            ping_seq=d["ping_seq"],
            manual=d["manual"],
            rtt=d["rtt_us"] / 1e6 if name in ("pong", "probe_ok") else None,
            timeout=d["timeout_ms"] / 1000 if d["timeout_ms"] else None,
            # A ``timeout`` carries MCPP_ERR_CLOSED when the close abandoned the ping.
            code=c if c or name in _CODED else None,
            message=d["message"],
            invalid=d["invalid"],
            ping_id=d["id"],
            failure_count=d["failure_count"],
            in_flight=d["in_flight"],
            disposition=d["disposition"],
            outcome=d.get("outcome"),
            proof=d.get("proof"),
            attempt=d.get("reconnect_attempt") or None,
            delay=d.get("delay_ms", 0) / 1000 if name == "reconnecting" else None,
            pid=(d.get("pid") or None) if name == "reconnected" else None,
        )


Listener = Callable[[Event], Any]

#: Sees every connection open and close: ``tap.opened(hub)``,
#: ``tap.closed(hub)``. mcpping.metrics sets it, and gives each hub a cell
#: that C counts the connection's events into (no event is tapped here).
tap: Any = None

# Hubs whose owner follows who listens (EventHub.changed), told when the
# tap comes or goes.
_followed: "weakref.WeakSet[EventHub]" = weakref.WeakSet()
# Every open hub, for a tap set after they opened.
_hubs: "weakref.WeakSet[EventHub]" = weakref.WeakSet()


def set_tap(new: Any) -> None:
    """Sets :data:`tap`, shows it every open hub, and tells every followed
    hub that its listeners changed."""
    global tap
    tap = new
    if new is not None:
        for hub in list(_hubs):
            if not hub._closed and hub.figures is None:
                new.opened(hub)
    for hub in list(_followed):
        hub._changed()


class EventHub:
    """Delivers events to callbacks (``on``) and async iterators (``events``)."""

    def __init__(self, source: Any = None, *, peer: str | None = None,
                 transport: str = "custom",
                 report: _isolation.Reporter | None = None) -> None:
        #: Who reports (a Peer or an engine driver, whose ``info()`` is
        #: live), and the labels mcpping.metrics files its figures under.
        self.source = source
        self.peer = peer
        self.transport = transport
        #: The C cell this connection's figures are counted into (set by
        #: mcpping.metrics), and how its owner makes C count into it.
        self.figures: Any = None
        self._count_into: Callable[[Any], None] | None = None
        self._listeners: dict[str, list[Listener]] = {}
        self._queues: list[tuple[asyncio.Queue[Event | None], frozenset[str]]] = []
        self._closed = False
        #: Called when who listens may have changed (a listener or iterator
        #: came or went, the tap): a Peer keeps its ping events in C while
        #: nobody wants them. Set with follow().
        self.changed: Callable[[], None] | None = None
        # Where a listener's exception goes: the loop's exception handler
        # (also an exporter's, which the tally learns when it opens).
        self._report = report or _isolation.reporter(asyncio.get_running_loop())
        _hubs.add(self)
        if tap is not None:
            tap.opened(self)

    def count_into(self, attach: Callable[[Any], None]) -> None:
        """The owner's way to make C count its events into a metrics cell
        (the runtime's connection or the engine), once it has one."""
        self._count_into = attach
        if self.figures is not None:
            attach(self.figures)

    def count_into_cell(self, cell: Any) -> None:
        """Counts this connection's figures into ``cell`` (mcpping.metrics)."""
        self.figures = cell
        if self._count_into is not None:
            self._count_into(cell)

    def on(self, name: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(event)`` for every event named ``name`` ("*" for all).

        A coroutine function is run as a task. An exception the listener
        raises goes to the loop's exception handler; the other listeners and
        the events after it are delivered as usual. Returns a function that
        removes the listener.
        """
        if name != "*" and name not in EVENT_NAMES:
            raise ValueError(f"unknown event {name!r}; one of {', '.join(EVENT_NAMES)}")
        self._listeners.setdefault(name, []).append(callback)
        self._changed()

        def off() -> None:
            lst = self._listeners.get(name, [])
            if callback in lst:
                lst.remove(callback)
                self._changed()

        return off

    def follow(self, changed: Callable[[], None]) -> None:
        """Calls ``changed()`` whenever who listens may have changed."""
        self.changed = changed
        _followed.add(self)

    def _changed(self) -> None:
        if self.changed is not None:
            self.changed()

    def events(self, *names: str) -> "EventStream":
        """An async iterator over events (all, or only those named) until ``closed``.

        It subscribes when created, so events emitted before the first
        ``__anext__`` are not lost.
        """
        return EventStream(self, frozenset(names))

    def wants(self, name: str) -> bool:
        """Whether an event called ``name`` would reach anyone (a listener,
        an iterator; metrics are counted in C): the hot path skips building
        one that nobody would see."""
        if self._listeners and (self._listeners.get(name) or self._listeners.get("*")):
            return True
        # No generator when nobody iterates: this runs twice per ping.
        return bool(self._queues) and any(not names or name in names
                                          for _, names in self._queues)

    def emit(self, ev: Event) -> None:
        """Hands ``ev`` to every matching listener and iterator."""
        for cb in [*self._listeners.get(ev.name, ()), *self._listeners.get("*", ())]:
            _isolation.call(self._report, f"the listener for {ev.name!r}", cb, ev)
        # A copy: an iterator that becomes garbage meanwhile leaves the list.
        for q, names in list(self._queues):
            if not names or ev.name in names:
                q.put_nowait(ev)
        if ev.name == "closed":
            self.finish()

    def finish(self) -> None:
        """Ends every iterator (after the events already queued)."""
        if tap is not None and not self._closed:
            try:
                tap.closed(self)
            except Exception as exc:  # the iterators below must still end
                self._report("mcpping: the metrics tally raised", exc)
        self._closed = True
        _hubs.discard(self)
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
            hub._changed()

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
        self._unsubscribe()

    def _unsubscribe(self) -> None:
        try:
            self._hub._queues.remove(self._entry)
        except ValueError:
            return  # already gone
        self._hub._changed()

    def __del__(self) -> None:
        # An iterator nobody holds (left with ``break``) is read by nobody:
        # its queue must not keep every later event until the close.
        self._unsubscribe()
