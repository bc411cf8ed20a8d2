"""The Streamable HTTP client's I/O, under C's session (mcpping.http).

Every exchange the session starts (a START action) runs on the
application's loop, over an asyncio connection, as Node's client runs on
its own: no thread, and no hand-off between threads on a round trip. A
request goes as the bytes C made of it; what arrives is parsed as it comes
(C's HTTP/1.1 response parser: bodies by length, chunked, or until the
server closes) and handed to the session in the same callback, so a server
that floods costs one read's memory. A body read to its end leaves its
connection for the session's next request (keep-alive), as Node's agent
does.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
import ssl
import threading
from typing import Any, Protocol

from . import _native

#: What the session asks the host to do (one of HttpSession's action dicts).
Action = dict[str, Any]

#: A server (https, host, port): which kept-alive connections can go to it.
Key = tuple[bool, str, int]

#: How many kept-alive connections a session keeps idle between exchanges.
_IDLE_MAX = 4

#: How long, and for how many bytes, a POST whose exchange the session cut
#: mid-body is read on for the body's end, so its connection is kept.
_DRAIN_SECONDS = 0.1
_DRAIN_BYTES = 256 * 1024

#: What the server sent is no HTTP/1.1 response (C's parser said why).
NotHttp = _native.NotHttp


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
        if isinstance(exc, NotHttp):
            return _native.HTTP_NOT_HTTP_CAUSE
        if isinstance(exc, ConnectionResetError) and exc.errno is None:
            return "ECONNRESET"  # closed before any answer: Node's "socket hang up"
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) and getattr(exc, "errno", None) is None:
            return "ETIMEDOUT"  # a connect or head that timed out, as Node names it
        if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
            return errno.errorcode[exc.errno]
        nested = getattr(exc, "reason", None)
        if isinstance(nested, BaseException):
            exc = nested
            continue
        return str(nested if nested is not None else exc)
    return "unreachable"


class Sink(Protocol):
    """What an exchange tells the session's host (mcpping.http), on the loop."""

    def _answer_head(self, ex: Exchange, status: int, headers: dict[str, str]) -> None: ...
    def _answer_body(self, ex: Exchange, chunk: bytes) -> None: ...
    def _answer_end(self, ex: Exchange, broken: bool) -> None: ...
    def _exchange_failed(self, ex: Exchange, exc: BaseException) -> None: ...


