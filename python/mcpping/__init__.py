"""mcpping: the liveness layer for Model Context Protocol connections.

Quick start::

    import mcpping

    async with mcpping.connect(["python", "-m", "mcpping.demo"],
                               keepalive=mcpping.KeepAlive(interval=10)) as peer:
        rtt = await peer.ping(timeout=2)
        peer.on("stale", lambda ev: print("server is gone", ev))
        print(peer.stats)

Pings are sent, answered and timed in C. The asyncio loop's own thread runs
the native runtime (host mode, see ``mcpping.runtime_mode()``); a native
thread takes over while the loop is blocked, so the server's pings are
answered even then. ``mcpping.sdk.stdio_client`` is a
drop-in for the official SDK's stdio transport; ``mcpping.guard`` wraps any
transport's streams, in the client or the server role; ``mcpping.http.connect``
watches a Streamable HTTP server.
``mcpping.instrument()`` routes every stdio client the ``mcp`` SDK creates
(whichever framework creates it) through mcpping.
"""

from ._native import VERSION as __version__
from .errors import (
    MCPPingError, PeerClosed, PingError, PingFailure, PingInvalid, PingTimeout, PingUnsupported,
    RequestInDoubt, SpawnError,
)
from .events import EVENT_NAMES, Event
from . import metrics
# mcpping.http is public but not in __all__: a star import must not shadow
# the standard library's http package.
from . import http
from .guard import Guard, guard
from .instrument import instrument, instrumented_peers, is_instrumented, uninstrument
from .keepalive import KeepAlive
from .peer import CloseInfo, HandshakeError, Peer, connect
from .reconnect import Reconnect, set_retry_budget
from ._runtime import runtime_mode
from .stats import Stats

__all__ = [
    "__version__", "connect", "guard", "Peer", "Guard", "KeepAlive", "Event", "EVENT_NAMES",
    "Stats", "CloseInfo", "MCPPingError", "PingFailure", "PingTimeout", "PingError",
    "PingInvalid", "PingUnsupported", "PeerClosed", "SpawnError", "HandshakeError", "metrics",
    "instrument", "uninstrument", "instrumented_peers", "is_instrumented",
    "Reconnect", "set_retry_budget", "RequestInDoubt", "runtime_mode",
]
