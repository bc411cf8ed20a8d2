"""Hands items from the native I/O thread to the asyncio loops that own them.

The native runtime writes a byte to a pipe when its queue turns non-empty.
Every asyncio loop with a live connection watches that pipe with
``add_reader``; whichever wakes first drains the whole batch and routes each
connection's items to its own loop (directly, or ``call_soon_threadsafe``
when the connection lives on another loop). A closed loop just loses its
items; nothing here can block the I/O thread, which never takes the GIL.

A connection whose own bounded queue is full (``messages()``, the SDK
adapter's read stream) takes a hold: while any hold is taken no loop drains,
so the runtime pauses each connection once its undrained bytes reach half of
its ``max_pending_bytes`` (backpressure to the server, which is not blamed
for the silence). The runtime's drain is process-wide, so the hold is too:
every connection's items wait until the consumer that is behind makes room.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from typing import Any, Protocol

from . import _native

__all__ = ["Handle", "attach", "detach", "hold", "release", "shutdown"]


class Handle(Protocol):
    """What a connection object offers to the dispatcher."""

    loop: asyncio.AbstractEventLoop

    def _feed(self, batch: list[tuple[Any, ...]]) -> None:
        """Processes this connection's items, oldest first, on its loop."""


_lock = threading.Lock()
_loops: dict[asyncio.AbstractEventLoop, int] = {}
# Whoever holds (a connection whose consumer is behind), and the loops
# that stopped watching the wake pipe because of it.
_holders: set[object] = set()
_parked: set[asyncio.AbstractEventLoop] = set()
# Batches drained and not yet fed, per connection (by id), in drain order.
_pending: dict[int, tuple[Handle, list[list[tuple[Any, ...]]]]] = {}


def attach(loop: asyncio.AbstractEventLoop) -> None:
    """Makes ``loop`` watch the wake pipe (counted per connection)."""
    with _lock:
        n = _loops.get(loop, 0)
        if n == 0:
            loop.add_reader(_native.wake_fd(), _on_wake, loop)
        _loops[loop] = n + 1


def detach(loop: asyncio.AbstractEventLoop) -> None:
    """Drops one connection's interest; the last one unregisters the loop."""
    with _lock:
        n = _loops.get(loop, 0) - 1
        if n > 0:
            _loops[loop] = n
            return
        _loops.pop(loop, None)
        _parked.discard(loop)
    if not loop.is_closed():
        try:
            loop.remove_reader(_native.wake_fd())
        except (RuntimeError, ValueError, OSError):
            pass


def hold(holder: object) -> None:
    """Stops draining until ``holder`` releases (its consumer is behind)."""
    with _lock:
        _holders.add(holder)


def release(holder: object) -> None:
    """Ends ``holder``'s hold; with none left, parked loops drain again."""
    with _lock:
        if holder not in _holders:
            return
        _holders.discard(holder)
        if _holders:
            return
        parked = list(_parked)
        _parked.clear()
    for loop in parked:
        try:
            loop.call_soon_threadsafe(_rearm, loop)
        except RuntimeError:
            pass  # closed: nothing left to drain for


def held() -> bool:
    """True while some consumer holds the runtime's items back."""
    return bool(_holders)


def _rearm(loop: asyncio.AbstractEventLoop) -> None:
    with _lock:
        if loop not in _loops or loop in _parked:
            return
    loop.add_reader(_native.wake_fd(), _on_wake, loop)
    # The runtime notifies once per drain, and none ran: drain now.
    _on_wake(loop)


def _on_wake(loop: asyncio.AbstractEventLoop) -> None:
    """Drains every queued item and routes it by connection."""
    with _lock:
        park = bool(_holders)
        if park:
            _parked.add(loop)
    if park:
        # Not drained: the runtime keeps the items (and stops reading at
        # its cap). The wake pipe stays readable, so stop watching it.
        loop.remove_reader(_native.wake_fd())
        return
    batches: dict[int, tuple[Handle, list[tuple[Any, ...]]]] = {}
    for item in _native.drain():
        handle = item[0]
        entry = batches.get(id(handle))
        if entry is None:
            batches[id(handle)] = (handle, [item])
        else:
            entry[1].append(item)
    routed = list(batches.values())
    for n, (handle, batch) in enumerate(routed):
        try:
            _route(loop, handle, batch, now=True)
        except BaseException:
            # KeyboardInterrupt or SystemExit from user code: the other
            # connections' items still go out, on the next loop steps.
            for later, rest in routed[n + 1:]:
                _route(loop, later, rest, now=False)
            raise


def _route(loop: asyncio.AbstractEventLoop, handle: Handle, batch: list[tuple[Any, ...]],
           now: bool) -> None:
    """Feeds ``batch`` to ``handle`` on its own loop (at once if that is ``loop``).

    Two loops may drain one after the other, each taking some of a
    connection's items: the batches wait in ``_pending`` in drain order and
    one flush on the connection's loop feeds them, so a later batch drained
    on the connection's own loop never overtakes an earlier one still on
    its way from another thread.
    """
    with _lock:
        entry = _pending.get(id(handle))
        if entry is None:
            _pending[id(handle)] = (handle, [batch])
        else:
            entry[1].append(batch)
            return  # a flush is due and takes this batch too
    if handle.loop is loop:
        if now:
            _flush(handle)
        else:
            loop.call_soon(_flush, handle)
        return
    try:
        handle.loop.call_soon_threadsafe(_flush, handle)
    except RuntimeError:
        # Its loop is closed: nobody is left to tell.
        with _lock:
            _pending.pop(id(handle), None)


def _flush(handle: Handle) -> None:
    """Feeds ``handle`` every batch routed to it, oldest first, on its loop."""
    while True:
        with _lock:
            entry = _pending.get(id(handle))
            if entry is None or not entry[1]:
                _pending.pop(id(handle), None)
                return
            batch = entry[1][0]
        try:
            handle._feed(batch)
        except BaseException:
            # KeyboardInterrupt or SystemExit from user code: the feed
            # queued the rest of its batch; the later batches follow it.
            with _lock:
                entry[1].pop(0)
            handle.loop.call_soon(_flush, handle)
            raise
        with _lock:
            entry[1].pop(0)


def shutdown() -> None:
    """Closes every connection (killing their servers) and stops the thread."""
    _native.shutdown()


def _after_fork_child() -> None:
    # The parent's loops and connections are not ours; start from scratch.
    global _lock
    _lock = threading.Lock()
    _loops.clear()
    _holders.clear()
    _parked.clear()
    _pending.clear()
    _native.after_fork_child()


os.register_at_fork(after_in_child=_after_fork_child)
atexit.register(shutdown)
