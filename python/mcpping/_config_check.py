"""``mcpping --config``: checks every server of a client config at once.

Each server gets its own deadline: spawn (or connect), handshake, then up
to ``count`` pings. The outcome is one :class:`Result` per server; the
statuses and their reasons are docs/cli.md's, and Node's
``node/config_check.js`` gives the same ones. No reason ever carries an
``env`` or ``headers`` value, a URL or an argument.
"""

from __future__ import annotations

import asyncio
import errno
import os
from dataclasses import dataclass, field
from typing import Any

from . import _native
from .config import Server, UnresolvedVariable, resolve
from .errors import (PeerClosed, PingError, PingInvalid, PingTimeout, PingUnsupported,
                     RequestInDoubt, SpawnError)
from .peer import HandshakeError, Peer

NO_PING_VERSION = "2026-07-28"


@dataclass
class Plan:
    """How each server is checked (the command line's -c, -i, -W, -w, --log)."""

    count: int
    interval: float
    timeout: float
    deadline: float
    log: str | None
    #: The environment stdio servers start in, their env on top (None: ours).
    environ: dict[str, str] | None = None


@dataclass
class Result:
    """What one server's check found."""

    server: Server
    status: str = "ok"
    reason: str | None = None
    protocol_version: str | None = None
    sent: int = 0
    received: int = 0
    rtts_ms: list[float] = field(default_factory=list)
    #: The server's last stderr line, kept when it died.
    last_stderr: str | None = None
    #: Lines the server wrote on stdout that were not JSON.
    non_json_lines: int = 0

    def row(self) -> dict[str, Any]:
        """This result as mcpp_config_format_results reads it."""
        s = self.server
        return {"name": s.name, "transport": s.transport, "file": s.file,
                "json_path": s.json_path, "protocol_version": self.protocol_version,
                "status": self.status, "reason": self.reason, "last_stderr": self.last_stderr,
                "sent": self.sent, "received": self.received, "rtts_ms": self.rtts_ms,
                "non_json_lines": self.non_json_lines}


class _Tail:
    """Collects a server's stdout noise and the last line of its stderr."""

    def __init__(self, res: Result) -> None:
        self.res = res
        self.buf = ""

    def stderr(self, chunk: str) -> None:
        self.buf = (self.buf + chunk)[-4096:]

    def message(self, frame: bytes) -> None:
        if not _native.config_line_is_json(frame):
            self.res.non_json_lines += 1

    def last_line(self) -> str | None:
        lines = [x for x in self.buf.splitlines() if x.strip()]
        return lines[-1].strip() if lines else None


def _connect_reason(exc: BaseException | None) -> str:
    """ECONNREFUSED and friends, as Node's fetch names them; never the URL."""
    while exc is not None:
        nested = getattr(exc, "reason", None)
        if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
            return errno.errorcode[exc.errno]
        if isinstance(nested, BaseException):
            exc = nested
            continue
        return str(nested if nested is not None else exc)
    return "unreachable"


async def _closed_reason(peer: Any) -> str:
    """How the connection ended: the HTTP failure, or how the server process exited."""
    fatal = getattr(peer, "fatal", None)
    if fatal is not None:
        return f"cannot connect: {_connect_reason(fatal)}"
    if isinstance(peer, Peer):
        try:
            return _exit_text(await asyncio.wait_for(peer.wait_closed(), 5))
        except asyncio.TimeoutError:
            pass
    return "connection closed"


def _exit_text(info: Any) -> str:
    if info.term_signal:
        return f"server killed by signal {info.term_signal}"
    return f"server exited with status {info.exit_status}"


async def check_all(servers: list[tuple[Server, str]], plan: Plan,
                    stop: asyncio.Event) -> list[Result]:
    """Checks every (server, workspace) at once; results in the given order."""
    return list(await asyncio.gather(*(check(s, ws, plan, stop) for s, ws in servers)))


