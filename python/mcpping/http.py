"""mcpping.http: a Streamable HTTP MCP client that watches liveness (stdlib only).

Each message is a POST with ``Accept: application/json, text/event-stream``;
the answer is one JSON message or an SSE stream of them. After the
handshake the client opens the GET listening stream (``Accept:
text/event-stream``; a 405 means the server offers none), so the server's
own pings reach the engine, which answers them with a POST. Every inbound
message goes through the engine on the loop thread, which times the pings
and each request. Closing sends DELETE with the session id (a 405 is fine).

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
import errno
import http.client
import json
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, cast

from . import _check, _handshake, _native
from ._driver import EngineDriver
from .errors import PeerClosed
from .events import Event, Listener
from .keepalive import AUTO_PROBE, PING_TIMEOUT, KeepAlive
from .peer import (INITIALIZE_TIMEOUT, REQUEST_TIMEOUT, Answer, Connecting, HandshakeError, _request_timeout_ms,
                   request_outcome, rpc_frame)
from .records import RecordTarget
from .stats import Stats

__all__ = ["HttpPeer", "connect"]

#: How long a POST's connect and sending may take (the answer is unbounded).
_POST_SEND_TIMEOUT = _native.HTTP_POST_CONNECT_TIMEOUT_MS / 1000
#: How long DELETE and the GET stream's connect may take.
_SHORT_TIMEOUT = _native.HTTP_SHORT_TIMEOUT_MS / 1000


def _read_sse(resp: Any, sse: _native.SseParser, on_data: Callable[[bytes], None],
              on_comment: Callable[[], None], done: Callable[[], bool] = lambda: False) -> None:
    """Feeds an SSE body to the C parser: each event's data to on_data,
    each comment or empty event (proof of life) to on_comment, until the
    body ends or done() says the stream has nothing left to give. An
    oversize event raises ValueError, as a too long line ends a stdio peer."""
    while chunk := resp.read1(65536):
        for item in sse.feed(chunk):
            on_data(item) if item is not None else on_comment()
        if done():
            return
    for item in sse.finish():
        on_data(item) if item is not None else on_comment()


#: The longest body read whole (an answer, an error's), as a line or an SSE
#: event: the settings' max_line_bytes, so a server that answers without
#: end costs no more memory than that.
_MAX_BODY = int(_check.TABLE["max_line_bytes"]["default"])


def _read_body(resp: Any) -> bytes | None:
    """The whole body, or None once it runs past _MAX_BODY (the rest is
    not read: the connection is closed after it). A body cut short raises
    IncompleteRead."""
    parts, n = [], 0
    while chunk := resp.read1(65536):
        n += len(chunk)
        if n > _MAX_BODY:
            return None
        parts.append(chunk)
    if resp.length:  # the connection closed before Content-Length was read
        raise http.client.IncompleteRead(b"".join(parts), resp.length)
    return b"".join(parts)


class _Resumable:
    """One request's SSE answer across its resumptions (SEP-1699: a server
    that gave an event ID may close the stream before the answer; the
    client resumes it with GET and Last-Event-ID): the parser, which keeps
    the last event ID, whether the answer came, and the GET reading it
    now, cut when the request is settled otherwise (timed out, cancelled,
    closed), so nothing waits on a stream that has no answer left."""

    def __init__(self, frame: bytes, request_id: str | None = None) -> None:
        self.frame = frame
        self.request_id = request_id
        self.sse = _native.SseParser()
        self.answered = False
        self.settled = threading.Event()
        self.conn: _HTTPConnection | _HTTPSConnection | None = None

    def saw(self, item: bytes) -> None:
        if not self.answered and _native.http_is_answer(self.frame, item):
            self.answered = True

    def settle(self, _: object = None) -> None:
        """The request is settled (a done callback, on the loop)."""
        self.settled.set()
        if not self.answered and self.conn is not None:
            self.conn.cut()


def connect_reason(exc: BaseException | None) -> str:
    """Why a server could not be reached, named as Node names it (C's names
    where the two hosts' words differ); never the URL."""
    while exc is not None:
        if isinstance(exc, socket.gaierror) and exc.errno is not None:
            return _native.http_resolve_error_name(exc.errno) or str(exc)
        if isinstance(exc, ssl.SSLCertVerificationError):
            return _native.http_tls_error_name(exc.verify_code or -1)
        if isinstance(exc, ssl.SSLError):
            return _native.http_tls_error_name(0)  # not its errno: 1 is no EPERM
        if isinstance(exc, TimeoutError) and exc.errno is None:
            return "ETIMEDOUT"  # a socket timeout, as Node names a connect that timed out
        if isinstance(exc, http.client.RemoteDisconnected):
            return "ECONNRESET"  # closed before any answer: Node's "socket hang up"
        if isinstance(exc, http.client.HTTPException):
            return _native.HTTP_NOT_HTTP_CAUSE
        if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
            return errno.errorcode[exc.errno]
        nested = getattr(exc, "reason", None)
        if isinstance(nested, BaseException):
            exc = nested
            continue
        return str(nested if nested is not None else exc)
    return "unreachable"


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


class _Cuttable:
    """A connection whose socket another thread can cut, also after an
    answer with no length (an event stream ended by closing) took the
    socket from it: http.client then hands it to the response alone."""

    socket: socket.socket | None = None

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.socket = self.sock  # type: ignore[attr-defined]

    def unbounded(self) -> None:
        """No timeout on reads any more: an idle stream, a long answer."""
        if self.socket is not None:
            self.socket.settimeout(None)

    def cut(self) -> None:
        """Wakes the thread blocked reading it (close() ends the session)."""
        if self.socket is not None:
            try:
                self.socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _HTTPConnection(_Cuttable, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Cuttable, http.client.HTTPSConnection):
    pass


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
        self._listen_wanted = _check.flag("listen", listen)
        #: Sent with every request (a config's ``headers``: often a secret).
        self._extra_headers = _check_headers(headers)
        u = _native.http_url(url, self._extra_headers)  # C's rule: which URLs open, and how
        if isinstance(u, str):
            raise ValueError(f"url {url!r} {u}")
        if u["authorization"] is not None:  # the URL's user:password
            self._extra_headers["Authorization"] = u["authorization"]
        self.url = url
        self._url = u
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
        self._requests: dict[Any, asyncio.Future[Answer]] = {}
        #: Set when the server could not be reached at all.
        self.fatal: BaseException | None = None
        self._closed = False
        self._ids = 0
        self._init_timeout = INITIALIZE_TIMEOUT
        #: C's rules for a session that ended (which end renews it, what
        #: waits, which ping goes again); what waits is kept here, in order.
        self._renewal = _native.HttpRenewal()
        self._held: list[tuple[bytes, _Resumable | None]] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        self._listener: threading.Thread | None = None
        self._listen_conn: _Cuttable | None = None
        #: The POSTs waiting for their answers (cut at close).
        self._posts: set[_Cuttable] = set()
        #: The engine's own requests (pings, probes) whose POSTs may still
        #: wait: cut once the engine no longer waits for their answers.
        self._engine_requests: list[_Resumable] = []
        self._posts_lock = threading.Lock()
        #: The last wait before opening the listening stream again, in ms (0: none since open).
        self._relisten_ms = 0
        self._relisten: asyncio.TimerHandle | None = None
        #: The listening stream's session and parser, which keeps its last
        #: event ID across reopenings (None: none yet, or a new session's).
        self._listen_sse: tuple[str | None, _native.SseParser] | None = None
        self._listen_settled: asyncio.Future[None] | None = None
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
        if self._listen_wanted and self.session_id is not None:
            # Wait for the GET's answer, so `listening` is true on return.
            self._listen_settled = self.loop.create_future()
            self._listen()
            try:
                await asyncio.wait_for(asyncio.shield(self._listen_settled), timeout)
            except asyncio.TimeoutError:
                pass  # a slow GET: it may still open; pings are answered on the POSTs meanwhile
        return result

    def _learn_server(self, out: dict[str, Any]) -> None:
        self.protocol_version = out["version"]
        self.modern = out["modern"]
        if out["server_name"]:
            self.name = out["server_name"]

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
        timeout_ms = _request_timeout_ms(timeout)
        if self._closed:
            raise PeerClosed(_native.CONNECTION_CLOSED_TEXT)
        self._ids += 1
        rid = f"mcpping-{self._ids}"
        frame = rpc_frame(method, params, rid)
        if self.modern:
            frame = _native.envelope(frame)  # 2026-07-28: _meta on every request
        fut: asyncio.Future[Answer] = self.loop.create_future()
        self._requests[rid] = fut
        answer = _Resumable(frame, rid)
        fut.add_done_callback(answer.settle)
        try:
            self.driver.observe_outbound(frame, timeout_ms)
            self._post(frame, answer, direct)
            resp = await fut
        except asyncio.CancelledError:
            if not self._closed:
                self.driver.cancel_request(rid)
            raise
        finally:
            self._requests.pop(rid, None)
        return request_outcome(method, *resp)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Sends a notification (fire and forget)."""
        self._notify(method, params)

    def _notify(self, method: str, params: Mapping[str, Any] | None, direct: bool = False) -> None:
        frame = rpc_frame(method, params)
        self.driver.observe_outbound(frame)
        self._post(frame, None, direct)

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
        self._stop_listening()
        self._cut_posts()
        if self.session_id is not None and self.fatal is None:
            await asyncio.to_thread(self._delete_blocking, self.session_id)
        self._finish(_native.CLOSED_BY_APP_REASON)
        listener = self._listener
        if listener is not None:
            await asyncio.to_thread(listener.join, _SHORT_TIMEOUT)

    async def __aenter__(self) -> "HttpPeer":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<HttpPeer {self._shown} session={self.session_id} state={self.state}>"

    # ------------------------------------------------------------ HTTP

    def _headers(self, method: str, session: str | None) -> dict[str, str]:
        return _native.http_request_headers(method, self._extra_headers, session, self.protocol_version)

    def _connection(self, timeout: float = _SHORT_TIMEOUT) -> _HTTPConnection | _HTTPSConnection:
        """A new connection to the session's URL; timeout bounds its connect
        and what is sent on it."""
        u = self._url
        cls = _HTTPSConnection if u["https"] else _HTTPConnection
        return cls(u["host"], u["port"], timeout=timeout)

    def _post_blocking(self, frame: bytes, answer: _Resumable | None, redirects: int = 0) -> None:
        """Runs in a worker thread: one POST, handing each answer to the loop."""
        sent_session = self.session_id
        conn = self._connection(_POST_SEND_TIMEOUT)
        with self._posts_lock:
            self._posts.add(conn)
        if answer is not None:
            answer.conn = conn  # cut when the request is settled without its answer
        try:
            try:
                if self._closed or answer is not None and answer.settled.is_set():
                    return
                conn.request("POST", self._url["target"], body=frame,
                             headers=self._headers("POST", sent_session))
                if self._closed or answer is not None and answer.settled.is_set():
                    return  # closed or settled while connecting: no socket was there to cut
                # No bound on the answer: a long tool call is no lost
                # server (the engine's deadline decides; close() cuts it).
                conn.unbounded()
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException) as e:  # not reached, or no HTTP answer
                if not self._closed and (answer is None or not answer.settled.is_set()):
                    self._to_loop_call(self._fail, e)
                return
            self._read_answer(resp, frame, answer, sent_session, redirects)
        finally:
            with self._posts_lock:
                self._posts.discard(conn)
            conn.close()

    def _read_answer(self, resp: http.client.HTTPResponse, frame: bytes, answer: _Resumable | None,
                     sent_session: str | None, redirects: int) -> None:
        """Hands what the answer to a POST says to the loop (C's rules on each part)."""
        status, content_type = resp.status, resp.getheader("Content-Type")
        to = _native.http_redirect_url(status, resp.getheader("Location"), self._url["request_url"])
        if to is not None and redirects < _native.HTTP_MAX_REDIRECTS:
            # 307/308 on the same origin: the session goes there from now on.
            # C's redirect rule gave a URL of the same origin: it parses.
            self._url = cast("dict[str, Any]", _native.http_url(to, self._extra_headers))
            self._post_blocking(frame, answer, redirects + 1)
            return
        body_kind = _native.http_body_kind("POST", status, content_type)
        if body_kind == "error":
            try:
                body = _read_body(resp)
            except (OSError, http.client.HTTPException):
                body = b""  # a broken body: classified as empty
            self._answered(body_kind, resp, body, frame, sent_session)
            return
        sid = resp.getheader("Mcp-Session-Id")
        if sid and not self.session_id:
            self._to_loop_call(self._set_session, sid)
        if body_kind == "sse":
            self._read_stream(resp, answer or _Resumable(frame), resumable=answer is not None)
            return
        try:
            body = _read_body(resp)
        except (OSError, http.client.HTTPException):
            # Cut off mid-answer, with no event ID to resume from: C's rule
            # says the answer is lost, so the engine answers in doubt now.
            if answer is not None and not answer.settled.is_set() and \
                    answer.sse.answer_after(True, 0)[0] == "lost":
                self._to_loop_call(self._answer_lost, answer.request_id)
            return
        self._answered(body_kind, resp, body, frame, sent_session)

    def _answered(self, body_kind: str, resp: Any, body: bytes | None, frame: bytes,
                  sent_session: str | None) -> None:
        """Hands the engine what C says the answer's body gives it (None:
        cut at the bound): the message, an answer C made of an error, a
        page or a body without end, or the session's end."""
        status = resp.status
        step, message = _native.http_post_answer(body_kind, status, resp.getheader("Content-Type"),
                                                 body, _MAX_BODY, frame, sent_session is not None)
        if step == "expired":
            self._to_loop_call(self._session_expired, (frame, sent_session, status, body or b""))
        elif message is not None:
            self._to_loop(message)

    def _read_stream(self, resp: Any, answer: _Resumable, resumable: bool) -> None:
        """Reads the SSE answer to a POST; while it ends without the
        request's answer after giving an event ID, resumes it (C's rule,
        mcpp_http_answer_after) until the answer comes, the request is
        settled, or the GET is refused: then the answer cannot come, so the
        engine answers the request in doubt now (and a 404 renews the
        session). A stream without an event ID that breaks (a server that
        died mid-call, a proxy that cut it) is answered in doubt at once;
        one that ends cleanly leaves the request to its deadline."""
        session, wait = self.session_id, 0

        def on_data(item: bytes) -> None:
            answer.saw(item)
            self._to_loop(item)

        while True:
            broken = False
            if resp is not None:
                try:
                    # The answer ends its stream: a server that keeps it
                    # open after it (a proxy's, or one that ignores the
                    # spec's SHOULD) would hold a thread and a socket per
                    # request for good. The connection is closed below.
                    _read_sse(resp, answer.sse, on_data, self._touch, lambda: answer.answered)
                except ValueError:
                    return  # an oversize event: the stream is over for good
                except (OSError, http.client.HTTPException):
                    broken = True  # reset, or cut mid-body: resumed below if it can be
                finally:
                    self._drop(answer)
            if not resumable or answer.answered or answer.settled.is_set() or self._closed:
                return
            step, next_wait = answer.sse.answer_after(broken, wait)
            if step == "lost":
                self._to_loop_call(self._answer_lost, answer.request_id)
                return
            if step != "resume" or answer.settled.wait(next_wait / 1000):
                return
            wait = next_wait
            try:
                resp = self._resume(answer, session)
            except (OSError, http.client.HTTPException):
                resp = None  # not reached: tried again after the next wait
                continue
            if isinstance(resp, tuple):  # refused: the answer has nowhere left to come
                status, body = resp
                if _native.http_classify(status, body, session is not None) == "session_expired":
                    self._to_loop_call(self._session_expired, (b"", session, status, body))
                self._to_loop_call(self._answer_lost, answer.request_id)
                return

    def _resume(self, answer: _Resumable, session: str | None) -> Any:
        """GET with Last-Event-ID: the resumed stream's response, or the
        refusal's (status, body) when the server gives no event stream, or
        None when the request was settled meanwhile. Runs in the POST's thread."""
        conn = self._connection()
        with self._posts_lock:
            self._posts.add(conn)  # cut at close, as the POST was
        answer.conn = conn
        try:
            if answer.settled.is_set() or self._closed:
                self._drop(answer)
                return None
            headers = self._headers("GET", session)
            headers[_native.HTTP_LAST_EVENT_ID] = answer.sse.last_event_id
            conn.request("GET", self._url["target"], headers=headers)
            resp = conn.getresponse()
            if _native.http_body_kind("GET", resp.status, resp.getheader("Content-Type")) != "sse":
                refusal = (resp.status, _read_body(resp) or b"")
                self._drop(answer)
                return refusal
        except BaseException:
            self._drop(answer)
            raise
        conn.unbounded()  # the answer may be long in coming
        return resp

    def _drop(self, answer: _Resumable) -> None:
        """The resumed GET is over: forgotten and closed."""
        conn, answer.conn = answer.conn, None
        if conn is not None:
            with self._posts_lock:
                self._posts.discard(conn)
            conn.close()

    def _cut_posts(self) -> None:
        """The session is over: the POSTs still waiting for answers end now
        (their threads would otherwise wait on a server that may never answer)."""
        with self._posts_lock:
            posts = list(self._posts)
        for conn in posts:
            conn.cut()

    def _listen(self) -> None:
        """Opens the GET listening stream in a thread of its own."""
        if self._closed or self._listener is not None and self._listener.is_alive():
            return
        if self._listen_sse is None or self._listen_sse[0] != self.session_id:
            self._listen_sse = (self.session_id, _native.SseParser())  # a new session's stream
        self._listener = threading.Thread(target=self._listen_blocking,
                                          args=self._listen_sse, daemon=True,
                                          name="mcpping-http-listen")
        self._listener.start()

    def _listen_blocking(self, session: str | None, sse: _native.SseParser) -> None:
        """Runs in the listener thread: GET (with Last-Event-ID once the
        session's stream gave an event ID, so what the server sent while it
        was down comes now), then every SSE event to the loop; then hands
        the loop how it ended (opened, or the refusal's status and body;
        status 0: no answer)."""
        conn = self._connection()
        self._listen_conn = conn
        opened, status, body = False, 0, b""
        headers = self._headers("GET", session)
        if sse.last_event_id:
            headers[_native.HTTP_LAST_EVENT_ID] = sse.last_event_id
        try:
            if not self._closed:
                conn.request("GET", self._url["target"], headers=headers)
                resp = conn.getresponse()
                if _native.http_body_kind("GET", resp.status, resp.getheader("Content-Type")) != "sse":
                    status = resp.status  # kept if the body then breaks, as in Node
                    body = _read_body(resp) or b""
                else:
                    conn.unbounded()  # an idle stream is no error
                    opened = True
                    self._to_loop_call(self._listen_opened, session)
                    _read_sse(resp, sse, self._to_loop, self._touch)
        except ValueError:
            self._listen_sse = None  # an oversize event: that parser is done
        except (OSError, http.client.HTTPException):
            pass  # not reached, or the stream broke (or close() shut it)
        finally:
            conn.close()
        self._to_loop_call(self._listen_ended, (session, sse, opened, status, body))

    def _settle_listen(self) -> None:
        if self._listen_settled is not None and not self._listen_settled.done():
            self._listen_settled.set_result(None)

    def _listen_opened(self, session: str | None) -> None:
        self.listening = session == self.session_id
        self._settle_listen()

    def _listen_ended(self, how: tuple[str | None, _native.SseParser, bool, int, bytes]) -> None:
        """The GET stream is over: C's rule says what follows (open it
        again after a wait, at the pace its retry asks, never ask again,
        or initialize again)."""
        session, sse, opened, status, body = how
        self._settle_listen()
        if self._closed or session != self.session_id:
            return  # an older session's stream
        self.listening = False
        if not self._listen_wanted:
            return
        step, self._relisten_ms = sse.listen_after(opened, status, body, self._relisten_ms)
        if step == "expired":
            self._session_expired((b"", session, status, body))
        elif step == "never":
            self._listen_wanted = False
        elif self._relisten is None:
            self._relisten = self.loop.call_later(self._relisten_ms / 1000, self._listen_again)

    def _listen_again(self) -> None:
        self._relisten = None
        self._listen()

    def _stop_listening(self) -> None:
        if self._relisten is not None:
            self._relisten.cancel()
            self._relisten = None
        if self._listen_conn is not None:
            self._listen_conn.cut()  # wakes the listener's blocking read
        self.listening = False

    def _delete_blocking(self, session: str) -> None:
        """DELETE the session; a 405 (the server keeps sessions) or a gone server is fine."""
        conn = self._connection()
        try:
            conn.request("DELETE", self._url["target"], headers=self._headers("DELETE", session))
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()

    def _to_loop(self, frame: bytes) -> None:
        self._to_loop_call(self._inbound, frame)

    def _to_loop_call(self, fn: Any, arg: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, arg)
        except RuntimeError:
            pass  # the loop is closed: the run is over

    def _touch(self) -> None:
        self._to_loop_call(self._touch_now, None)

    def _touch_now(self, _: None) -> None:
        if not self._closed:
            self.driver.touch()

    def _session_expired(self, what: tuple[bytes, str | None, int, bytes]) -> None:
        """A session of ours ended (C's verdict on the answer to frame):
        C's renewal says whether the handshake runs again now, and whether
        the frame goes again on the new session (waiting for it) or gets
        the server's answer."""
        frame, sent_session, status, body = what
        if self._closed:
            return
        current = sent_session is not None and sent_session == self.session_id
        renew, send_again = self._renewal.expired(current, frame)
        if renew:
            self.session_id = None
            self.protocol_version = None
            self._stop_listening()
            fut = asyncio.ensure_future(self._reinitialize())
            self._tasks.add(fut)
            fut.add_done_callback(self._tasks.discard)
        if send_again:
            self._post(frame)  # waits while the handshake runs
            return
        answer = _native.http_error_answer(status, body, frame)
        if answer is not None:
            self._inbound(answer)

    async def _reinitialize(self) -> None:
        try:
            await self.initialize(self._init_timeout)
        except Exception as e:  # the new handshake failed: the peer is gone
            self._renewal.done(False)
            self._held = []
            self._lose(e, _native.HTTP_REINIT_FAILED_FORMAT % e)
            return
        self._renewal.done(True)
        self.driver.record_reconnect()
        held, self._held = self._held, []
        for frame, answer in held:
            self._post(frame, answer)

    def _answer_lost(self, request_id: str | None) -> None:
        """A request's answer cannot come any more: the engine answers it in
        doubt (None: the engine's own ping or probe, which times out)."""
        if request_id is not None and not self._closed:
            self.driver.fail_request(request_id)

    def _set_session(self, sid: str) -> None:
        self.session_id = sid
        self.driver.set_session_id(sid)

    def _fail(self, exc: BaseException) -> None:
        """A POST could not reach the server: the session is over."""
        self._lose(exc, _native.HTTP_UNREACHABLE_FORMAT % (self._shown, connect_reason(exc)))

    def _lose(self, exc: BaseException, reason: str) -> None:
        if self.fatal is None:
            self.fatal = exc
        self._closed = True
        self._stop_listening()
        self._cut_posts()
        self._finish(reason)

    def _stale(self) -> None:
        """The engine's stale policy says close: the server is gone."""
        if not self._closed:
            self._closed = True
            self._stop_listening()
            self._cut_posts()
            self._finish(self.driver.stale_reason, _native.MCPP_ERR_STALE)

    def _finish(self, reason: str, err: int = 0) -> None:
        for fut in self._requests.values():
            if not fut.done():
                fut.set_exception(PeerClosed.because(reason))
        self.driver.close(reason, err)

    def _post(self, frame: bytes, answer: _Resumable | None = None, direct: bool = False) -> None:
        """POSTs a frame; while the session is renewed it waits for the new
        one (unless direct: the handshake's own)."""
        if not direct and self._renewal.holds(frame):
            self._held.append((frame, answer))
            return
        # A daemon thread per POST, not the loop's executor: asyncio.run()
        # joins that executor at exit, so a server that accepted and never
        # answered would hold the process (close() cuts what is in flight).
        threading.Thread(target=self._post_blocking, args=(frame, answer), daemon=True,
                         name="mcpping-http-post").start()

    def _engine_send(self, kind: int, frame: bytes) -> None:
        # A ping or probe the engine no longer waits for (it timed out) has
        # no answer left to come: its POST is cut, so a server that takes
        # requests and never answers holds no thread and socket per ping.
        self._cut_engine_requests()
        if kind not in (_native.MCPP_FRAME_PING, _native.MCPP_FRAME_PROBE):
            self._post(frame)
            return
        request = _Resumable(frame)
        self._engine_requests.append(request)
        self._post(frame, request)

    def _cut_engine_requests(self) -> None:
        """Cuts the POSTs of the engine's requests it no longer waits for
        (C's mcpp_engine_awaits)."""
        waiting = []
        for request in self._engine_requests:
            if self.driver.awaits(request.frame):
                waiting.append(request)
            else:
                request.settle()
        self._engine_requests = waiting

    def _deliver(self, frame: bytes, kind: str) -> None:
        """The engine's own answer to a request (its kind: timeout, in_doubt, ...)."""
        self._resolve(frame, kind)

    def _inbound(self, frame: bytes) -> None:
        if self._closed or not self.driver.recv(frame):
            return
        answer = _native.unserved_request_answer(frame)
        if answer is not None:
            # A request from the server (roots/list, sampling, elicitation):
            # this client serves none, and says so rather than leave the
            # server waiting.
            self.driver.observe_outbound(answer)
            self._post(answer)
            return
        self._resolve(frame)

    def _resolve(self, frame: bytes, kind: str | None = None) -> None:
        try:
            # As text: json.loads on bytes would skip a byte order mark the
            # engine (and Node) refuse, answering a request with a frame
            # whose pings go unanswered.
            msg = json.loads(frame.decode("utf-8", "replace"))
        except ValueError:
            return
        if isinstance(msg, dict) and "method" not in msg:
            rid = msg.get("id")
            fut = self._requests.get(rid) if isinstance(rid, str) else None
            if fut is not None and not fut.done():
                fut.set_result((msg, kind))


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
