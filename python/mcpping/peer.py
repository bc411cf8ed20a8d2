"""A spawned stdio MCP server, kept alive by the native I/O thread."""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Mapping, Sequence
from typing import IO, Any, Generic, Literal, Protocol, TypeVar, Union

from . import _check, _isolation, _native, _rpc, _runtime
from ._inbox import Inbox, Messages, awaiting, awaiting_answer, charging, uncharge_readers
from . import reconnect as _reconnect
from . import _handshake
from .errors import (
    MCPPingError, PeerClosed, PingError, PingInvalid, PingTimeout, PingUnsupported,
    SpawnError, ping_refusal,
)
from .events import Event, EventHub, Listener
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive, probe_method, settings as make_settings
from .records import RecordSink, RecordTarget
from .stats import Stats

__all__ = ["Peer", "connect", "CloseInfo", "HandshakeError", "PROTOCOL_VERSION", "CLIENT_INFO"]

#: The protocol version mcpping asks for in initialize (C's).
PROTOCOL_VERSION = _native.PROTOCOL_VERSION
CLIENT_INFO = {"name": "mcpping", "version": _native.VERSION}
#: A request's and the handshake's deadlines when the caller names none (C's).
REQUEST_TIMEOUT = _native.REQUEST_TIMEOUT_MS / 1000
INITIALIZE_TIMEOUT = _native.INITIALIZE_TIMEOUT_MS / 1000

_MESSAGE, _EVENT, _RECORD, _STDERR, _CLOSED, _PING_FAILED, _WRITABLE = range(7)
_STDERR_MODES = {"inherit": 0, "ignore": 2}
_tokens = itertools.count(1)
_log = logging.getLogger("mcpping")
#: "inherit" (the server writes to our stderr), "ignore", a text stream, or a
#: callable taking each chunk as str.
StderrTarget = Union[Literal["inherit", "ignore"], IO[str], Callable[[str], Any]]


class ServesNoRequests:
    """An ``on_message`` for an owner that serves no requests from the
    server (the commands): each one is answered -32601 Method not found at
    once, as Node's Peer answers one nobody listens for, so the server does
    not wait for an answer that never comes. Every frame, requests
    included, still goes to ``fn`` (if given)."""

    def __init__(self, fn: Callable[[bytes], Any] | None = None) -> None:
        self.fn = fn

    def __call__(self, frame: bytes) -> None:
        if self.fn is not None:
            self.fn(frame)


#: An ``on_message`` that keeps nothing and serves no requests: for a Peer
#: whose owner reads none of what the server sends unasked (the commands),
#: which would otherwise wait for messages(), up to half of
#: max_pending_bytes, and be warned about as it is dropped.
discard = ServesNoRequests()


class HandshakeError(MCPPingError):
    """The initialize handshake failed (error answer, timeout or close)."""


class CloseInfo:
    """Why a connection closed, and how its server process ended."""

    def __init__(self, err: int, reason: str, exit_status: int, term_signal: int) -> None:
        self.err = err
        self.reason = reason
        self.exit_status = exit_status
        self.term_signal = term_signal
        #: True when the engine closed it because the peer went stale.
        self.stale = err == _native.MCPP_ERR_STALE

    def __repr__(self) -> str:
        return (f"CloseInfo(err={self.err}, reason={self.reason!r}, "
                f"exit_status={self.exit_status}, term_signal={self.term_signal})")


def _check_size(name: str, value: int | None) -> int:
    """An optional byte budget (None: the default), checked by the C table's row."""
    return 0 if value is None else int(_check.setting(name, name, value))


def _ping_outcome(ev: Event) -> BaseException | float:
    """Maps a manual ping's final event to its RTT or the exception to raise.

    The C core decides the outcome (``ev.outcome``); this only translates it.
    """
    if ev.outcome == "pong":
        return ev.rtt or 0.0
    if ev.outcome == "closed":
        return PeerClosed(_native.PING_CLOSED_MESSAGE)
    if ev.outcome == "timeout":
        return PingTimeout(ev.timeout or 0.0)
    if ev.outcome == "invalid":
        return PingInvalid(ev.message)
    if ev.outcome == "error":
        return PingError(ev.code or 0, ev.message or "")
    return PingUnsupported(ev.code or None, ev.message)