class Conn(asyncio.Protocol):
    """One connection to a server; carries one exchange at a time."""

    def __init__(self, key: Key, pool: Pool) -> None:
        self.key = key
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        #: The exchange it carries now (None while idle).
        self.exchange: Exchange | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's TLS one is no asyncio.Transport
        self.pool.opened(self)

    def data_received(self, data: bytes) -> None:
        if self.exchange is not None:
            self.exchange.received(data)
        else:
            self.close()  # an idle connection that speaks carries nothing more

    def eof_received(self) -> None:
        if self.exchange is not None:
            self.exchange.closed(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.pool.forget(self)
        if self.exchange is not None:
            self.exchange.closed(exc)

    def reusable(self) -> bool:
        return not self.lost and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        """Closed at once, what it holds dropped (a cut, an end)."""
        self.exchange = None
        if self.transport is not None:
            self.transport.abort()


class Pool:
    """A session's connections: the idle ones kept alive between exchanges
    (the next request to the same server costs no connect, and its server
    no accept), and every one open, so that closing leaves none."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._idle: list[Conn] = []
        self._open: set[Conn] = set()
        self._connects: set[asyncio.Task[Conn]] = set()
        self._gone: asyncio.Future[None] | None = None
        self._tls: ssl.SSLContext | None = None
        self.closed = False

    def take(self, key: Key) -> Conn | None:
        """An open idle connection to key's server, if any."""
        while self._idle:
            conn = self._idle.pop()
            if conn.key == key and conn.reusable():
                return conn
            conn.close()  # another server's (a redirect moved the session), or closed
        return None

    def keep(self, conn: Conn) -> None:
        """Keeps conn for the next request; closes it once closed or full."""
        conn.exchange = None
        if not self.closed and conn.reusable() and len(self._idle) < _IDLE_MAX:
            self._idle.append(conn)
        else:
            conn.close()

    def opened(self, conn: Conn) -> None:
        self._open.add(conn)

    def forget(self, conn: Conn) -> None:
        self._open.discard(conn)
        if conn in self._idle:
            self._idle.remove(conn)
        if not self._open and self._gone is not None and not self._gone.done():
            self._gone.set_result(None)

    async def connect(self, key: Key, timeout: float) -> Conn:
        """A new connection to key's server (TLS for https), within timeout
        seconds; raises what stopped it (OSError, ssl.SSLError, TimeoutError)."""
        task = self.loop.create_task(self._connect(key))
        self._connects.add(task)
        task.add_done_callback(self._connects.discard)
        return await asyncio.wait_for(task, timeout)

    async def _connect(self, key: Key) -> Conn:
        https, host, port = key
        sock = await self._socket(host, port)
        try:
            tls = self._context() if https else None
            _, conn = await self.loop.create_connection(lambda: Conn(key, self), sock=sock, ssl=tls,
                                                        server_hostname=host if https else None)
        except BaseException:
            sock.close()
            raise
        if self.closed:
            conn.close()
            raise ConnectionAbortedError(errno.ECONNABORTED, "the session closed")
        return conn

    async def _socket(self, host: str, port: int) -> socket.socket:
        """A socket connected to the first of host's addresses that takes
        it; else the first address's error (as socket.create_connection)."""
        try:
            ipaddress.ip_address(host)  # no resolver thread for an address
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            addresses: list[tuple[int, Any]] = [(family, (host, port))]
        except ValueError:
            addresses = [(info[0], info[4]) for info in await self._resolve(host, port)]
        first: OSError | None = None
        for family_number, address in addresses:
            sock = socket.socket(family_number, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                await self.loop.sock_connect(sock, address)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a request is one write
                return sock
            except OSError as e:
                sock.close()
                first = first or e
            except BaseException:
                sock.close()
                raise
        raise first or OSError(errno.EHOSTUNREACH, f"no address for {host}")

    async def _resolve(self, host: str, port: int) -> list[Any]:
        """getaddrinfo() in a daemon thread of its own, not the loop's
        executor: asyncio.run() joins that at exit, so a connect the session
        called off would hold the process for the resolver's timeouts."""
        found: asyncio.Future[list[Any]] = self.loop.create_future()

        def settle(infos: list[Any] | None, exc: BaseException | None) -> None:
            if found.done():
                return
            if exc is not None:
                found.set_exception(exc)
            else:
                found.set_result(infos or [])

        def resolve() -> None:
            infos, exc = None, None
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except Exception as e:  # socket.gaierror, UnicodeError (no IDNA name)
                exc = e
            try:
                self.loop.call_soon_threadsafe(settle, infos, exc)
            except RuntimeError:
                pass  # the loop is closed: nobody waits

        threading.Thread(target=resolve, daemon=True, name="mcpping-http-resolve").start()
        return await found

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()  # the system's trust store, SSL_CERT_FILE
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls

    def shut(self) -> None:
        """Closes every connection, and each made from now on."""
        self.closed = True
        idle, self._idle = self._idle, []
        for conn in [*idle, *self._open]:
            conn.close()
        for task in self._connects:
            task.cancel()

    async def gone(self, timeout: float) -> None:
        """Waits (timeout seconds at most) until every connection shut is
        closed, and every connect called off is over."""
        waits: list[asyncio.Future[Any]] = list(self._connects)
        if self._open:
            self._gone = self.loop.create_future()
            waits.append(self._gone)
        if waits:
            await asyncio.wait(waits, timeout=timeout)


class Exchange:
    """One HTTP exchange the session started (a START action): its request
    on a kept-alive or new connection, then its answer to the sink part by
    part (the head, each read of the body, the end), or why none came."""

    def __init__(self, a: Action, pool: Pool, sink: Sink) -> None:
        self.number: int = a["exchange"]
        self.action = a
        self.key: Key = (bool(a["https"]), a["host"], a["port"])
        self._pool, self._sink, self._loop = pool, sink, pool.loop
        self.stopped = False
        #: Settles once the exchange is over (its end, failure or cut).
        self.over: asyncio.Future[None] = self._loop.create_future()
        #: The GET listening stream (a tag's GET resumes a POST's answer).
        self.listens = a["method"] == "GET" and not a["tag"]
        #: The connection while it carries this exchange.
        self.conn: Conn | None = None
        self._response = _native.HttpResponse()
        self._reused = False
        self._heard = False  # any byte of the answer
        #: Bytes read on after a cut mid-body (None: not cut).
        self._draining: int | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._began = self._loop.time()

    def start(self) -> None:
        conn = self._pool.take(self.key)
        if conn is not None:
            self._send(conn, reused=True)
        else:
            self._connecting = self._loop.create_task(self._connect())

    def finished(self) -> None:
        """The session heard the exchange's end or failure (or cut it)."""
        if not self.over.done():
            self.over.set_result(None)

    def stop(self, ending: bool = False) -> None:
        """The session cut it (ending: the session is over); nothing more
        reaches the sink. A POST cut mid-body is read on for a short while
        to its end, for its connection's sake, unless the session is over."""
        self.finished()
        self.stopped = True
        self._disarm()
        if self._connecting is not None:
            self._connecting.cancel()
        conn = self.conn
        if conn is None:
            return
        r = self._response
        if not ending and self.action["method"] == "POST" and r.started and not r.until_close:
            self._draining = 0
            self._timer = self._loop.call_later(_DRAIN_SECONDS, self._let_go)
        else:
            self._let_go()

    # ------------------------------------------------------------ the connection

    async def _connect(self) -> None:
        a = self.action
        timeout = a["connect_timeout_ms"] / 1000
        if a["headers_timeout_ms"]:
            timeout = min(timeout, a["headers_timeout_ms"] / 1000)
        try:
            conn = await self._pool.connect(self.key, timeout)
        except asyncio.CancelledError:
            return  # stopped
        except Exception as e:  # not reached: OSError, ssl.SSLError, TimeoutError, ...
            self._fail(e)
            return
        finally:
            self._connecting = None
        if self.stopped:
            conn.close()
        else:
            self._send(conn, reused=False)

    def _send(self, conn: Conn, reused: bool) -> None:
        self.conn, self._reused = conn, reused
        conn.exchange = self
        assert conn.transport is not None
        conn.transport.write(self.action["request"])
        # No bound on a POST's answer but the session's: a long tool call
        # is no lost server (the engine's deadline decides; a cut ends it).
        if self.action["headers_timeout_ms"]:
            self._timer = self._loop.call_at(self._began + self.action["headers_timeout_ms"] / 1000,
                                             self._no_head)

    def received(self, data: bytes) -> None:
        """From the connection: the next bytes of the answer."""
        r = self._response
        self._heard = True
        try:
            parts = r.feed(data)
        except NotHttp as e:
            self._broke(e)
            return
        for part in parts:
            if self.stopped:
                break
            if part[0] == "head":
                self._disarm()
                self._sink._answer_head(self, part[1], part[2])
            elif part[0] == "body":
                self._sink._answer_body(self, part[1])
            else:
                self._give_back()  # before the session hears of the end: its next request finds it
                self.finished()
                self._sink._answer_end(self, False)
        if self._draining is not None:  # cut mid-body (by what was just fed, or before): only its end matters
            self._draining += len(data)
            if r.ended:
                self._disarm()
                self._give_back()
            elif self._draining > _DRAIN_BYTES:
                self._let_go()

    def closed(self, exc: BaseException | None) -> None:
        """From the connection: the server closed it (exc: how it broke)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.exchange = None
        self._disarm()
        if self.stopped:
            return
        r = self._response
        if not r.started:
            if self._reused and not self._heard:
                # A kept-alive connection its server closed as the request
                # went (its idle timeout ran out) never delivered it: the
                # request goes once more on a new connection, as Node's does.
                self._reused = False
                self._response = _native.HttpResponse()
                self._connecting = self._loop.create_task(self._connect())
                return
            self._fail(exc if isinstance(exc, OSError) else ConnectionResetError("closed before any answer"))
            return
        whole = r.closed()
        self.finished()
        self._sink._answer_end(self, not whole)

    def _give_back(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if self._response.keep_alive:
            self._pool.keep(conn)
        else:
            conn.close()

    def _let_go(self) -> None:
        conn, self.conn = self.conn, None
        self._draining = None
        if conn is not None:
            conn.close()

    def _no_head(self) -> None:
        self._timer = None
        self._broke(TimeoutError(f"no response headers after {self.action['headers_timeout_ms']} ms"))

    def _broke(self, exc: Exception) -> None:
        """What came is no answer (or none came in time): the connection
        goes, and the session hears why."""
        self._let_go()
        if self.stopped:
            return
        if self._response.started:
            self.finished()
            self._sink._answer_end(self, True)
        else:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        if not self.stopped:
            self.finished()
            self._sink._exchange_failed(self, exc)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
