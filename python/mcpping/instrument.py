"""One-line instrumentation: every stdio client the ``mcp`` SDK creates goes through mcpping.

Frameworks (openai-agents, langchain-mcp-adapters, PydanticAI, ``mcp.Client``
itself) create the SDK's stdio client for you. ``instrument()`` swaps the
SDK's ``stdio_client`` for mcpping's, so their servers are spawned, pinged
and watched by mcpping without touching their code::

    import mcpping
    mcpping.instrument(keepalive=mcpping.KeepAlive(interval=10))
    ...  # build the agent as usual
    print(mcpping.instrumented_peers())

How: Python binds a name at import time, so a framework that ran
``from mcp import stdio_client`` holds its own reference that patching
``mcp.client.stdio.stdio_client`` alone never reaches. We patch the
attribute where the SDK defines and re-exports it, and also replace every
module-level reference to the original function in the modules already
loaded (the way OpenTelemetry's instrumentors rebind names), remembering each
so ``uninstrument()`` puts back exactly what it replaced. Modules imported
later read the patched attribute. Wrapping a lower level (the process
spawn) is not an option: mcpping must own the server's pipes itself, which
means replacing the whole transport, and ``stdio_client`` is the one entry
point every framework goes through.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

from .events import Event
from .keepalive import KeepAlive
from .peer import Peer
from .reconnect import Reconnect
from .records import RecordTarget

__all__ = ["instrument", "uninstrument", "instrumented_peers", "is_instrumented"]

_lock = threading.RLock()
_original: Any = None
_replaced: list[tuple[dict[str, Any], str]] = []
_options: dict[str, Any] = {}
_peers: dict[int, Peer] = {}


def _replacement(original: Any) -> Any:
    """mcpping's stdio_client with the SDK's signature, reading the current options."""
    from . import sdk

    @asynccontextmanager
    async def stdio_client(server: Any, errlog: TextIO = sys.stderr) -> AsyncIterator[Any]:
        with _lock:
            opts = dict(_options)
        async with sdk.stdio_peer(server, errlog, **opts) as (read, write, peer):
            key = id(peer)
            with _lock:
                _peers[key] = peer
            try:
                yield read, write
            finally:
                with _lock:
                    _peers.pop(key, None)

    stdio_client.__doc__ = (f"mcpping.instrument()'s stand-in for {original.__module__}."
                            "stdio_client: same parameters and streams, watched by mcpping.")
    stdio_client.__wrapped__ = original  # type: ignore[attr-defined]
    stdio_client._mcpping_instrumented = True  # type: ignore[attr-defined]
    return stdio_client


def _module_dicts() -> list[dict[str, Any]]:
    # A snapshot: another thread may import while we scan.
    out = []
    for mod in list(sys.modules.values()):
        try:
            d = vars(mod)
        except TypeError:  # a None placeholder or an object without __dict__
            continue
        if isinstance(d, dict):
            out.append(d)
    return out


def instrument(
    *,
    keepalive: KeepAlive | None = KeepAlive(),
    record: RecordTarget = None,
    on_event: Callable[[Event], Any] | None = None,
    reconnect: Reconnect | None = None,
) -> None:
    """Routes every stdio client the ``mcp`` SDK creates in this process through mcpping.

    ``keepalive`` (default ``KeepAlive()``, None: off), ``record`` (governance
    records: a path, a callable, or None for the ``mcpping`` logger),
    ``on_event`` (called with every Event of every instrumented peer) and
    ``reconnect`` (a :class:`mcpping.Reconnect` to respawn a failed server
    under the framework's session; default None: a failed server closes it)
    apply to each server spawned from now on. Calling it again changes these
    options for later servers and patches nothing twice. Thread-safe. Needs
    ``mcp`` (``pip install 'mcpping[sdk]'``).
    """
    if keepalive is not None and not isinstance(keepalive, KeepAlive):
        raise TypeError(f"keepalive must be a mcpping.KeepAlive or None, not {keepalive!r}")
    if on_event is not None and not callable(on_event):
        raise TypeError(f"on_event must be callable or None, not {on_event!r}")
    if reconnect is not None and not isinstance(reconnect, Reconnect):
        raise TypeError(f"reconnect must be a mcpping.Reconnect or None, not {reconnect!r}")
    from . import _mcp  # noqa: F401  (a clear ImportError if mcp is missing or unsupported)
    import mcp.client.stdio as home

    global _original
    with _lock:
        _options.clear()
        _options.update(keepalive=keepalive, record=record, on_event=on_event, reconnect=reconnect)
        if _original is not None:
            return
        original = home.stdio_client
        if getattr(original, "_mcpping_instrumented", False):  # pragma: no cover - defensive
            return
        replacement = _replacement(original)
        for d in _module_dicts():
            for name, value in list(d.items()):
                if value is original:
                    d[name] = replacement
                    _replaced.append((d, name))
        _original = original


def uninstrument() -> None:
    """Puts the SDK's own ``stdio_client`` back everywhere ``instrument()`` replaced it.

    Servers already running stay watched until they close. A no-op when not
    instrumented; thread-safe.
    """
    global _original
    with _lock:
        if _original is None:
            return
        for d, name in _replaced:
            if getattr(d.get(name), "_mcpping_instrumented", False):
                d[name] = _original
        _replaced.clear()
        _original = None


def is_instrumented() -> bool:
    """True between ``instrument()`` and ``uninstrument()``."""
    with _lock:
        return _original is not None


def instrumented_peers() -> list[Peer]:
    """The live peers of servers spawned through the instrumented ``stdio_client``."""
    with _lock:
        return list(_peers.values())