class Peer:
    """One MCP server spawned over stdio and watched by mcpping.

    Create it with :func:`connect`. Pings to and from the server are sent,
    answered and timed on the native I/O thread, so they keep working while
    this thread is busy. Everything else the server sends is forwarded, in
    order, to :meth:`messages` (or to the ``on_message`` callback).
    """

    #: Always None: a server that is spawned was never out of reach (an
    #: HttpPeer's says why its server could not be reached).
    fatal: BaseException | None = None

    def __init__(
        self,
        command: Sequence[str],
        *,
        keepalive: KeepAlive | None,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        inherit_env: bool = True,
        stderr: StderrTarget,
        record: RecordTarget,
        ping_timeout: float,
        request_timeout: float | None,
        kill_grace: float,
        on_message: Callable[[bytes], Any] | None,
        on_close: Callable[[CloseInfo], Any] | None,
        on_event: Listener | None = None,
        max_pending_bytes: int | None = None,
        max_line_bytes: int | None = None,
        probe: str | None = AUTO_PROBE,
        reconnect: _reconnect.Reconnect | None = None,
    ) -> None:
        _reconnect.check(reconnect)
        if isinstance(command, (str, bytes)) or not command:
            raise ValueError("command must be a non-empty list: [program, arg, ...]")
        for i, arg in enumerate(command):
            if not isinstance(arg, (str, os.PathLike)):
                raise TypeError(f"command[{i}] must be a str or os.PathLike, not {arg!r}")
        for k, v in (env or {}).items():
            if not isinstance(k, str) or not isinstance(v, str) or "=" in k or not k:
                raise TypeError(f"env must map non-empty names without '=' to str values, "
                                f"not {k!r}: {v!r}")
        _check.flag("inherit_env", inherit_env)
        for name, fn in (("on_message", on_message), ("on_close", on_close),
                         ("on_event", on_event)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable or None, not {fn!r}")
        pending = _check_size("max_pending_bytes", max_pending_bytes)
        self.loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()  # the loop's: ping() checks it cheaply
        self._command = [os.fspath(c) for c in command]
        #: serverInfo.name once known, else the program's basename.
        self.name: str = os.path.basename(self._command[0])
        #: The initialize result's serverInfo, once the handshake ran.
        self.server_info: dict[str, Any] | None = None
        #: The negotiated protocol version, once the handshake ran.
        self.protocol_version: str | None = None
        self._modern = False  # a 2026-07-28 session: requests carry the envelope
        self.keepalive = keepalive
        self._ping_timeout = ping_timeout
        self._ping_timeout_ms = 0  # _ping_timeout in ms, once checked
        # Errors of user code (and of record files) go to the loop's
        # exception handler, naming this peer; delivery goes on.
        self._report = _isolation.reporter(self.loop, peer=self)
        self._events = EventHub(self, peer=self.name, transport="stdio", report=self._report)
        if on_event is not None:
            # Subscribed before the spawn, so no early event is missed.
            self._events.on("*", on_event)
        self._stats = Stats()
        self._state = "alive"
        self._records = RecordSink(record, self._report)
        self._pings: dict[int, asyncio.Future[float]] = {}
        # The application's requests (given up: their late answers, and the
        # engine's error answer to an abort, are not the app's).
        self._requests = _rpc.Requests(self.loop)
        # Frames the runtime refused (its outbound queue was full), in
        # order, with each one's request timeout; sent on WRITABLE.
        self._outbox: deque[tuple[bytes, int]] = deque()
        self._drain_waiters: list[asyncio.Future[None]] = []
        #: What of the batch being fed still counts against max_pending_bytes.
        self._budget = 0
        # What messages() has yet to yield. Asked for, its frames count
        # against max_pending_bytes until taken; not, it keeps half of it.
        self._inbox = Inbox(self, (pending or _native.DEFAULT_MAX_PENDING_BYTES) // 2)
        self._on_message = on_message
        self._on_close = on_close
        self._closed: asyncio.Future[CloseInfo] = self.loop.create_future()
        self._stderr_fn: Callable[[str], Any] | None = None
        kill_grace_ms = _check.seconds("kill_grace", kill_grace, row="kill_grace_ms")
        if isinstance(stderr, str):
            mode = _STDERR_MODES[_check.choice("stderr", stderr, tuple(_STDERR_MODES))]
        else:
            mode = 1
            self._stderr_fn = stderr if callable(stderr) else stderr.write
        s = make_settings(keepalive, transport="stdio", ping_timeout=ping_timeout,
                          request_timeout=request_timeout, peer_name=self.name, probe=probe)
        s["max_pending_bytes"] = pending
        if max_line_bytes is not None:
            s["max_line_bytes"] = _check_size("max_line_bytes", max_line_bytes)
        if reconnect is not None:
            s["reconnect"] = reconnect.settings()
        #: The reconnect policy, None if a failed server closes the connection.
        self.reconnect = reconnect
        full_env = _child_environment(env, inherit_env)
        _runtime.attach(self.loop)
        try:
            self._id: int = _native.spawn(self, self._command, full_env,
                                          None if cwd is None else os.fspath(cwd), s, mode,
                                          kill_grace_ms)
        except _native.NativeError as e:
            _runtime.detach(self.loop)
            self._records.close()
            self._events.finish()  # the connection never was: metrics count it closed
            code, message = e.args[0], e.args[1]
            if code == _native.MCPP_ERR_SPAWN:
                raise SpawnError.of_os(message, _native.spawn_os_error()) from None
            if code in (_native.MCPP_ERR_INVALID_ARGUMENT, _native.MCPP_ERR_INTERVAL_TOO_SHORT):
                raise ValueError(f"connect: {message}") from None
            raise MCPPingError(f"cannot start the connection: {message}") from None
        # Records nobody takes (no file, no callback, the logger not enabled)
        # are not made into items at all; see _sync_records.
        self._records_on = True
        self._sync_records()
        # Every ping outcome is counted in C, as it happens; ping and
        # keepalive pong events cross only while someone listens (issue
        # 21: an idle connection's pong wakes nobody).
        _native.feed_rtt(self._id, self._stats._c)
        # Metrics are counted by the runtime too (mcpping.metrics' cell).
        self._events.count_into(functools.partial(_native.metrics_attach, self._id))
        self._ping_events_on = True
        self._events.follow(self._sync_ping_events)
        self._sync_ping_events()

    # ------------------------------------------------------------ public

    @property
    def state(self) -> str:
        """``alive``, ``suspect``, ``stale`` or ``closed``: the engine's, live."""
        info = None if self._closed.done() else _native.info(self._id)
        return info["state"] if info else self._state

    @property
    def stats(self) -> Stats:
        """Ping counts and RTT figures (keepalive and manual pings)."""
        return self._stats

    @property
    def healthy(self) -> bool:
        """Alive AND no application request timed out or stalls past the ping timeout.

        Pongs alone never make a connection healthy (no liveness laundering).
        """
        info = _native.info(self._id)
        return bool(info and info["healthy"])

    @property
    def closed(self) -> bool:
        """True once the server is reaped and the pipes are closed."""
        return self._closed.done()

    @property
    def pid(self) -> int | None:
        """The server's process id (its process group id too), None once closed.

        With ``reconnect`` it is the new server's after each ``reconnected``.
        """
        return _native.pid(self._id)

    @property
    def close_info(self) -> CloseInfo | None:
        """How the connection ended, once it has."""
        return self._closed.result() if self._closed.done() else None

    @property
    def dropped_messages(self) -> int:
        """Messages dropped because nobody iterated :meth:`messages` (see there)."""
        return self._inbox.dropped

    def info(self) -> dict[str, Any] | None:
        """The engine's live counters and flags (``healthy`` included), None once closed."""
        return _native.info(self._id)

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(Event)`` for each ``event`` ("*": all); returns a remover."""
        return self._events.on(event, callback)

    def events(self, *names: str) -> AsyncIterator[Event]:
        """Async iterator over events (optionally only ``names``), ending at ``closed``."""
        return self._events.events(*names)

    async def ping(self, timeout: float | None = None) -> float:
        """Pings the server; returns the round-trip time in seconds.

        Raises PingTimeout, PingError (``code``, ``message``), PingInvalid,
        PingUnsupported, or PeerClosed.
        """
        if timeout is not None:
            timeout_ms = _check.seconds("timeout", timeout)
        else:
            # Checked once, on first use (its error still comes from ping()).
            timeout_ms = self._ping_timeout_ms or _check.seconds("timeout", self._ping_timeout)
            self._ping_timeout_ms = timeout_ms
        if self._closed.done():
            raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
        # Another thread, or no task of the peer's loop running here: maybe
        # another loop's (the full check costs ~0.5 µs, so it runs only then).
        task = asyncio.current_task(self.loop)
        if task is None or threading.get_ident() != self._thread:
            self._check_loop("ping")
        token = next(_tokens)
        fut: asyncio.Future[float] = self.loop.create_future()
        self._pings[token] = fut
        if self._records_on is not self._records.wanted():
            self._sync_records()
        try:
            _native.ping(self._id, timeout_ms, token)
        except _native.NativeError:
            self._pings.pop(token, None)
            raise PeerClosed(_native.CONNECTION_CLOSED_TEXT) from None
        # No asyncio timer: the engine times the ping in C and always
        # reports an outcome (a close reports every ping still out).
        # awaiting_answer, inlined: the generator and contextlib cost a
        # sixth of a ping's Python time.
        if task is not None:
            awaiting[task] = awaiting.get(task, 0) + 1
            if charging:
                uncharge_readers(task)
        try:
            return await fut
        except asyncio.CancelledError:
            # The caller gave up (a cancelled task, an outer timeout): the
            # engine stops timing this ping and reports nothing for it.
            _native.cancel_ping(self._id, token)
            raise
        finally:
            self._pings.pop(token, None)
            if task is not None:
                n = awaiting.pop(task) - 1
                if n:
                    awaiting[task] = n

    def _check_loop(self, what: str) -> None:
        """Refuses a call from another event loop before it leaves anything
        behind (a future of this loop that nobody there awaits)."""
        if asyncio.get_running_loop() is not self.loop:
            if _native.info(self._id) is None:  # gone (a forked child's inherited peer)
                raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
            raise RuntimeError(f"{what}() called from another event loop: a Peer is used on "
                               "the loop it was connected on")

    def send(self, message: Mapping[str, Any] | str | bytes) -> None:
        """Sends one JSON-RPC message (a dict, or its JSON text without newline).

        Never drops or reorders: while the server does not keep up (more
        than ``max_pending_bytes`` not yet written) messages wait here, in
        order; ``await peer.drain()`` waits until they are handed over.
        """
        self._send(_rpc.encode(message), 0)

    async def drain(self) -> None:
        """Waits until every message sent so far is handed to the native runtime."""
        self._check_loop("drain")
        while self._outbox:
            if self._closed.done():
                raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
            fut: asyncio.Future[None] = self.loop.create_future()
            self._drain_waiters.append(fut)
            with awaiting_answer(self.loop):
                await fut

    def _send(self, data: bytes, timeout_ms: int) -> None:
        if self._outbox or not self._native_send(data, timeout_ms):
            self._outbox.append((data, timeout_ms))

    def _native_send(self, data: bytes, timeout_ms: int) -> bool:
        try:
            return _native.send(self._id, data, timeout_ms)
        except _native.NativeError as e:
            if e.args[0] == _native.MCPP_ERR_FRAME_NEWLINE:
                raise ValueError(e.args[1]) from None  # C's sentence, as Node says it
            if e.args[0] in (_native.MCPP_ERR_CLOSED, _native.MCPP_ERR_NOT_FOUND):
                raise PeerClosed(_native.CONNECTION_CLOSED_TEXT) from None
            raise PeerClosed(f"cannot send: {e.args[1]}") from None

    def _writable(self) -> None:
        """The runtime has room again: hands over what waits, in order."""
        try:
            while self._outbox:
                data, timeout_ms = self._outbox[0]
                if not self._native_send(data, timeout_ms):
                    return
                self._outbox.popleft()
        except PeerClosed:
            return  # the CLOSED item follows and fails the waiters
        self._wake_drainers(None)

    def _wake_drainers(self, error: BaseException | None) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for fut in waiters:
            if not fut.done():
                if error is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(error)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Sends a JSON-RPC notification."""
        self._send(_rpc.rpc_frame(method, params), 0)

    async def request(self, method: str, params: Mapping[str, Any] | None = None,
                      timeout: float | None = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Sends a request and returns the whole response message (result or error).

        The engine times the request (``timeout`` seconds; None: none of
        its own, so ``connect(request_timeout=)`` applies if set): past
        it, it sends ``notifications/cancelled`` (never for
        ``initialize``) and this raises ``TimeoutError``. Cancelling the
        awaiting task abandons the request the same way. Either way the
        request leaves the in-flight ledger, so ``healthy`` recovers.
        """
        timeout_ms = _rpc.timeout_ms(timeout)
        self._check_loop("request")
        rid, data, fut = self._requests.create(method, params)
        if self._modern:
            data = _native.envelope(data)  # 2026-07-28: _meta on every request (C merges it)
        try:
            self._send(data, timeout_ms)
            with awaiting_answer(self.loop):
                resp = await fut
        except asyncio.CancelledError:
            self._abandon(rid, data)
            raise
        finally:
            self._requests.pending.pop(rid, None)
        if resp[1] == "timeout":
            self._requests.give_up(rid)
        return _rpc.outcome(method, resp)

    def _abandon(self, rid: str, data: bytes) -> None:
        """The caller gave up on a request: cancelled on the wire unless never sent."""
        for i, (queued, _) in enumerate(self._outbox):
            if queued is data:
                del self._outbox[i]
                return
        self._requests.give_up(rid)
        if not self._closed.done():
            _native.cancel_request(self._id, json.dumps(rid).encode())

    async def initialize(self, timeout: float = INITIALIZE_TIMEOUT) -> dict[str, Any]:
        """Runs the MCP handshake; returns its result.

        The C core's handshake (mcpp_client_hs): ``initialize`` first; a
        server that refuses it is asked ``server/discover`` (protocol
        2026-07-28, no handshake and no ping), and one that lists
        2026-07-28 gives that session and its discover result. Raises
        HandshakeError (one sentence, its ``kind``) otherwise.
        """
        _check.seconds("init_timeout", timeout)
        out = await _handshake.run(
            lambda method, params, left: self.request(method, params, timeout=left),
            self.notify, self._closed_during_handshake, timeout, HandshakeError, self._learn_server,
            self._unreadable)
        result: dict[str, Any] = out["result"]
        return result

    def _unreadable(self) -> str | None:
        """Which lines the server wrote are not JSON-RPC (C's sentence),
        None if none: what a handshake that timed out says it met."""
        return self._unreadable_lines()[1] or None

    def _unreadable_lines(self) -> tuple[int, str]:
        """How many lines the server wrote are not JSON-RPC, and C's
        sentence for them ("" if none, or once closed)."""
        return _native.unreadable(self._id) or (0, "")

    def _learn_server(self, out: dict[str, Any]) -> None:
        self.protocol_version = out["version"]
        self._modern = bool(out["modern"])
        if out["server_info"] is not None:
            self.server_info = out["server_info"]
        if out["server_name"]:
            self.name = out["server_name"]

    async def _closed_during_handshake(self) -> tuple[str | None, int, int]:
        """How the connection ended, once the close is known (C words it)."""
        try:
            info = await asyncio.wait_for(asyncio.shield(self._closed), 5)
        except asyncio.TimeoutError:
            return None, -1, 0
        return info.reason, info.exit_status, info.term_signal

    def messages(self) -> AsyncIterator[dict[str, Any]]:
        """Yields what the server sends besides pings and answers to our requests.

        While an iterator is open (from this call until it ends, is closed
        or is garbage) the messages are asked for: none is dropped, and each
        waiting one counts against ``max_pending_bytes`` until taken, so a
        reader that is behind pauses this server (backpressure). Answers
        come through the same pipe, behind the queue: while the task that
        iterates awaits a request(), ping() or drain() (of any peer) the
        queue counts nothing, so that answer can come. While no iterator is
        open, the newest messages are kept within half of
        ``max_pending_bytes`` and older ones dropped, counted in
        :attr:`dropped_messages` with a warning on the ``mcpping`` logger;
        answers to requests never enter this queue and are never dropped.
        """
        return Messages(self._inbox)

    async def close(self) -> CloseInfo:
        """Stops the server (SIGTERM, SIGKILL after the grace), reaps it, closes pipes."""
        if not self._closed.done():
            _native.close(self._id)
        return await asyncio.shield(self._closed)

    async def wait_closed(self) -> CloseInfo:
        """Waits until the connection closes (for any reason)."""
        return await asyncio.shield(self._closed)

    async def __aenter__(self) -> "Peer":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<mcpping.Peer {self.name!r} state={self._state}>"

    def _repr_html_(self) -> str:
        """Jupyter's view: state, server, protocol, RTT figures and a latency sparkline."""
        from ._html import peer_card

        info = self.info()
        return peer_card(name=self.name, state=self.state, protocol=self.protocol_version,
                         pid=self.pid, stats=self._stats.as_dict(), rtts=self._stats.rtts,
                         healthy=None if info is None else bool(info["healthy"]))

    # ------------------------------------------------------------ native items

    def _feed(self, batch: list[tuple[Any, ...]], charge: int = 0) -> None:
        """Processes one batch of items from the I/O thread, in order.

        ``charge`` is what the batch counts against max_pending_bytes: the
        frames this peer keeps queued for the application keep their part
        (``_charge``) until it takes them; the rest is given back at the end.
        No item's failure costs another: an exception is reported and the
        next item follows. KeyboardInterrupt or SystemExit is let through,
        with the rest of the batch queued on the loop first.
        """
        self._budget = charge
        if self._records_on is not self._records.wanted():
            self._sync_records()
        try:
            for i, item in enumerate(batch):
                try:
                    self._item(item)
                except Exception as exc:
                    self._report("mcpping: an item could not be delivered", exc)
                except BaseException:
                    self.loop.call_soon(self._feed, batch[i + 1:], 0)
                    raise
        finally:
            left, self._budget = self._budget, 0
            if left:
                _native.release(self._id, left)

    def _sync_records(self) -> None:
        """Tells the runtime whether this connection's records go anywhere.

        With the logger as the target, its level may change at any time: it
        is looked at again with every batch and every ping, so records
        resume from the next of those after the logger is enabled.
        """
        self._records_on = self._records.wanted()
        _native.set_records(self._id, self._records_on)

    def _sync_ping_events(self) -> None:
        """Tells the runtime whether ping and pong events go anywhere."""
        on = self._events.wants("ping") or self._events.wants("pong")
        if on is not self._ping_events_on and not self._closed.done():
            self._ping_events_on = on
            _native.set_ping_events(self._id, on)

    def _charge(self, nbytes: int) -> int:
        """Keeps up to ``nbytes`` of the batch being fed counted; returns how many."""
        kept = min(nbytes, self._budget)
        self._budget -= kept
        return kept

    def _uncharge(self, nbytes: int) -> None:
        """Gives back bytes kept with _charge (reading resumes below half the cap)."""
        if nbytes:
            _native.release(self._id, nbytes)

    def _item(self, item: tuple[Any, ...]) -> None:
        kind = item[1]
        if kind == _MESSAGE:
            self._message(item[2], item[3] if len(item) > 3 else None)
        elif kind == _EVENT:
            ev = item[2]  # a NativeEvent: its dict is built only if wanted
            name = ev.name  # counted into self._stats in C already (feed_rtt)
            if (name == "ping" or name == "pong") and not self._events.wants(name):
                # The ping we just sent, or a pong (ours, or keepalive's just
                # before a listener left): nobody would see its Event.
                self._state = ev.state
                token = item[3]
                if name == "ping" or not token:
                    return
                if ev.outcome == "pong":
                    fut = self._pings.get(token)
                    if fut is not None and not fut.done():
                        fut.set_result(ev.rtt_us / 1e6)
                    return
            self._event(Event.from_native(ev.dict()), item[3])
        elif kind == _RECORD:
            self._records.write(item[2])
        elif kind == _STDERR:
            if self._stderr_fn is not None:
                _isolation.call(self._report, "the stderr target", self._stderr_fn,
                                item[2].decode("utf-8", "replace"))
        elif kind == _CLOSED:
            self._close_done(CloseInfo(*item[2]))
        elif kind == _PING_FAILED:
            self._ping_failed(item[2], item[3])
        elif kind == _WRITABLE:
            self._writable()

    def _message(self, frame: bytes, kind: str | None = None) -> None:
        """One inbound frame; ``kind`` is set when the engine made it (timeout, in_doubt, ...)."""
        if self._requests.answer(frame, kind):
            return
        if isinstance(self._on_message, ServesNoRequests):
            answer = _native.unserved_request_answer(frame)
            if answer is not None:
                try:
                    self._send(answer, 0)
                except PeerClosed:
                    pass  # closing: nothing to answer
        if self._on_message is not None:
            _isolation.call(self._report, "on_message", self._on_message, frame)
            return
        self._inbox.put(frame)

    def _event(self, ev: Event, token: int) -> None:
        self._state = ev.state
        if ev.name in ("initialized", "reconnected"):
            self._learn_session()
        if token and ev.name in ("pong", "timeout", "ping_error", "unsupported"):
            fut = self._pings.get(token)
            if fut is not None and not fut.done():
                out = _ping_outcome(ev)
                if isinstance(out, BaseException):
                    fut.set_exception(out)
                else:
                    fut.set_result(out)
        self._events.emit(ev)

    def _learn_session(self) -> None:
        """Takes the version and name the engine learned from the handshake.

        Where the application ran the handshake (the SDK adapters), that is
        the only way this Peer learns them.
        """
        info = _native.info(self._id)
        if not info:
            return
        if info["protocol_version"]:
            self.protocol_version = info["protocol_version"]
        if info["peer_name"]:
            self.name = info["peer_name"]

    def _ping_failed(self, token: int, err: int) -> None:
        fut = self._pings.get(token)
        if fut is None or fut.done():
            return
        fut.set_exception(ping_refusal(err))

    def _close_done(self, info: CloseInfo) -> None:
        # Everything waiting resolves first; user code runs last, guarded.
        self._state = "closed"
        for fut in self._pings.values():
            if not fut.done():
                fut.set_exception(PeerClosed(_native.PING_CLOSED_MESSAGE))
        self._requests.fail_all(lambda: PeerClosed.because(info.reason))
        self._outbox.clear()
        self._wake_drainers(PeerClosed.because(info.reason))
        self._inbox.end()
        self._events.finish()
        if not self._closed.done():
            self._closed.set_result(info)
        self._records.close()
        _runtime.detach(self.loop)
        if self._on_close is not None:
            _isolation.call(self._report, "on_close", self._on_close, info)


def _child_environment(env: Mapping[str, str] | None, inherit_all: bool) -> list[str] | None:
    """The environment a spawned server gets (C's rule, mcpp_env_safe, as in
    Node): ours (None: inherited as it is), or the SDKs' safe subset of it,
    with env on top."""
    if env is None and inherit_all:
        return None
    base = {k: v for k, v in os.environ.items() if inherit_all or _native.env_safe(k, v)}
    return [f"{k}={v}" for k, v in {**base, **(env or {})}.items()]


class _Opens(Protocol):
    async def initialize(self, timeout: float) -> Any: ...
    async def close(self) -> Any: ...


_Opened = TypeVar("_Opened", bound=_Opens)


class Connecting(Generic[_Opened]):
    """What ``connect(...)`` returns (stdio and HTTP): awaitable, or an async
    context manager that closes the peer at its end. ``make`` builds the
    peer; a failed handshake closes it before raising."""

    def __init__(self, make: Callable[[], _Opened], initialize: bool, init_timeout: float) -> None:
        self._make = make
        self._initialize = initialize
        self._init_timeout = init_timeout
        self._peer: _Opened | None = None

    async def _open(self) -> _Opened:
        peer = self._make()
        if self._initialize:
            try:
                await peer.initialize(self._init_timeout)
            except BaseException:
                await peer.close()
                raise
        return peer

    def __await__(self) -> Generator[Any, None, _Opened]:
        return self._open().__await__()

    async def __aenter__(self) -> _Opened:
        self._peer = await self._open()
        return self._peer

    async def __aexit__(self, *exc: object) -> None:
        if self._peer is not None:
            await self._peer.close()


def connect(
    command: Sequence[str],
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    initialize: bool = True,
    init_timeout: float = INITIALIZE_TIMEOUT,
    ping_timeout: float = PING_TIMEOUT,
    request_timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrTarget = "inherit",
    record: RecordTarget = None,
    kill_grace: float = _native.DEFAULT_KILL_GRACE_MS / 1000,
    on_message: Callable[[bytes], Any] | None = None,
    on_close: Callable[[CloseInfo], Any] | None = None,
    on_event: Listener | None = None,
    max_pending_bytes: int | None = None,
    max_line_bytes: int | None = None,
    probe: str | None = AUTO_PROBE,
    reconnect: _reconnect.Reconnect | None = None,
) -> Connecting[Peer]:
    """Spawns ``command`` (an MCP stdio server) and watches its liveness.

    Use as ``async with mcpping.connect([...]) as peer:`` (closes the server
    at the end) or ``peer = await mcpping.connect([...])``. Unless
    ``initialize=False`` the MCP handshake runs first. ``keepalive=None``
    turns keepalive off (manual pings still work). ``env`` is added to the
    environment the server starts in: ours, or with ``inherit_env=False``
    the official SDKs' safe subset of it (HOME, LOGNAME, PATH, SHELL, TERM,
    USER), as Node's ``connect`` and both SDKs do. ``record`` takes governance records: a
    path (JSONL), a callable (dict), or None for the ``mcpping`` logger.
    ``on_event`` gets every Event from the start, handshake included.
    ``request_timeout`` (seconds, None: off) is the engine's deadline for
    every request sent with :meth:`Peer.send` (``request()`` has its own).
    ``max_pending_bytes`` (default 16 MiB) bounds, per connection, what the
    server sent that this loop has not taken yet (past half of it the
    server is not read, and not blamed for the silence) and what waits to
    be written; ``max_line_bytes`` (default 64 MiB) is the longest line
    accepted from the server (longer: a clear close).
    ``probe`` is the idle probe sent where ping is not available: "auto"
    (``server/discover`` on 2026-07-28 sessions, ``tools/list`` on servers
    that refuse ping), a method name, or None/"" for none.
    ``reconnect`` (a :class:`~mcpping.Reconnect`; default None: off)
    respawns a server that went stale, exited or closed its pipes (see
    Reconnect): requests in flight then raise RequestInDoubt, and the
    ``reconnecting``/``reconnected`` events tell the story.
    """
    # Checked here, where the caller wrote them, before anything is spawned.
    _check.seconds("init_timeout", init_timeout)
    _check.flag("initialize", initialize)
    _check.flag("inherit_env", inherit_env)
    probe_method(probe)  # refused here, where the caller wrote it
    _reconnect.check(reconnect)
    return Connecting(lambda: Peer(
        command, keepalive=keepalive, env=env, inherit_env=inherit_env, cwd=cwd, stderr=stderr,
        record=record, ping_timeout=ping_timeout, request_timeout=request_timeout,
        kill_grace=kill_grace, on_message=on_message, on_close=on_close, on_event=on_event,
        probe=probe, max_pending_bytes=max_pending_bytes, max_line_bytes=max_line_bytes,
        reconnect=reconnect), initialize, init_timeout)


