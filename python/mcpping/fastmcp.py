"""A FastMCP client transport whose server is watched by mcpping.

``mcpping.fastmcp.StdioTransport`` is fastmcp's own ``StdioTransport``
(``fastmcp.Client``, and so PydanticAI's FastMCP toolsets, take it as is)
whose subprocess mcpping spawns and keeps alive::

    from fastmcp import Client
    from mcpping.fastmcp import StdioTransport

    transport = StdioTransport("python", ["server.py"], keepalive=mcpping.KeepAlive(interval=10))
    async with Client(transport) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        print(transport.peer.stats)

How: fastmcp's transport runs its connection in a task that calls the
``stdio_client`` its module imported from ``mcp``. Rather than copy that
connection logic (session reuse, loop checks, option checks), this subclass
keeps all of it: it sets a context variable around fastmcp's ``connect()``,
which the connection task inherits, and fastmcp's module reference is
pointed, once, at a router that spawns through mcpping when the variable is
set and otherwise calls whatever ``mcp.client.stdio.stdio_client`` is at
that moment (the SDK's own, or ``mcpping.instrument()``'s). Other fastmcp
transports in the process behave exactly as before.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

try:
    import fastmcp.client.transports.stdio as _fastmcp_stdio
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("mcpping.fastmcp needs fastmcp: pip install fastmcp") from exc

from .events import Event
from .keepalive import AUTO_PROBE, KeepAlive
from .peer import Peer
from .reconnect import Reconnect
from .records import RecordTarget
from .sdk import stdio_peer

__all__ = ["StdioTransport"]

#: The options of the mcpping transport whose connection is being made.
_route: ContextVar[dict[str, Any] | None] = ContextVar("mcpping_fastmcp_route", default=None)
_install_lock = threading.Lock()


@asynccontextmanager
async def _routed_stdio_client(server: Any, errlog: TextIO = sys.stderr) -> AsyncIterator[Any]:
    """fastmcp's stdio_client: mcpping's for our transports, the current SDK one otherwise."""
    opts = _route.get()
    if opts is None:
        import mcp.client.stdio as home

        async with home.stdio_client(server, errlog) as streams:
            yield streams
        return
    opts = dict(opts)
    owner: StdioTransport = opts.pop("owner")
    async with stdio_peer(server, errlog, **opts) as (read, write, peer):
        owner.peer = peer
        yield read, write


_routed_stdio_client._mcpping_router = True  # type: ignore[attr-defined]


def _install_router() -> None:
    with _install_lock:
        if not getattr(_fastmcp_stdio.stdio_client, "_mcpping_router", False):
            _fastmcp_stdio.stdio_client = _routed_stdio_client


class StdioTransport(_fastmcp_stdio.StdioTransport):
    """fastmcp's stdio transport, with the server spawned and watched by mcpping.

    Every fastmcp parameter keeps its fastmcp meaning:

    - ``keep_alive`` (bool, fastmcp's default True) reuses one subprocess
      across the ``Client`` sessions that use this transport; False starts a
      new server for each session and stops it when the session ends.
    - ``log_file`` (a Path or text stream) receives the server's stderr.

    mcpping's own options are keyword-only:

    - ``keepalive`` (a :class:`mcpping.KeepAlive`, default ``KeepAlive()``;
      None: off) is mcpping's liveness check: pings (or, on a 2026-07-28
      session, the idle probe) while the connection is quiet, and a server
      that stops answering is declared stale, killed and reaped, so calls fail
      instead of hanging. It has nothing to do with ``keep_alive``.
    - ``record`` (governance records: a path, a callable, or None for the
      ``mcpping`` logger), ``on_event`` (called with every Event),
      ``request_timeout`` (seconds, None: off), ``probe`` ("auto", a
      method name, or None) and ``reconnect`` (a :class:`mcpping.Reconnect`:
      respawn a failed server under the same session; None: off) mean what
      they mean in ``mcpping.sdk.stdio_client``.

    ``transport.peer`` is the :class:`mcpping.Peer` of the current (or last)
    subprocess, None before the first connection.
    """

    def __init__(
        self,
        command: str,
        args: list[str],
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        keep_alive: bool | None = None,
        log_file: Path | TextIO | None = None,
        *,
        keepalive: KeepAlive | None = KeepAlive(),
        record: RecordTarget = None,
        on_event: Callable[[Event], Any] | None = None,
        request_timeout: float | None = None,
        probe: str | None = AUTO_PROBE,
        reconnect: Reconnect | None = None,
    ) -> None:
        if keepalive is not None and not isinstance(keepalive, KeepAlive):
            raise TypeError("keepalive must be a mcpping.KeepAlive or None (fastmcp's "
                            f"subprocess reuse is keep_alive=True/False), not {keepalive!r}")
        super().__init__(command, args, env=env, cwd=cwd, keep_alive=keep_alive,
                         log_file=log_file)
        self._mcpping = {"keepalive": keepalive, "record": record, "on_event": on_event,
                         "request_timeout": request_timeout, "probe": probe,
                         "reconnect": reconnect}
        self.peer: Peer | None = None
        _install_router()

    async def connect(self, **kwargs: Any) -> Any:
        # The connection task fastmcp starts in here inherits this context.
        token = _route.set({**self._mcpping, "owner": self})
        try:
            return await super().connect(**kwargs)
        finally:
            _route.reset(token)