async def check(server: Server, workspace: str, plan: Plan, stop: asyncio.Event) -> Result:
    """Spawns or connects, runs the handshake and pings one server."""
    res = Result(server)
    if server.disabled:
        res.status, res.reason = "skipped", "disabled"
        return res
    if server.transport == "sse":
        res.status, res.reason = "skipped", "legacy HTTP+SSE transport"
        return res
    loop = asyncio.get_running_loop()
    end = loop.time() + plan.deadline
    try:
        live = resolve(server, workspace)
    except UnresolvedVariable as e:
        res.status, res.reason = "not started", str(e)
        return res
    peer: Any
    tail = _Tail(res)
    try:
        if live.transport == "stdio":
            assert live.command is not None
            peer = Peer([live.command, *live.args], keepalive=None,
                        env={**(os.environ if plan.environ is None else plan.environ), **live.env},
                        cwd=live.cwd, stderr=tail.stderr,
                        record=plan.log, ping_timeout=plan.timeout, request_timeout=None,
                        kill_grace=1.0, on_message=tail.message, on_close=None)
        else:
            from .http import HttpPeer
            assert live.url is not None
            peer = HttpPeer(live.url, headers=live.headers, ping_timeout=plan.timeout,
                            record=plan.log)
    except SpawnError as e:
        res.status, res.reason = "spawn failed", str(e)
        return res
    except (ValueError, TypeError):
        # A NUL in an argument and the like; the message could quote a value.
        res.status, res.reason = "spawn failed", "invalid command line or environment"
        return res
    try:
        await _handshake(peer, res, end, loop)
        if res.status == "ok" and plan.count:
            await _pings(peer, res, plan, end, stop, loop)
    finally:
        await peer.close()
    if res.status in ("handshake failed", "closed") and isinstance(peer, Peer):
        res.last_stderr = tail.last_line()
    return res


async def _handshake(peer: Any, res: Result, end: float, loop: asyncio.AbstractEventLoop) -> None:
    try:
        await asyncio.wait_for(peer.initialize(max(0.001, end - loop.time()) + 1), end - loop.time())
    except asyncio.TimeoutError:
        res.status, res.reason = "timeout", "no initialize result"
        return
    except (HandshakeError, PeerClosed, RequestInDoubt) as e:
        res.status = "handshake failed"
        closed = getattr(peer, "fatal", None) is not None or getattr(peer, "closed", False)
        res.reason = await _closed_reason(peer) if closed else str(e)
        return
    res.protocol_version = peer.protocol_version
    if peer.protocol_version and peer.protocol_version >= NO_PING_VERSION:
        res.status, res.reason = "unsupported", f"protocol {peer.protocol_version} has no ping"


async def _pings(peer: Any, res: Result, plan: Plan, end: float, stop: asyncio.Event,
                 loop: asyncio.AbstractEventLoop) -> None:
    first = loop.time()
    for seq in range(plan.count):
        if seq:
            # Pings keep to a grid from the first one, as ping(8) does.
            delay = min(first + seq * plan.interval, end) - loop.time()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except asyncio.TimeoutError:
                    pass
        left = end - loop.time()
        if left <= 0 or stop.is_set():
            break
        wait = min(plan.timeout, left)
        try:
            rtt = await peer.ping(wait)
        except PingTimeout:
            if wait < plan.timeout:
                break  # the deadline cut this ping short: not counted
            res.sent += 1
        except (PingError, PingInvalid):
            res.sent += 1
        except PingUnsupported:
            res.status, res.reason = "unsupported", None
            return
        except PeerClosed:
            res.status, res.reason = "closed", await _closed_reason(peer)
            return
        else:
            res.sent += 1
            res.received += 1
            res.rtts_ms.append(rtt * 1000)
    if res.sent == 0:
        res.status, res.reason = "timeout", "no ping finished before the deadline"
    elif res.received < res.sent:
        res.status = "loss"
