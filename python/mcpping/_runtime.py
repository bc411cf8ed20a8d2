"""Runs the native runtime on the asyncio loop, and hands items to the loops that own them.

Host mode (issue 21, the default): while exactly one asyncio loop has
connections, that loop's thread runs the runtime's own loop. It watches the
runtime's descriptor with ``add_reader`` and makes one native call per wake
(``_native.host_turn``: a non-blocking turn, then a drain); commands (send,
ping, close) run inline in the native call that issues them, which arms a
loop timer through ``_arm`` when the runtime needs a turn sooner than one is
armed. Each connection's stdout is watched by the loop too (``_watch``:
``add_reader`` on an fd the runtime hands over) and read by its thread
directly (``_native.host_read_ready``, the reader callback itself), so a ping's answer costs no turn of the
runtime's loop. No thread hop on a round trip. The native I/O thread only watches:
when the loop leaves work waiting for 20 ms (blocked by synchronous code),
it runs the runtime itself (answering the server's pings, keepalive, ...)
and wakes the loop through the wake pipe below until the loop turns again.

Thread mode (the fallback: a second loop with connections in another
thread, a loop without ``add_reader``, MCPPING_HOST_MODE=0, SIGPIPE at its
default action): the native I/O thread runs the runtime. ``runtime_mode()``
says which mode and why.

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
import functools
import os
import threading
from typing import Any, Protocol

from . import _native

__all__ = ["Handle", "attach", "detach", "host_stats", "runtime_mode", "shutdown"]


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

# Host mode: the loop that runs the runtime (None: thread mode), the
# runtime's descriptor it watches, and its one armed turn (a handle of
# call_soon or call_later, on the host's thread only).
_home: asyncio.AbstractEventLoop | None = None
_home_fd = -1
# Host mode: the connections' fds the runtime asked a loop to watch (it
# reads them itself through _native.host_read_ready), and on which loop.
_fds: dict[int, asyncio.AbstractEventLoop] = {}
_timer: asyncio.Handle | None = None
# Why this binding keeps thread mode, when the runtime itself did not refuse
# host mode (None: the runtime's own reason stands).
_why: str | None = None

# What woke the host (_native.host_turn's argument).
_READY, _WAKE, _TIMER = 0, 1, 2


def attach(loop: asyncio.AbstractEventLoop) -> None:
    """Makes ``loop`` watch the wake pipe (counted per connection).

    The first loop with connections hosts the runtime (host mode); a second
    one, in another thread, puts it back on the I/O thread (thread mode).
    Called on ``loop``'s thread, from a coroutine.
    """
    with _lock:
        n = _loops.get(loop, 0)
        if n == 0:
            loop.add_reader(_native.wake_fd(), _on_wake, loop)
        _loops[loop] = n + 1
        if n:
            return
        # A closed loop's connections are lost to it (their items go
        # nowhere): it does not keep the runtime off this one.
        live = sum(1 for other in _loops if not other.is_closed())
        if live == 1:
            if _home is not None:
                _unhost("thread mode: the event loop that ran it was closed")
            _host(loop)
        else:
            # One runtime loop, one host: several asyncio loops share the
            # runtime through the I/O thread.
            _unhost(f"thread mode: {live} asyncio event loops have connections "
                    f"(host mode needs exactly one)")
    # Whatever the old host left undrained (it may be blocked) comes out here.
    loop.call_soon(_on_wake, loop)


def detach(loop: asyncio.AbstractEventLoop) -> None:
    """Drops one connection's interest; the last one unregisters the loop."""
    global _why
    rehost = None
    with _lock:
        n = _loops.get(loop, 0) - 1
        if n > 0:
            _loops[loop] = n
            return
        _loops.pop(loop, None)
        live = [other for other in _loops if not other.is_closed()]
        if _home is loop:
            _unhost("thread mode: no asyncio event loop has a connection")
        elif _home is None and len(live) == 1:
            # Back to one loop: it may host again (on its own thread).
            rehost = live[0]
        elif not live and _why is not None:
            _why = "thread mode: no asyncio event loop has a connection"
    if not loop.is_closed():
        try:
            loop.remove_reader(_native.wake_fd())
        except (RuntimeError, ValueError, OSError):
            pass
    if rehost is not None:
        try:
            rehost.call_soon_threadsafe(_rehost, rehost)
        except RuntimeError:
            pass  # closed: it hosts nothing any more


def runtime_mode() -> tuple[str, str]:
    """``("host", why)`` or ``("thread", why)``: who runs the native runtime now.

    host: the asyncio loop's own thread (one asyncio loop has connections);
    the native thread only takes over while that loop is blocked. thread:
    the native I/O thread, e.g. several loops in several threads have
    connections, MCPPING_HOST_MODE=0 is set, or no loop has one yet.
    """
    mode, why = _native.runtime_mode()
    if mode == "thread" and _why is not None:
        why = _why
    return mode, why


def host_stats() -> dict[str, int]:
    """Host mode counters: ``takeovers`` (the native thread ran the runtime
    for a blocked loop), ``host_turns``, ``inline_commands``, ``host_reads``
    (a connection's fd read by the loop's thread itself)."""
    return _native.host_stats()


def _running(loop: asyncio.AbstractEventLoop) -> bool:
    return asyncio._get_running_loop() is loop


