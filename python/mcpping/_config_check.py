"""``mcpping --config``: checks every server of a client config at once.

Plumbing only: each server's check is C's state machine
(csrc/src/app/config_run.c, via ``_native.config_run*``): the skips, the
deadline, the handshake's bounds, the ping grid, every status and reason.
This module resolves, spawns or connects, shakes hands, pings, waits and
closes when asked, and returns C's row for mcpp_config_format_results.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from . import _native
from ._commands import now_ms as _now_ms, open_server, ping_reply, unreachable
from .config import Server, UnresolvedVariable, resolve
from .errors import PeerClosed, RequestInDoubt, SpawnError
from .peer import HandshakeError, Peer

# What the state machine asks (config_run.h mcpp_config_do) and what it is told.
_OPEN, _HANDSHAKE, _PING, _WAIT, _CLOSE, _DONE = range(1, 7)
_OPEN_OK, _UNRESOLVED, _SPAWN_FAILED, _INVALID = range(4)


@dataclass
class Plan:
    """How each server is checked (the command line's -c, -i, -W, -w, --log)."""

    count: int
    interval: float
    timeout: float
    deadline: float
    log: str | None
    #: Set on top of the SDKs' safe subset of ours, instead of ours (None),
    #: for stdio servers; their env goes on top of that.
    environ: dict[str, str] | None = None


def _open(server: Server, workspace: str, plan: Plan, run: Any) -> tuple[int, str | None, Any]:
    """(result, reason, peer) as config_run_open_done takes them; a stdio
    server's stderr goes to C's run as it comes."""
    try:
        live = resolve(server, workspace)
    except UnresolvedVariable as e:
        return _UNRESOLVED, str(e), None
    _native.config_run_secrets(run, live.secrets)  # before the server can say anything
    try:
        return _OPEN_OK, None, open_server(
            url=live.url if live.transport != "stdio" else None, headers=live.headers,
            command=[live.command, *live.args] if live.command else None, env={**(plan.environ or {}), **live.env},
            cwd=live.cwd, inherit_env=plan.environ is None,
            stderr=lambda chunk: _native.config_run_stderr(run, chunk.encode()),
            record=plan.log, ping_timeout=plan.timeout)
    except SpawnError as e:
        return _SPAWN_FAILED, str(e), None
    except (ValueError, TypeError):
        return _INVALID, None, None


async def _close(peer: Any, want_exit: bool) -> tuple[Any, ...]:
    """Closes peer; how it ended as config_run_closed takes it."""
    exited, status, sig, gone = False, 0, 0, unreachable(peer) if want_exit else None
    if want_exit and gone is None and isinstance(peer, Peer):
        try:
            info = await asyncio.wait_for(peer.wait_closed(), 5)
            exited, status, sig = True, info.exit_status, info.term_signal
        except asyncio.TimeoutError:
            pass
    await peer.close()
    return exited, status, sig, gone


async def check_all(servers: list[tuple[Server, str]], plan: Plan,
                    stop: asyncio.Event) -> list[dict[str, Any]]:
    """Checks every (server, workspace) at once; rows in the given order."""
    return list(await asyncio.gather(*(check(s, ws, plan, stop) for s, ws in servers)))


async def check(server: Server, workspace: str, plan: Plan, stop: asyncio.Event) -> dict[str, Any]:
    """One server's check, run as C's state machine asks; its row."""
    run = _native.config_run(server.transport, server.disabled, plan.count,
                             round(plan.interval * 1000), max(1, round(plan.timeout * 1000)),
                             round(plan.deadline * 1000), _now_ms())
    peer, closed = None, False
    try:
        while True:
            if stop.is_set():
                _native.config_run_interrupt(run, _now_ms())
            what, timeout_ms, until_ms, want_exit = _native.config_run_next(run, _now_ms())
            if what == _DONE:
                break
            if what == _OPEN:
                result, reason, peer = _open(server, workspace, plan, run)
                _native.config_run_open_done(run, _now_ms(), result, reason)
            elif what == _HANDSHAKE:
                assert peer is not None  # C asks for it only after an open that made one
                try:
                    await asyncio.wait_for(peer.initialize(timeout_ms / 1000),
                                           (until_ms - _now_ms()) / 1000)
                except asyncio.TimeoutError:
                    _native.config_run_handshake_timed_out(run, _now_ms())
                except (HandshakeError, PeerClosed, RequestInDoubt) as e:
                    gone = peer.fatal is not None or peer.closed
                    _native.config_run_handshake_failed(run, _now_ms(), gone, str(e))
                else:
                    _native.config_run_handshake_done(run, _now_ms(), peer.protocol_version)
            elif what == _PING:
                kind, rtt_ms, _, _ = await ping_reply(peer, timeout_ms / 1000)
                _native.config_run_replied(run, _now_ms(), kind, rtt_ms)
            elif what == _WAIT:
                try:
                    await asyncio.wait_for(stop.wait(), max(0, until_ms - _now_ms()) / 1000)
                except asyncio.TimeoutError:
                    pass
            elif what == _CLOSE:
                closed = True
                if isinstance(peer, Peer):  # before the close forgets them
                    _native.config_run_unreadable(run, *peer._unreadable_lines())
                _native.config_run_closed(run, _now_ms(), *await _close(peer, want_exit))
    finally:
        if peer is not None and not closed:
            await peer.close()
    row = _native.config_run_row(run)
    row.update(name=server.name, transport=server.transport, file=server.file,
               json_path=server.json_path)
    return row
