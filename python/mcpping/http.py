"""mcpping.http: a Streamable HTTP MCP client that watches liveness (stdlib only).

Each message is a POST with ``Accept: application/json, text/event-stream``;
the answer is one JSON message or an SSE stream of them. After the
handshake the client opens the GET listening stream (``Accept:
text/event-stream``; a 405 means the server offers none), so the server's
own pings reach the engine, which answers them with a POST. Every inbound
message goes through the engine on the loop thread, which times the pings
and each request. Closing sends DELETE with the session id (a 405 is fine).

The sequencing is C's sans-I/O session (``_native.HttpSession``, the one
Node's client drives too): which request goes when, how each answer is
read, the session id, the renewal of an expired session, the resumption
of a broken SSE answer (SEP-1699, ``Last-Event-ID``), the listening
stream and its reopening, the cuts and the DELETE. This module does the
I/O it asks for (each HTTP exchange on the loop, ``_http_io``), keeps its
timers and feeds the engine.

An HTTP error is classified by the C core (``mcpp_http_classify``): a 404
whose body is a JSON-RPC -32601 means the method is unsupported; any other
404 on a session (or a 400 to a ping on one: the server lost the session)
means the session expired, so the handshake runs again (a
``reconnect`` record says so): the pings that met the 404 are sent again
on the new session, a request that met it gets the server's 404 as its
answer (it did not run), and what is sent meanwhile waits for the new
session; anything else fails the request.
SSE comment lines (``: keep-alive``) carry no message but prove the server
alive: they reach the engine as traffic (SEP-2575's transport-layer proof).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from . import _check, _handshake, _native, _rpc
from ._driver import EngineDriver
from ._http_io import Action, Exchange, Pool, connect_reason
from .errors import PeerClosed
from .events import Event, Listener
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive
from .peer import INITIALIZE_TIMEOUT, REQUEST_TIMEOUT, Connecting, HandshakeError
from .records import RecordTarget
from .stats import Stats

__all__ = ["HttpPeer", "connect"]

#: How long DELETE and the GET stream's connect may take.
_SHORT_TIMEOUT = _native.HTTP_SHORT_TIMEOUT_MS / 1000

def _check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Extra request headers: str names and values, or None."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a mapping of str to str, not {type(headers).__name__}")
    for k, v in headers.items():
        if not isinstance(k, str) or not k or not isinstance(v, str):
            raise TypeError(f"headers must map non-empty str names to str values, not {k!r}")
        problem = _native.http_header_problem(k, v)  # C's rule: what would break the request
        if problem is not None:
            raise ValueError(f"headers: {k!r} {problem}")
    return dict(headers)


class HttpPeer:
    """One Streamable HTTP MCP endpoint, watched through the engine.

    Made by :func:`connect`; ``HttpPeer(url, ...)`` followed by
    ``await initialize()`` does the same by hand.
    """

    def __init__(self, url: str, *, keepalive: KeepAlive | None = None, ping_timeout: float = PING_TIMEOUT,
                 request_timeout: float | None = None, record: RecordTarget = None,
                 probe: str | None = AUTO_PROBE, listen: bool = True,
                 headers: Mapping[str, str] | None = None) -> None:
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__} {url!r}")
        _check.seconds("ping_timeout", ping_timeout)
        _check.optional_seconds("request_timeout", request_timeout, none="off")
        listen = _check.flag("listen", listen)
        extra = _check_headers(headers)  # sent with every request (a config's: often a secret)
        u = _native.http_url(url, extra)  # C's rule: which URLs open, and how
        if isinstance(u, str):
            raise ValueError(f"url {url!r} {u}")
        self.url = url
        #: The target the last request went to (a 307/308 moves the session).
        self._target: str = u["target"]
        #: The URL as sentences and records quote it (no credentials, no query).
        self._shown: str = u["shown"]
        #: The server's name (serverInfo.name after the handshake, host:port before).
        self.name: str = u["name"]
        #: The negotiated protocol version, None before the handshake.
        self.protocol_version: str | None = None
        #: True on a 2026-07-28 session (no session id, no ping).
        self.modern = False
        #: The Mcp-Session-Id the server gave, None if it gave none.
        self.session_id: str | None = None
        #: True while the GET listening stream is open; False once the
        #: server answered 405 (it offers none) or listening is off.
        self.listening = False
        self.loop = asyncio.get_running_loop()
        self._requests = _rpc.Requests(self.loop)
        #: Set when the server could not be reached at all.
        self.fatal: BaseException | None = None
        self._closed = False
        self._init_timeout = INITIALIZE_TIMEOUT
        #: C's session: every sequencing decision; this runs what it asks.
        # max_body 0: the settings' max_line_bytes, a stdio line's and an SSE
        # event's bound, so a server that answers without end costs no more.
        self._session = _native.HttpSession(url, extra, 0, listen)
        self._todo: collections.deque[Action] = collections.deque()
        self._running = False
        #: Tags name requests to the session: the application's (to their
        #: ids here) and the engine's pings and probes (with their frames).
        self._tag = 0
        self._tags: dict[int, str] = {}
        self._engine_requests: list[tuple[int, bytes]] = []
        #: The exchanges in flight, by number (cut at close).
        self._posts: dict[int, Exchange] = {}
        #: Why an exchange reached no server, while the session hears of it.
        self._failures: dict[int, BaseException] = {}
        self._renew_error: BaseException | None = None
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        #: The GET listening stream's exchange, the last one started.
        self._listening: Exchange | None = None
        #: The end of the exchange the last START began (see _notify).
        self._started: asyncio.Future[None] | None = None
        self._pool = Pool(self.loop)
        #: What initialize() and close() wait for: the session's next
        #: "listening" and "closed" actions.
        self._awaited: dict[str, asyncio.Future[None]] = {}
        self.driver = EngineDriver(self._engine_send, keepalive=keepalive, transport="streamable-http",
                                   ping_timeout=ping_timeout, request_timeout=request_timeout,
                                   peer_name=self.name, record=record, deliver=self._deliver,
                                   on_stale=self._stale, probe=probe)

    # ------------------------------------------------------------ public

    @property
    def state(self) -> str:
        """``alive``, ``suspect``, ``stale`` or ``closed``."""
        return self.driver.state

    @property
    def stats(self) -> Stats:
        """Ping counts and RTT figures."""
        return self.driver.stats

    @property
    def healthy(self) -> bool:
        """Live health: alive and no request past its deadline."""
        return bool(self.driver.info().get("healthy"))

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran or the peer was lost."""
        return self._closed

    def info(self) -> dict[str, Any]:
        """The engine's counters and flags, ``healthy`` included."""
        return self.driver.info()

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Calls ``callback(Event)`` for each ``event`` ("*": all); returns a remover."""
        return self.driver.on(event, callback)

    def events(self, *names: str) -> AsyncIterator[Event]:
        """Async iterator over events, ending at ``closed``."""
        return self.driver.events(*names)

    async def initialize(self, timeout: float = INITIALIZE_TIMEOUT) -> dict[str, Any]:
        """Runs the C core's handshake (initialize, or server/discover on a
        2026-07-28 server: no session, no ping, watched by probe), then
        opens the GET listening stream if the server gave a session;
        returns the initialize (or discover) result. Raises HandshakeError
        or PeerClosed."""
        _check.seconds("init_timeout", timeout)
        self._init_timeout = timeout
        out = await _handshake.run(
            lambda method, params, left: self._request(method, params, left, direct=True),
            lambda method: self._notify(method, None, direct=True),
            self._closed_why, timeout, HandshakeError, self._learn_server, self.driver.unreadable)
        result: dict[str, Any] = out["result"]
        # Wait for the GET's answer, so `listening` is true on return (a
        # slow GET may still open; pings are answered on the POSTs meanwhile).
        await self._until("listening", self._session.opened, timeout)
        return result

    def _learn_server(self, out: dict[str, Any]) -> None:
        self.protocol_version = out["version"]
        self.modern = out["modern"]
        if out["server_name"]:
            self.name = out["server_name"]
        self._run(self._session.set_version(out["version"]))

    async def _closed_why(self) -> None:
        return None  # PeerClosed("cannot reach ..."), as the transport says it

    async def request(self, method: str, params: Mapping[str, Any] | None = None,
                      timeout: float | None = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Sends a request; returns the whole response message (result or error).

        The engine times it (``timeout`` seconds; None: ``request_timeout``
        if set): past it, it sends ``notifications/cancelled`` (never for
        ``initialize``) and this raises ``TimeoutError`` (C's sentence).
        Cancelling the awaiting task abandons the request the same way.
        Either way the request leaves the in-flight ledger, so ``healthy``
        recovers. A request whose answer cannot come any more (its SSE
        stream broke, or ended and cannot be resumed) raises
        RequestInDoubt now, as a stdio request whose server failed does.
        """
        return await self._request(method, params, timeout)

    async def _request(self, method: str, params: Mapping[str, Any] | None, timeout: float | None,
                       direct: bool = False) -> dict[str, Any]:
        """request(); direct: sent even while the session is renewed (the handshake's own)."""
        timeout_ms = _rpc.timeout_ms(timeout)
        if self._closed:
            raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
        rid, frame, fut = self._requests.create(method, params)
        if self.modern:
            frame = _native.envelope(frame)  # 2026-07-28: _meta on every request
        tag = self._next_tag()
        self._tags[tag] = rid
        # Settled whatever its outcome: the session cuts what still reads for it.
        fut.add_done_callback(lambda _: self._settled(tag))
        try:
            self.driver.observe_outbound(frame, timeout_ms)
            self._run(self._session.post(frame, tag, direct))
            resp = await fut
        except asyncio.CancelledError:
            self._requests.give_up(rid)
            if not self._closed:
                self.driver.cancel_request(rid)
            raise
        finally:
            self._requests.pending.pop(rid, None)
            if not fut.done():
                fut.cancel()
        return _rpc.outcome(method, resp)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Sends a notification (fire and forget)."""
        self._notify(method, params)

    def _notify(self, method: str, params: Mapping[str, Any] | None,
                direct: bool = False) -> asyncio.Future[None] | None:
        """Sends a notification; returns what settles once its POST is over
        (None if the session holds it for now)."""
        frame = _rpc.rpc_frame(method, params)
        self.driver.observe_outbound(frame)
        self._started = None
        self._run(self._session.post(frame, 0, direct))
        return self._started

    async def ping(self, timeout: float | None = None) -> float:
        """Pings the endpoint; RTT in seconds or a PingFailure/PeerClosed."""
        if self.fatal is not None:
            raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
        try:
            return await self.driver.ping(timeout)
        finally:
            self._cut_engine_requests()  # a timed-out ping's POST now, not at the next one

    async def close(self) -> None:
        """Ends the session: DELETE with its id (405 tolerated), the GET
        stream and the POSTs still waiting for answers closed, the engine
        stopped."""
        if self._closed:
            return
        self._closed = True
        # The DELETE's own bound is as long: what is left of it is cut below.
        await self._until("closed", self._session.close, _SHORT_TIMEOUT)
        self._end_io()
        self._finish(_native.CLOSED_BY_APP_REASON)
        await self._pool.gone(_SHORT_TIMEOUT)  # no connection left open

    async def __aenter__(self) -> "HttpPeer":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<HttpPeer {self._shown} session={self.session_id} state={self.state}>"

    # ------------------------------------------------------------ the session's actions

    def _run(self, actions: list[Action]) -> None:
        """Does what the session asks, in its order. An action may feed the
        session again (an inbound ping's pong is a POST): what that asks
        is done after what was asked before it, never in the middle."""
        self._todo.extend(actions)
        if self._running:
            return
        self._running = True
        try:
            while self._todo:
                self._do(self._todo.popleft())
        finally:
            self._running = False

    def _do(self, a: Action) -> None:
        do = a["do"]
        if do == "start":
            self._start(a)
        elif do == "cut":
            ex = self._posts.pop(a["exchange"], None)
            if ex is not None:
                ex.stop()
        elif do == "receive":
            self._inbound(a["data"])
        elif do == "touch":
            if not self._closed:
                self.driver.touch()
        elif do == "lost":
            # The engine's own ping or probe is not failed: it times out.
            rid = self._tags.get(a["tag"])
            if rid is not None and not self._closed:
                self.driver.fail_request(rid)
        elif do == "session":
            self.session_id = a["id"]
            if a["id"] is not None:  # None while renewed: records keep the last until the next
                self.driver.set_session_id(a["id"])
        elif do == "renew":
            self.protocol_version = None
            fut = asyncio.ensure_future(self._renew())
            self._tasks.add(fut)
            fut.add_done_callback(self._tasks.discard)
        elif do == "gone":
            self._lose(self._failures.get(a["exchange"]) if a["exchange"] else self._renew_error, a["reason"])
        elif do == "listening":
            self.listening = a["value"]
            self._arrived(do)
        elif do == "wait":
            self._timers[a["wait"]] = self.loop.call_later(a["ms"] / 1000, self._wake, a["wait"])
        elif do == "closed":
            self._arrived(do)

    async def _until(self, action: str, feed: Callable[[], list[Action]], timeout: float) -> None:
        """Feeds the session (feed) and waits, for timeout seconds at most,
        until it asks for action."""
        self._awaited[action] = arrived = self.loop.create_future()
        self._run(feed())
        if not arrived.done():
            try:
                await asyncio.wait_for(asyncio.shield(arrived), timeout)
            except asyncio.TimeoutError:
                pass

    def _arrived(self, action: str) -> None:
        arrived = self._awaited.pop(action, None)
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    def _wake(self, wait: int) -> None:
        self._timers.pop(wait, None)
        self._run(self._session.wake(wait))

    async def _renew(self) -> None:
        """The session expired: the handshake runs again (what is sent
        meanwhile waits in the session), then what waited goes."""
        try:
            await self.initialize(self._init_timeout)
        except Exception as e:  # the new handshake failed: the peer is gone
            self._renew_error = e
            self._run(self._session.renewed(False, str(e)))
            return
        actions = self._session.renewed(True)
        self.driver.record_reconnect()
        self._run(actions)

    def _next_tag(self) -> int:
        self._tag += 1
        return self._tag

    def _settled(self, tag: int) -> None:
        self._tags.pop(tag, None)
        self._run(self._session.settled(tag))

    # ------------------------------------------------------------ HTTP

    def _start(self, a: Action) -> None:
        self._target = a["target"]
        ex = Exchange(a, self._pool, self)
        self._posts[ex.number] = ex
        self._started = ex.over
        if ex.listens:
            self._listening = ex
        ex.start()

    # What an exchange tells the session (_http_io.Sink), on the loop.

    def _answer_head(self, ex: Exchange, status: int, headers: dict[str, str]) -> None:
        self._run(self._session.response(ex.number, status, headers.get("content-type"),
                                         headers.get("mcp-session-id"), headers.get("location")))

    def _answer_body(self, ex: Exchange, chunk: bytes) -> None:
        self._run(self._session.body(ex.number, chunk))

    def _answer_end(self, ex: Exchange, broken: bool) -> None:
        self._posts.pop(ex.number, None)
        self._run(self._session.end(ex.number, broken))

    def _exchange_failed(self, ex: Exchange, exc: BaseException) -> None:
        self._posts.pop(ex.number, None)
        self._failures[ex.number] = exc  # why, for "gone" (the engine's close)
        try:
            self._run(self._session.failed(ex.number, connect_reason(exc)))
        finally:
            self._failures.pop(ex.number, None)

    def _end_io(self) -> None:
        """The session is over: no timer fires and nothing is read any more
        (the session cut its exchanges; the DELETE's too if it outlived the wait)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        posts, self._posts = list(self._posts.values()), {}
        for ex in posts:
            ex.stop(ending=True)
        self._pool.shut()
        self.listening = False

    def _lose(self, exc: BaseException | None, reason: str) -> None:
        """The session is over without a DELETE: the engine closes with reason."""
        if self.fatal is None:
            self.fatal = exc
        if self._closed:
            return
        self._closed = True
        self._run(self._session.lose())
        self._end_io()
        self._finish(reason)

    def _stale(self) -> None:
        """The engine's stale policy says close: the server is gone."""
        if not self._closed:
            self._closed = True
            self._run(self._session.lose())
            self._end_io()
            self._finish(self.driver.stale_reason, _native.MCPP_ERR_STALE)

    def _finish(self, reason: str, err: int = 0) -> None:
        self._requests.fail_all(lambda: PeerClosed.because(reason))
        self.driver.close(reason, err)

    def _engine_send(self, kind: int, frame: bytes) -> None:
        # A ping or probe the engine no longer waits for (it timed out) has
        # no answer left to come: its POST is cut, so a server that takes
        # requests and never answers holds no connection per ping.
        self._cut_engine_requests()
        tag = 0
        if kind in (_native.MCPP_FRAME_PING, _native.MCPP_FRAME_PROBE):
            tag = self._next_tag()
            self._engine_requests.append((tag, frame))
        self._run(self._session.post(frame, tag, False))

    def _cut_engine_requests(self) -> None:
        """Settles the engine's requests it no longer waits for (C's
        mcpp_engine_awaits): the session cuts what still reads for them."""
        waiting: list[tuple[int, bytes]] = []
        over: list[tuple[int, bytes]] = []
        for tag, frame in self._engine_requests:
            (waiting if self.driver.awaits(frame) else over).append((tag, frame))
        self._engine_requests = waiting  # before the session runs: what it runs may send more
        for tag, _ in over:
            self._run(self._session.settled(tag))

    def _deliver(self, frame: bytes, kind: str) -> None:
        """The engine's own answer to a request (its kind: timeout, in_doubt, ...)."""
        self._requests.answer(frame, kind)

    def _inbound(self, frame: bytes) -> None:
        if self._closed or not self.driver.recv(frame):
            return
        answer = _native.unserved_request_answer(frame)
        if answer is not None:
            # A request from the server (roots/list, sampling, elicitation):
            # this client serves none, and says so rather than leave the
            # server waiting.
            self.driver.observe_outbound(answer)
            self._run(self._session.post(answer, 0, False))
            return
        self._requests.answer(frame)


def connect(
    url: str,
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    initialize: bool = True,
    init_timeout: float = INITIALIZE_TIMEOUT,
    ping_timeout: float = PING_TIMEOUT,
    request_timeout: float | None = None,
    record: RecordTarget = None,
    probe: str | None = AUTO_PROBE,
    listen: bool = True,
    headers: Mapping[str, str] | None = None,
) -> Connecting[HttpPeer]:
    """Connects to a Streamable HTTP MCP server at ``url`` and watches it.

    Use as ``async with mcpping.http.connect(url) as peer:`` (ends the
    session with DELETE at the end) or ``peer = await
    mcpping.http.connect(url)``. The options mean what they mean for
    :func:`mcpping.connect`; ``listen`` (default True) opens the GET
    listening stream after the handshake, so the server's pings are
    answered (a server that answers the GET with 405 offers none);
    ``headers`` are sent with every request (authorization, say).
    """
    _check.seconds("init_timeout", init_timeout)
    _check.flag("initialize", initialize)
    return Connecting(lambda: HttpPeer(
        url, keepalive=keepalive, ping_timeout=ping_timeout, request_timeout=request_timeout,
        record=record, probe=probe, listen=listen, headers=headers), initialize, init_timeout)
