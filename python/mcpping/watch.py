"""``mcpping watch``: every server of a client config under standing watch.

Plumbing only: the command line, each server's state, the re-open
backoff, /status, /metrics, the listener's routing, every log line and the
redaction of secrets come from the C core (csrc/src/app/watch.c, via
``_native.watch_*``). This module opens the servers (stdio: a Peer with
keepalive and the library's reconnect; HTTP: an HttpPeer with keepalive),
feeds their events to C, serves the bytes C gives for each request on an
asyncio listener and writes C's log bytes to stderr.
"""

from __future__ import annotations

import asyncio
import errno
import signal
import sys
from typing import Any

from . import _native
from ._commands import now_ms as _now_ms, open_server, stop_on, unreachable
from .config import Server, UnresolvedVariable, resolve
from .errors import SpawnError
from .keepalive import KeepAlive
from .peer import Peer
from .reconnect import Reconnect

# A request head longer than this, or slower than this, gets no answer.
_MAX_HEAD = _native.WATCH_MAX_HEAD
_HEAD_TIMEOUT = _native.WATCH_HEAD_TIMEOUT_MS / 1000


class _Watch:
    def __init__(self, argv: list[str], o: dict[str, Any]) -> None:
        self.w = _native.watch_new(argv)
        self.o = o
        self.entries: list[tuple[Server, str]] = []
        self.peers: dict[int, Any] = {}
        self.opening: dict[int, asyncio.Task[None]] = {}
        self.stopping = False
        self.wake = asyncio.Event()
        self.stop = asyncio.Event()

    def flush(self) -> None:
        out = _native.watch_output(self.w)
        if out:
            sys.stderr.buffer.write(out)
            sys.stderr.buffer.flush()

    def add(self, server: Server, workspace: str) -> None:
        live = server
        skip = _native.config_skip_reason(server.transport, server.disabled)
        if skip is None:
            try:
                live = resolve(server, workspace)
            except UnresolvedVariable as e:
                skip = str(e)  # names the field and the variable, never a value
        _native.watch_add(self.w, server.name, "stdio" if live.transport == "stdio"
                          else "streamable-http", live.secrets, skip)
        self.entries.append((live, workspace))

    def keepalive(self) -> KeepAlive:
        """The command's -i, -W and failures, down to the engine's floor (C's)."""
        o = self.o
        return KeepAlive(interval=o["interval_ms"] / 1000, timeout=o["timeout_ms"] / 1000,
                         failures=o["failures"], min_interval=_native.MCPP_MIN_INTERVAL_FLOOR_MS / 1000)

    def on_event(self, i: int, ev: Any) -> None:
        _native.watch_feed(self.w, i, _now_ms(), ev.name, ev.state, ev.rtt or 0.0,
                           bool(ev.invalid), ev.ping_seq or 0, ev.proof, ev.attempt or 0,
                           ev.pid or 0, ev.message)
        if (ev.name == "closed" and not self.stopping and i not in self.opening
                and self.peers.get(i) is not None):
            # Ended for good (reconnect gave up, or an HTTP session lost):
            # C schedules the re-open.
            peer = self.peers.pop(i, None)
            _native.watch_closed(self.w, i, _now_ms(), *_why(None, peer, ev.message))
            self.wake.set()
        self.flush()

    async def open(self, i: int) -> None:
        live, _ = self.entries[i]
        timeout = self.o["connect_timeout_ms"] / 1000
        peer: Any = None
        try:
            stdio = live.transport == "stdio"
            peer = open_server(
                url=None if stdio else live.url, headers=live.headers,
                command=[live.command, *live.args] if live.command else None, env=live.env,
                cwd=live.cwd, stderr=lambda chunk: _native.watch_stderr(self.w, i, chunk.encode()),
                ping_timeout=self.o["timeout_ms"] / 1000, keepalive=self.keepalive(),
                reconnect=Reconnect() if stdio else None, on_event=lambda ev: self.on_event(i, ev))
            self.peers[i] = peer
            await asyncio.wait_for(peer.initialize(timeout + _native.CLI_STEP_SLACK_MS / 1000), timeout)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure is a reason to retry
            self.peers.pop(i, None)
            why = _why(e, peer, str(e))  # before the close forgets what it wrote
            if peer is not None:
                await peer.close()
            _native.watch_open_failed(self.w, i, _now_ms(), *why)
        else:
            _native.watch_opened(self.w, i, _now_ms(), peer.name, peer.protocol_version,
                                 getattr(peer, "pid", None) or 0)
        finally:
            self.opening.pop(i, None)
            self.wake.set()
            self.flush()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
            writer.write(_native.watch_respond(self.w, _now_ms(), head))
            await writer.drain()
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError):
            pass
        finally:
            writer.close()

    async def run(self) -> int:
        o = self.o
        stop_on(self.stop, signal.SIGTERM, signal.SIGINT)
        try:
            server = await asyncio.start_server(self.serve, o["listen_host"], o["listen_port"],
                                                limit=_MAX_HEAD)
        except OSError as e:
            _native.watch_listen_failed(self.w, errno.errorcode.get(e.errno or 0, str(e)))
            self.flush()
            return int(o["exit_usage"])
        port = server.sockets[0].getsockname()[1]
        _native.watch_listening(self.w, o["listen_host"], port)
        self.flush()
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            while not self.stop.is_set():
                i, next_ms = _native.watch_due(self.w, _now_ms())
                if i >= 0:
                    self.opening[i] = asyncio.ensure_future(self.open(i))
                    continue
                self.wake.clear()
                waker = asyncio.ensure_future(self.wake.wait())
                limit = None if next_ms < 0 else max(0, next_ms - _now_ms()) / 1000
                await asyncio.wait({waker, stopper}, timeout=limit,
                                   return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
        finally:
            stopper.cancel()
            self.stopping = True
            _native.watch_stopping(self.w)
            self.flush()
            server.close()
            await server.wait_closed()
            for t in list(self.opening.values()):
                t.cancel()
            await asyncio.gather(*self.opening.values(), return_exceptions=True)
            await asyncio.gather(*(p.close() for p in self.peers.values()),
                                 return_exceptions=True)
            _native.watch_stopped(self.w)
            self.flush()
        return 0


# mcpping/watch.h mcpp_watch_why: C words each.
_WHY_TEXT, _WHY_NO_INITIALIZE, _WHY_UNREACHABLE, _WHY_INVALID = range(4)


def _why(e: BaseException | None, peer: Any, text: str | None) -> tuple[int, str | None]:
    """(why, detail) of a failed open (e) or a lost connection, for C."""
    if isinstance(e, asyncio.TimeoutError):
        # What a stdio server wrote instead of JSON-RPC, if it did.
        return _WHY_NO_INITIALIZE, peer._unreadable() if isinstance(peer, Peer) else None
    gone = unreachable(peer)
    if gone is not None and not isinstance(e, SpawnError):
        return _WHY_UNREACHABLE, gone
    if isinstance(e, (ValueError, TypeError)):
        return _WHY_INVALID, None
    return _WHY_TEXT, text or (type(e).__name__ if e is not None else None)


async def run(argv: list[str], o: dict[str, Any]) -> int:
    """Runs ``mcpping watch`` until SIGTERM or SIGINT; returns the exit status."""
    from .cli import _fail, load_configs
    loaded = load_configs(o["configs"])
    if isinstance(loaded, str):
        return _fail(loaded)
    watch = _Watch(argv, o)
    for f in loaded:
        for s in f.servers:
            watch.add(s, f.workspace)
    return await watch.run()