def _host(loop: asyncio.AbstractEventLoop) -> None:
    """Makes ``loop`` run the runtime (``_lock`` held, on its thread)."""
    global _home, _home_fd, _why
    if not _running(loop):
        _why = "thread mode: the connection was made outside the running event loop"
        return
    _home = loop
    try:
        fd = _native.host_attach(_arm, _watch)
    except _native.NativeError as e:
        fd, _why = None, f"thread mode: cannot attach to the event loop: {e.args[1]}"
    else:
        _why = None  # a refusal is the runtime's to explain
    if fd is None:
        _home = None
        return
    try:
        loop.add_reader(fd, _on_ready, loop)
    except (NotImplementedError, RuntimeError, ValueError, OSError):
        _home = None
        _native.host_detach()
        _why = "thread mode: this event loop cannot watch a descriptor (add_reader)"
        return
    _home_fd = fd


def _unhost(why: str) -> None:
    """Puts the runtime back on the I/O thread (``_lock`` held, any thread)."""
    global _home, _why
    home, fd = _home, _home_fd
    if home is None and _why is None:
        return  # the runtime refused host mode: its reason stands
    _why = why
    if home is None:
        return
    _home = None
    _native.host_detach()
    try:
        if _running(home):
            home.call_soon(_stop_watching, home, fd)
        else:
            home.call_soon_threadsafe(_stop_watching, home, fd)
    except RuntimeError:
        pass  # closed: it watches nothing any more


def _stop_watching(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    """On a former host's thread: forget its descriptor and armed turn,
    then drain what it had yet to (its items are no longer announced)."""
    global _timer
    with _lock:
        if _home is loop:
            return  # hosting again meanwhile: the same descriptor, watched
        timer = None
        if _home is None:  # else the armed turn is the new host's
            timer, _timer = _timer, None
    if timer is not None:
        timer.cancel()
    if not loop.is_closed():
        for conn_fd, owner in list(_fds.items()):
            if owner is loop:
                _unwatch(conn_fd)
        try:
            loop.remove_reader(fd)
        except (RuntimeError, ValueError, OSError):
            pass
        _on_wake(loop)


def _rehost(loop: asyncio.AbstractEventLoop) -> None:
    """On ``loop``'s thread: host again if it is the only loop left."""
    with _lock:
        if _home is None and loop in _loops and not any(
                other is not loop and not other.is_closed() for other in _loops):
            _host(loop)


def _arm(ms: int) -> bool:
    """Called by the native module on the host's thread: turn within ``ms``.

    Returns whether a turn is armed; it replaces the one armed before (the
    native side calls only when the new one is sooner).
    """
    global _timer
    loop = _home
    if loop is None or loop.is_closed():
        return False
    if _timer is not None:
        _timer.cancel()
    if ms:
        _timer = loop.call_later(ms / 1000, _on_timer, loop)
    else:
        _timer = loop.call_soon(_on_timer, loop)
    return True


def _watch(fd: int, on: int) -> None:
    """Called by the native module on the host's thread: watch a
    connection's fd (``host_read_ready`` when it is readable), or stop (the fd
    is closed right after)."""
    if not on:
        _unwatch(fd)
        return
    loop = _home
    if loop is None or loop.is_closed():
        return  # the native thread reads it when it takes over
    # The reader is C itself: a read that queued nothing (a keepalive pong
    # nobody listens to) runs no Python code.
    loop.add_reader(fd, _native.host_read_ready, fd, functools.partial(_dispatch, loop))
    _fds[fd] = loop


def _unwatch(fd: int) -> None:
    loop = _fds.pop(fd, None)
    if loop is not None and not loop.is_closed():
        try:
            loop.remove_reader(fd)
        except (RuntimeError, ValueError, OSError):
            pass


def _on_ready(loop: asyncio.AbstractEventLoop) -> None:
    """The runtime's descriptor is readable: one turn, then dispatch."""
    _dispatch(loop, _native.host_turn(_READY))


def _on_timer(loop: asyncio.AbstractEventLoop) -> None:
    """The armed turn is due."""
    global _timer
    if _home is loop:
        _timer = None
    _dispatch(loop, _native.host_turn(_TIMER))


def _on_wake(loop: asyncio.AbstractEventLoop) -> None:
    """The wake pipe: a turn if this loop hosts (the I/O thread took over
    while it was blocked, and now hands the runtime back), else a drain."""
    _dispatch(loop, _native.host_turn(_WAKE))


def _dispatch(loop: asyncio.AbstractEventLoop, routed: list[list[Any]]) -> None:
    """Routes every drained item by connection."""
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
    key = id(handle)
    if now and handle.loop is loop:
        # The common case (host mode: always): fed here and now. The empty
        # entry makes batches routed meanwhile queue behind this one.
        with _lock:
            entry = _pending.get(key)
            if entry is not None:
                entry[1].append((batch, conn_id, charge))
                return  # a flush is due and takes this batch too
            entry = _pending[key] = (handle, [])
        try:
            handle._feed(batch, charge)
        except BaseException:
            # As in _flush: the feed queued the rest of its batch.
            loop.call_soon(_flush, handle)
            raise
        with _lock:
            if entry[1]:
                later = True
            else:
                later = False
                _pending.pop(key, None)
        if later:
            _flush(handle)
        return
    with _lock:
        entry = _pending.get(key)
        if entry is None:
            _pending[key] = (handle, [(batch, conn_id, charge)])
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
    with _lock:
        _unhost("thread mode: the runtime was shut down")
    _native.shutdown()


def _after_fork_child() -> None:
    # The parent's loops and connections are not ours; start from scratch.
    # Its host loop is not ours either: the child starts in thread mode and
    # never touches that loop (its selector is shared with the parent's).
    global _lock, _home, _home_fd, _timer, _why
    _lock = threading.Lock()
    _loops.clear()
    _pending.clear()
    _home, _home_fd, _timer, _why = None, -1, None, None
    _native.after_fork_child()


os.register_at_fork(after_in_child=_after_fork_child)
atexit.register(shutdown)
