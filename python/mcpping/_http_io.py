"""The Streamable HTTP client's I/O, under C's session (mcpping.http).

Each exchange the session starts (a START action) runs in a daemon thread
over http.client (Workers), not in the loop's executor: asyncio.run()
joins that executor at exit, so a server that accepted and never answered
would hold the process (the session's cuts end what is in flight). The
thread hands the loop one part of the answer at a time and reads the next
only once the loop fed it to the session, so a server that floods costs
bounded memory. A thread blocked on its socket is woken by cutting the
socket; one waiting for the loop is not, and may read the rest of a body
already on its way. A body read to its end leaves its connection open for
the session's next request (HTTP/1.1 keep-alive), as Node's agent does.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import queue
import select
import socket
import ssl
import threading
import time
from typing import Any, Callable

from . import _native

#: What the session asks the host to do (one of HttpSession's action dicts).
Action = dict[str, Any]

#: A server (https, host, port): which kept-alive connections can go to it.
Key = tuple[bool, str, int]

#: Guards a connection's socket between its connect and a cut from the loop,
#: and an exchange's state between its thread and the loop.
_CUT_LOCK = threading.Lock()

#: How many kept-alive connections a session keeps idle between exchanges.
_IDLE_MAX = 4

#: How long, and for how many parts, a thread whose exchange was cut while
#: it waited for the loop reads on for the end of the body.
_REST_TIMEOUT = 0.1
_REST_PARTS = 4

#: How long a session's thread with no exchange to run waits for the next
#: one before it ends.
_WORKER_IDLE = 2.0

#: An SSE answer's chunked stream ending: its last chunk's CRLF, then the
#: last chunk (size 0) with no trailer.
_LAST_CHUNK = b"\r\n0\r\n\r\n"


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


class _Cuttable:
    """A connection whose socket another thread can cut, also after an
    answer with no length (an event stream ended by closing) took the
    socket from it (http.client then hands it to the response alone), and
    also while it is still connecting (the cut then comes once it is)."""

    socket: socket.socket | None = None
    _is_cut = False

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        with _CUT_LOCK:
            self.socket = self.sock  # type: ignore[attr-defined]
            is_cut = self._is_cut
        if is_cut:
            self._shutdown()

    def bound(self, seconds: float | None) -> None:
        """The timeout of what is read next (None: none)."""
        if self.socket is not None:
            self.socket.settimeout(seconds)

    def unbounded(self) -> None:
        """No timeout on reads any more: an idle stream, a long answer."""
        self.bound(None)

    def reusable(self) -> bool:
        """Open, never cut, and quiet: an idle kept-alive connection its
        server closed reads as at its end, so it carries no request."""
        sock = self.sock  # type: ignore[attr-defined]
        if sock is None or self._is_cut:
            return False
        try:
            if hasattr(select, "poll"):  # any fd number, where select() takes < 1024
                quiet = select.poll()
                quiet.register(sock, select.POLLIN)
                return not quiet.poll(0)
            return not select.select([sock], [], [], 0)[0]
        except (OSError, ValueError):
            return False

    def cut(self) -> None:
        """Wakes the thread blocked on it; it is read no more."""
        with _CUT_LOCK:
            self._is_cut = True
        self._shutdown()

    def _shutdown(self) -> None:
        if self.socket is not None:
            try:
                self.socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _HTTPConnection(_Cuttable, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Cuttable, http.client.HTTPSConnection):
    pass


Conn = _HTTPConnection | _HTTPSConnection


class Idle:
    """A session's kept-alive connections between exchanges: the next
    request to the same server costs no connect, and its server no accept.
    Taken on the loop, given back by the thread that read an answer whole."""

    def __init__(self) -> None:
        self._conns: list[tuple[Key, Conn]] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: Key) -> Conn | None:
        """An open idle connection to key's server, if any."""
        with self._lock:
            while self._conns:
                had, conn = self._conns.pop()
                if had == key and conn.reusable():
                    return conn
                conn.close()  # another server's (a redirect moved the session), or closed
        return None

    def keep(self, key: Key, conn: Conn) -> None:
        """Keeps conn for the next request; closes it once closed or full."""
        with self._lock:
            if not self._closed and len(self._conns) < _IDLE_MAX:
                self._conns.append((key, conn))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._conns = self._conns, []
        for _, conn in conns:
            conn.close()


def _send_timeout(a: Action) -> float:
    """How long the connect, and the request's sending, may take."""
    timeout: float = a["connect_timeout_ms"] / 1000
    if a["headers_timeout_ms"]:
        timeout = min(timeout, a["headers_timeout_ms"] / 1000)
    return timeout


def _new_conn(a: Action) -> Conn:
    cls = _HTTPSConnection if a["https"] else _HTTPConnection
    return cls(a["host"], a["port"], timeout=_send_timeout(a))


