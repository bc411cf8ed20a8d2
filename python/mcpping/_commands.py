"""What the three commands (``mcpping URL|-- CMD``, ``--config`` and
``watch``) share: the clock their C state machines read, Ctrl-C, the
connection each opens to a server, and a ping's outcome in the words C
takes (``mcpp_cli_reply``, app.h)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from . import _native
from .errors import PeerClosed, PingError, PingInvalid, PingTimeout, PingUnsupported
from .keepalive import KeepAlive
from .peer import Peer, StderrTarget, discard
from .reconnect import Reconnect

if TYPE_CHECKING:
    from .http import HttpPeer

OK, TIMEOUT, ERROR, INVALID, UNSUPPORTED, CLOSED = range(6)


def now_ms() -> int:
    """The clock the commands' state machines are told."""
    return int(time.monotonic() * 1000)


def stop_on(stop: asyncio.Event, *signals: signal.Signals) -> None:
    """Sets stop on each signal (SIGINT if none), where the loop can."""
    loop = asyncio.get_running_loop()
    for sig in signals or (signal.SIGINT,):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass


def open_server(*, command: Sequence[str] | None = None, url: str | None = None,
                headers: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
                cwd: str | None = None, inherit_env: bool = True, stderr: StderrTarget = "ignore",
                record: str | None = None, ping_timeout: float,
                keepalive: KeepAlive | None = None, reconnect: Reconnect | None = None,
                on_event: Callable[[Any], Any] | None = None) -> Union[Peer, "HttpPeer"]:
    """A command's connection to one server, not yet initialized: an
    HttpPeer for a url, else a Peer that spawns command, serves no requests
    from it and gives it the commands' kill grace (C's)."""
    if url is not None:
        from .http import HttpPeer
        peer = HttpPeer(url, headers=headers, keepalive=keepalive, ping_timeout=ping_timeout,
                        record=record)
        if on_event is not None:
            peer.on("*", on_event)
        return peer
    assert command is not None
    return Peer(command, keepalive=keepalive, env=env, cwd=cwd, inherit_env=inherit_env,
                stderr=stderr, record=record, ping_timeout=ping_timeout, request_timeout=None,
                kill_grace=_native.APP_KILL_GRACE_MS / 1000, on_message=discard, on_close=None,
                on_event=on_event, reconnect=reconnect)


def unreachable(peer: Any) -> str | None:
    """Why an HTTP server could not be reached at all (C's names), else None."""
    if peer is None or peer.fatal is None:
        return None
    from ._http_io import connect_reason
    return connect_reason(peer.fatal)


async def ping_reply(peer: Any, timeout_s: float) -> tuple[int, float, Any, str | None]:
    """One ping: (kind, rtt_ms, code, message), as mcpp_cli_replied takes them."""
    try:
        return OK, await peer.ping(timeout_s) * 1000, None, None
    except PingTimeout:
        return TIMEOUT, 0.0, None, None
    except PingInvalid as e:
        return INVALID, 0.0, None, e.message
    except PingUnsupported as e:
        return UNSUPPORTED, 0.0, e.code, e.message
    except PingError as e:
        return ERROR, 0.0, e.code, e.message
    except PeerClosed as e:
        return CLOSED, 0.0, None, str(e)
