"""Hands items from the native I/O thread to the asyncio loops that own them.

The native runtime writes a byte to a pipe when its queue turns non-empty.
Every asyncio loop with a live connection watches that pipe with
``add_reader``; whichever wakes first drains the whole batch and routes each
connection's items to its own loop (directly, or ``call_soon_threadsafe``
when the connection lives on another loop). A closed loop just loses its
items; nothing here can block the I/O thread, which never takes the GIL.

A connection's items count against its ``max_pending_bytes`` until its own
loop has processed them (``_native.release`` after ``_feed``), not until
some loop drained them: a blocked loop's connections stay paused while the
other loops' connections run. A frame a connection keeps in a bounded queue
of its own (``messages()``, the SDK adapter's read side) stays counted until
the application takes it, so a consumer that is behind pauses its own
server and no other.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from typing import Any, Protocol

from . import _native

__all__ = ["Handle", "attach", "detach", "shutdown"]


class Handle(Protocol):
    """What a connection object offers to the dispatcher."""

    loop: asyncio.AbstractEventLoop

    def _feed(self, batch: list[tuple[Any, ...]], charge: int) -> None:
        """Processes this connection's items, oldest first, on its loop, and
        gives back (``_native.release``) the part of ``charge`` it does not keep."""


_lock = threading.Lock()
_loops: dict[asyncio.AbstractEventLoop, int] = {}
# Batches drained and not yet fed, per connection (by id), in drain order,
# each with its connection id and charge.
_pending: dict[int, tuple[Handle, list[tuple[list[tuple[Any, ...]], int, int]]]] = {}


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
    if not loop.is_closed():
        try:
            loop.remove_reader(_native.wake_fd())
        except (RuntimeError, ValueError, OSError):
            pass


def _on_wake(loop: asyncio.AbstractEventLoop) -> None:
    """Drains every queued item and routes it by connection."""
    routed = _native.drain()
    for n, (handle, conn_id, charge, batch) in enumerate(routed):
        try:
            _route(loop, handle, batch, conn_id, charge, now=True)
        except BaseException:
            # KeyboardInterrupt or SystemExit from user code: the other
            # connections' items still go out, on the next loop steps.
            for later, later_id, later_charge, rest in routed[n + 1:]:
                _route(loop, later, rest, later_id, later_charge, now=False)
            raise


def _route(loop: asyncio.AbstractEventLoop, handle: Handle, batch: list[tuple[Any, ...]],
           conn_id: int, charge: int, now: bool) -> None:
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
            _pending[id(handle)] = (handle, [(batch, conn_id, charge)])
        else:
            entry[1].append((batch, conn_id, charge))
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
        # Its loop is closed: nobody is left to tell, nor to hold the bytes.
        with _lock:
            entry = _pending.pop(id(handle), None)
        for _, cid, c in entry[1] if entry else ():
            _native.release(cid, c)


def _flush(handle: Handle) -> None:
    """Feeds ``handle`` every batch routed to it, oldest first, on its loop.

    Each batch's charge goes with it: the handle gives back what it does
    not keep (a frame waiting in a bounded queue of its own keeps its bytes
    counted until the application takes it).
    """
    while True:
        with _lock:
            entry = _pending.get(id(handle))
            if entry is None or not entry[1]:
                _pending.pop(id(handle), None)
                return
            batch, conn_id, charge = entry[1][0]
        try:
            handle._feed(batch, charge)
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
    _pending.clear()
    _native.after_fork_child()


os.register_at_fork(after_in_child=_after_fork_child)
atexit.register(shutdown)