#: What an exchange tells the loop: (exchange, "failed" | "answer" | "part", args, exception).
Feed = Callable[["Exchange", str, "tuple[Any, ...]", "BaseException | None"], None]


class Workers:
    """A session's threads for its exchanges: one that ran an exchange
    waits a while for the next (handing it over costs the loop no wait, where
    Thread.start() waits for a new thread to run), then ends; every one
    ends once its exchange is over after the session closed them."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Exchange | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._closed = False

    def run(self, ex: Exchange) -> None:
        """On the loop: ex runs in an idle thread, else in a new one."""
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._jobs.put(ex)
                return
        threading.Thread(target=self._work, args=(ex,), daemon=True, name=ex.name).start()

    def close(self) -> None:
        """No thread waits for another exchange any more."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._jobs.put(None)

    def _work(self, ex: Exchange | None) -> None:
        me = threading.current_thread()
        while ex is not None:
            me.name, ex.thread = ex.name, me
            ex.run()
            me.name = "mcpping-http-idle"
            with self._lock:
                if self._closed:
                    return
                self._idle += 1
            try:
                ex = self._jobs.get(timeout=_WORKER_IDLE)
            except queue.Empty:
                with self._lock:
                    try:
                        ex = self._jobs.get_nowait()  # handed over as the wait ran out
                    except queue.Empty:
                        self._idle -= 1
                        return


