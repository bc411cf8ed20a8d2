"""The queue behind ``Peer.messages()``, and what keeps it from deadlocking.

With open iterators each queued frame keeps its bytes counted against its
connection's max_pending_bytes, so a reader that is behind pauses its
server. A task that awaits an answer coming through the runtime (a
request's, a ping's, a drain's) must not be such a reader: the answer would
wait behind the queue forever, so its queues stop counting while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections import deque
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .peer import Peer

_log = logging.getLogger("mcpping")

# Tasks awaiting an answer that comes through the runtime's items (a
# request's, a ping's, a drain's), each with how many; and the messages()
# queues whose frames count against their connection. A queue whose own
# reader awaits such an answer must not pause its server: the answer would
# wait behind the queue forever.
awaiting: dict[asyncio.Task[Any], int] = {}
charging: set["Inbox"] = set()


def uncharge_readers(task: asyncio.Task[Any]) -> None:
    """``task`` now awaits an answer: the queues it reads stop counting."""
    for inbox in list(charging):
        if task in inbox.reader_tasks:
            inbox.uncharge_all()


@contextlib.contextmanager
def awaiting_answer(loop: asyncio.AbstractEventLoop | None = None
                     ) -> Generator[None, None, None]:
    # With the loop given, current_task skips get_running_loop, whose pid
    # check is a getpid() system call on every ping.
    task = asyncio.current_task(loop)
    if task is None:
        yield
        return
    awaiting[task] = awaiting.get(task, 0) + 1
    uncharge_readers(task)
    try:
        yield
    finally:
        n = awaiting.pop(task) - 1
        if n:
            awaiting[task] = n


class Inbox:
    """The queue of frames behind :meth:`Peer.messages`.

    With readers (open iterators) each frame keeps its bytes counted
    against the connection's max_pending_bytes until a reader takes it, so
    a reader that is behind pauses this server (and no other): nothing is
    dropped and the runtime's cap bounds the queue. Without readers nothing
    is counted, the newest frames are kept within ``bound`` bytes and the
    oldest dropped, counted.
    """

    def __init__(self, peer: Peer, bound: int) -> None:
        self.peer = peer
        self.bound = bound
        #: (frame, bytes it keeps counted), oldest first.
        self.frames: deque[tuple[bytes, int]] = deque()
        self.size = 0
        #: Bytes the queued frames keep counted in the runtime.
        self.charged = 0
        self.readers = 0
        self.dropped = 0
        self.ended = False
        #: The tasks that iterate messages() (those a pause could deadlock).
        self.reader_tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
        self._waiters: deque[asyncio.Future[None]] = deque()

    def put(self, frame: bytes) -> None:
        charged = 0
        if self.readers and not self.ended and \
                not any(t in awaiting for t in self.reader_tasks):
            charged = self.peer._charge(len(frame))
            if charged and not self.charged:
                charging.add(self)
            self.charged += charged
        self.frames.append((frame, charged))
        self.size += len(frame)
        if not self.readers and self.size > self.bound:
            self._trim()
        self._wake()

    def _trim(self) -> None:
        """Drops the oldest frames nobody asked for, down to the bound."""
        n = 0
        while self.size > self.bound and len(self.frames) > 1:
            frame, charged = self.frames.popleft()
            self.size -= len(frame)
            self._give_back(charged)
            n += 1
        if not n:
            return
        before, self.dropped = self.dropped, self.dropped + n
        # A warning at each power of two: a flood says so without a line each.
        if before.bit_length() != self.dropped.bit_length():
            _log.warning("mcpping: %s: messages dropped so far: %d (nobody iterates "
                         "messages(); kept: the newest %d bytes)",
                         self.peer.name, self.dropped, self.bound)

    def _give_back(self, charged: int) -> None:
        if charged:
            self.charged -= charged
            if not self.charged:
                charging.discard(self)
            if not self.ended:
                self.peer._uncharge(charged)

    def uncharge_all(self) -> None:
        """Counts none of the queued frames any more (reading resumes)."""
        if not self.charged:
            return
        charged, self.charged = self.charged, 0
        charging.discard(self)
        self.frames = deque((frame, 0) for frame, _ in self.frames)
        if not self.ended:
            self.peer._uncharge(charged)

    def _wake(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    async def get(self) -> bytes | None:
        """The oldest frame; None once the connection closed and all are taken."""
        while not self.frames:
            if self.ended:
                return None
            fut: asyncio.Future[None] = self.peer.loop.create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                # Its wake-up (if it had one) goes to the next waiter.
                if fut.done() and not fut.cancelled():
                    self._wake()
                raise
        frame, charged = self.frames.popleft()
        self.size -= len(frame)
        self._give_back(charged)
        if self.frames:
            self._wake()  # another reader may wait
        return frame

    def subscribe(self) -> None:
        self.readers += 1

    def unsubscribe(self) -> None:
        self.readers -= 1
        if not self.readers:
            self.uncharge_all()
            self._trim()

    def end(self) -> None:
        # The connection is gone: nothing counts any more.
        self.ended = True
        self.charged = 0
        charging.discard(self)
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)


class Messages:
    """One :meth:`Peer.messages` iterator: asks for messages while open."""

    def __init__(self, inbox: Inbox) -> None:
        self._inbox: Inbox | None = inbox
        inbox.subscribe()

    def __aiter__(self) -> "Messages":
        return self

    async def __anext__(self) -> dict[str, Any]:
        if self._inbox is None:
            raise StopAsyncIteration
        task = asyncio.current_task()
        if task is not None:
            self._inbox.reader_tasks.add(task)
        frame = await self._inbox.get()
        if frame is None:
            self._close()
            raise StopAsyncIteration
        try:
            return json.loads(frame)  # type: ignore[no-any-return]
        except (ValueError, RecursionError):
            # Not JSON Python can read (or nested past its recursion limit):
            # handed over as text rather than lost.
            return {"_unparsed": frame.decode("utf-8", "replace")}

    async def aclose(self) -> None:
        """Stops asking: what arrives after is kept only up to the bound."""
        self._close()

    def _close(self) -> None:
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            inbox.unsubscribe()

    def __del__(self) -> None:
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            # Garbage collection may run on any thread: unsubscribe on the loop.
            try:
                inbox.peer.loop.call_soon_threadsafe(inbox.unsubscribe)
            except RuntimeError:
                pass  # the loop is closed
