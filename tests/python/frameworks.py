"""Shared by the framework tests: the real time server on both protocols, the
keepalive bound, and the SIGSTOP proof that a frozen server fails a call in time."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import mcpping
from conftest import PY, ROOT

KA = mcpping.KeepAlive(interval=0.5, timeout=0.5, failures=2, min_interval=0.1, jitter_pct=0)
#: interval + timeout x failures + 1 s: what every conviction must meet.
BOUND = KA.interval + KA.timeout * KA.failures + 1.0

#: mcp-server-time on this environment's mcp.
TIME_SERVER = {"command": PY, "args": ["-m", "mcp_server_time"]}
#: The environment `make test-python` builds with mcp 1.x.
MCP1_PYTHON = ROOT / "build" / "venv-mcp1" / "bin" / "python"


def legacy_time_server() -> dict[str, Any]:
    """mcp-server-time on mcp 1.x: it speaks only the initialize handshake, and ping."""
    if not MCP1_PYTHON.exists():
        pytest.fail(f"{MCP1_PYTHON} is missing: `make test-python` builds it "
                    "(make build/venv-mcp1/.stamp)")
    return {"command": str(MCP1_PYTHON), "args": ["-m", "mcp_server_time"]}


async def freeze_and_expect_failure(pid: int, call: Callable[[], Awaitable[Any]]) -> float:
    """SIGSTOPs the server, runs `call`, returns how long until it raised."""
    os.kill(pid, signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        with pytest.raises(Exception) as info:
            await asyncio.wait_for(call(), BOUND + 5)
        assert not isinstance(info.value, asyncio.TimeoutError), "the frozen server was never convicted"
        elapsed = time.monotonic() - t0
        # Shown with -s: the figure the report quotes.
        print(f"frozen server failed the call after {elapsed:.3f} s ({type(info.value).__name__}), "
              f"bound {BOUND:.1f} s")
        return elapsed
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


async def first(peer: mcpping.Peer, *names: str) -> mcpping.Event:
    """The next event named one of `names` (bounded)."""
    async def wait() -> mcpping.Event:
        async for ev in peer.events(*names):
            return ev
        raise AssertionError(f"closed before any of {names}")
    return await asyncio.wait_for(wait(), BOUND + 5)