class Exchange:
    """One HTTP exchange the session started (a START action), run by one
    of its Workers; the loop is told each part through feed, and calls
    fed() once it gave the part to the session."""

    def __init__(self, a: Action, idle: Idle, loop: asyncio.AbstractEventLoop, feed: Feed) -> None:
        self.number: int = a["exchange"]
        self.action = a
        self.key: Key = (bool(a["https"]), a["host"], a["port"])
        self._idle, self._loop, self._feed = idle, loop, feed
        #: The connection, until the thread closes it or gives it back (None then).
        self.conn: Conn | None = idle.take(self.key) or _new_conn(a)
        self.stopped = False
        #: Settles on the loop once the exchange is over (its end, failure or cut).
        self.over: asyncio.Future[None] = loop.create_future()
        self._fed = threading.Event()
        #: Whether the thread is, or may be about to be, on the socket (under _CUT_LOCK).
        self._reading = True
        #: Cut while the thread waited for the loop: the socket was left whole.
        self._between_reads = False
        #: The GET listening stream (a tag's GET resumes a POST's answer).
        self.listens = a["method"] == "GET" and not a["tag"]
        #: The name of the thread while it runs this exchange.
        self.name = ("mcpping-http-listen" if self.listens else "mcpping-http-delete" if a["method"] == "DELETE"
                     else "mcpping-http-post")
        #: The thread running it, once one does.
        self.thread: threading.Thread | None = None

    def fed(self) -> None:
        """On the loop: the part reported was given to the session."""
        self._fed.set()

    def finished(self) -> None:
        """On the loop: the session heard the exchange's end or failure."""
        if not self.over.done():
            self.over.set_result(None)

    def stop(self, ending: bool = False) -> None:
        """On the loop: the session cut it (ending: the session is over);
        what the thread reports from now on is dropped. A POST's thread
        waiting for the loop may read the rest of its answer's stream, for
        the connection's sake, unless the session is over."""
        self.finished()
        with _CUT_LOCK:
            self.stopped = True
            self._between_reads = not self._reading and not ending and self.action["method"] == "POST"
            conn = self.conn
        self._fed.set()
        if conn is not None and not self._between_reads:
            conn.cut()

    # ------------------------------------------------------------ the thread

    def run(self) -> None:
        """In a worker: the request, then its answer to the loop part by
        part (response, each chunk of the body, its end), or why no answer
        came."""
        a = self.action
        try:
            try:
                resp = None if self.stopped else self._send()
                if resp is None:
                    return
            except (OSError, http.client.HTTPException) as e:  # not reached, or no HTTP answer
                self._report("failed", (connect_reason(e),), e, last=True)
                return
            self._conn().unbounded()  # an idle stream is no error, nor a long answer
            head = (resp.status, resp.getheader("Content-Type"), resp.getheader("Mcp-Session-Id"),
                    resp.getheader("Location"))
            # A POST's answer comes with its headers, or as its SSE stream
            # begins: handed over with them, a ping's answer costs the loop
            # one wake, not three. (A GET's stream may stay idle: its
            # headers go at once, so the listening stream counts as open.)
            part = self._read_part(resp) if a["method"] == "POST" else (b"", False, False)
            what: str = "answer"
            while True:
                _, ended, broken = part
                if ended and not broken:
                    self._give_back(resp)  # before the loop hears of the end: its next request finds it
                args = (head, *part) if what == "answer" else part
                if not self._report(what, args, None, last=ended) or ended:
                    break
                part, what = self._read_part(resp), "part"
            if self._between_reads and not ended and self._rest_of_body(resp):
                self._give_back(resp)
        finally:
            conn = self._release()
            if conn is not None:
                conn.close()

    def _conn(self) -> Conn:
        conn = self.conn
        assert conn is not None  # the thread's own until it lets go
        return conn

    def _send(self) -> http.client.HTTPResponse | None:
        """The request and its response's head (None: cut meanwhile). A
        kept-alive connection its server closed as the request went (its
        idle timeout ran out) never delivered it: the request goes once
        more on a new connection, as Node's request() does."""
        a, began = self.action, time.monotonic()
        while True:
            conn = self._conn()
            reused = conn.sock is not None
            try:
                if reused:
                    conn.bound(_send_timeout(a))
                conn.request(a["method"], a["target"], body=a["body"], headers=dict(a["headers"]))
                if a["headers_timeout_ms"]:
                    conn.bound(max(0.001, began + a["headers_timeout_ms"] / 1000 - time.monotonic()))
                else:
                    # No bound on the answer: a long tool call is no lost
                    # server (the engine's deadline decides; a cut ends it).
                    conn.unbounded()
                return conn.getresponse()
            except (BrokenPipeError, ConnectionResetError):  # RemoteDisconnected too
                if not reused:
                    raise
            fresh = _new_conn(a)
            with _CUT_LOCK:
                self.conn, stopped = fresh, self.stopped  # a cut from now on cuts the new one
            conn.close()
            if stopped:
                return None

    def _read_part(self, resp: http.client.HTTPResponse) -> tuple[bytes, bool, bool]:
        """The next chunk of a body, whether the body ended with it, and
        whether it ended broken (reset, cut, closed before its length)."""
        try:
            chunk = resp.read1(65536)
            if chunk and resp.chunked and resp.chunk_left == 0 and self._ends_next(resp):
                resp.read1(65536)  # the last chunk, already here: the body ends with this part
        except (OSError, http.client.HTTPException):  # reset, cut mid-body, unfinished chunks
            return b"", True, True
        if chunk and not resp.isclosed() and resp.length != 0:
            return chunk, False, False
        return chunk, True, bool(resp.length)  # closed before Content-Length was read

    def _ends_next(self, resp: http.client.HTTPResponse) -> bool:
        """Whether the end of a chunked body is already here (a server
        writes an SSE answer's end just after it), looked at without
        waiting: the socket gives what it has, or nothing."""
        sock = self.conn.sock if self.conn is not None else None
        if sock is None or resp.fp is None:
            return False
        timeout = sock.gettimeout()
        try:
            sock.settimeout(0)
            return resp.fp.peek(len(_LAST_CHUNK)).startswith(_LAST_CHUNK)
        except (OSError, ValueError):
            return False
        finally:
            sock.settimeout(timeout)

    def _rest_of_body(self, resp: http.client.HTTPResponse) -> bool:
        """After a cut between reads: whether the rest of the body came
        whole within a short while (what it held is dropped: the session
        asked for no more)."""
        self._conn().bound(_REST_TIMEOUT)
        for _ in range(_REST_PARTS):
            _, ended, broken = self._read_part(resp)
            if ended:
                return not broken
        return False

    def _give_back(self, resp: http.client.HTTPResponse) -> None:
        """A body read to its end on a connection the server keeps open:
        the next bytes on it are the next response's, so the session's
        next request may go on it."""
        if resp.will_close or not (resp.isclosed() if resp.chunked else resp.length == 0):
            return
        resp.close()  # done with: http.client sends on the connection again
        conn = self._release()
        if conn is not None:
            self._idle.keep(self.key, conn)

    def _release(self) -> Conn | None:
        """The connection, no longer this exchange's (a cut touches it no more)."""
        with _CUT_LOCK:
            conn, self.conn = self.conn, None
            self._reading = False
        return conn

    def _report(self, what: str, args: tuple[Any, ...], exc: BaseException | None, last: bool) -> bool:
        """Hands the loop one part of the exchange and, unless it is the
        last, waits until the loop fed it to the session; False once the
        session cut the exchange (or the loop is gone): the thread then
        reads no more."""
        with _CUT_LOCK:
            if self.stopped:
                return False
            self._reading = False
        self._fed.clear()
        try:
            self._loop.call_soon_threadsafe(self._feed, self, what, args, exc)
        except RuntimeError:
            return False  # the loop is closed: the run is over
        if last:
            return True
        while not self._fed.wait(1.0):
            if self._loop.is_closed():
                return False
        with _CUT_LOCK:
            self._reading = not self.stopped
            return self._reading
