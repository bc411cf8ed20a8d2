"""Keepalive policy and its translation to the engine's settings."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Literal

from . import _check

__all__ = ["KeepAlive"]

ROLE = {"client": 0, "server": 1}
TRANSPORT = {"stdio": 0, "streamable-http": 1, "custom": 2}
#: The lowest min_interval the engine takes (MCPP_MIN_INTERVAL_FLOOR_MS), in seconds.
MIN_INTERVAL_FLOOR = 0.01
#: The most consecutive failures before stale (MCPP_MAX_FAILURES).
MAX_FAILURES = 1000


@dataclass(frozen=True)
class KeepAlive:
    """When to ping and when to give up on a peer.

    A keepalive ping goes out after ``interval`` seconds without any inbound
    byte; each may take ``timeout`` seconds. The first failure makes the peer
    ``suspect``; ``failures`` consecutive ones make it ``stale``, after which
    the connection is closed (``on_stale="close"``, killing a spawned
    server's process group) or only reported (``"report"``). A peer that does
    not support ping is never convicted for it: on such sessions (and on
    protocol 2026-07-28, which has no ping) keepalive sends the idle probe
    instead, with the same interval, timeout and failures.
    """

    interval: float = 15.0
    timeout: float = 5.0
    failures: int = 3
    jitter_pct: int = 10
    on_stale: Literal["close", "report"] = "close"
    #: The floor on ``interval``; lower it deliberately for fast tests.
    min_interval: float = 1.0
    #: Raise an ``interval`` below ``min_interval`` to the floor instead of
    #: refusing it.
    clamp: bool = False

    def __post_init__(self) -> None:
        # Refused here, where the caller wrote it, not at connect time.
        _check.seconds("KeepAlive.min_interval", self.min_interval, low=MIN_INTERVAL_FLOOR)
        _check.seconds("KeepAlive.interval", self.interval, zero="off")
        _check.seconds("KeepAlive.timeout", self.timeout)
        _check.integer("KeepAlive.failures", self.failures, 1, MAX_FAILURES)
        _check.integer("KeepAlive.jitter_pct", self.jitter_pct, 0, 100)
        _check.choice("KeepAlive.on_stale", self.on_stale, ("close", "report"))
        _check.flag("KeepAlive.clamp", self.clamp)
        if 0 < self.interval < self.min_interval and not self.clamp:
            raise ValueError(
                f"keepalive interval {self.interval:g} s is below the floor of "
                f"{self.min_interval:g} s (excessive pinging); raise interval, "
                "lower min_interval deliberately, or pass clamp=True")


def clock_offset_us() -> int:
    """Unix time minus monotonic time, in µs, for record timestamps."""
    return time.time_ns() // 1000 - time.monotonic_ns() // 1000


def now_us() -> int:
    """The monotonic clock the engine runs on, in µs."""
    return time.monotonic_ns() // 1000


#: The ``probe`` default: ``server/discover`` on 2026-07-28 sessions,
#: ``tools/list`` on legacy servers that refuse ping.
AUTO_PROBE = "auto"
_MAX_PROBE_METHOD = 128


def probe_method(probe: str | None) -> str | None:
    """The engine's probe_method for a ``probe`` option: None (automatic), "" (off) or a method.

    Raises ValueError/TypeError naming ``probe`` for anything else.
    """
    if probe == AUTO_PROBE:
        return None
    if probe is None or probe == "":
        return ""
    if not isinstance(probe, str):
        raise TypeError(f"probe must be a method name (str), 'auto' or None, not {type(probe).__name__}")
    if len(probe.encode()) > _MAX_PROBE_METHOD or any(ord(c) < 0x20 or ord(c) == 0x7F for c in probe):
        raise ValueError(f"probe must be a method name of 1 to {_MAX_PROBE_METHOD} bytes "
                         "without control characters, 'auto' or None")
    return probe


def settings(
    keepalive: KeepAlive | None,
    *,
    probe: str | None = AUTO_PROBE,
    role: str = "client",
    transport: str = "stdio",
    ping_timeout: float | None = None,
    request_timeout: float | None = None,
    peer_name: str | None = None,
) -> dict[str, Any]:
    """Builds the settings dict the native layer takes, checking every value.

    Each connection's options pass through here (connect, the SDK
    transports, guard, HTTP), so a bad one is refused by name.
    """
    _check.choice("role", role, tuple(ROLE))
    _check.choice("transport", transport, tuple(TRANSPORT))
    if keepalive is not None and not isinstance(keepalive, KeepAlive):
        raise TypeError(f"keepalive must be a KeepAlive or None, not {keepalive!r}")
    if peer_name is not None and not isinstance(peer_name, str):
        raise TypeError(f"peer_name must be a str or None, not {peer_name!r}")
    ka = keepalive
    timeout_ms = _check.seconds("ping_timeout", 5.0 if ping_timeout is None else ping_timeout)
    request_ms = _check.optional_seconds("request_timeout", request_timeout, none="no deadline")
    out: dict[str, Any] = {
        "role": ROLE[role],
        "transport": TRANSPORT[transport],
        "interval_ms": _check.seconds("interval", ka.interval, zero="off") if ka else 0,
        "timeout_ms": _check.seconds("timeout", ka.timeout) if ka else timeout_ms,
        "nonce": int.from_bytes(os.urandom(8), "little"),
        "clock_offset_us": clock_offset_us(),
        "peer_name": peer_name,
        "probe_method": probe_method(probe),
    }
    if ka:
        out["failures"] = ka.failures
        out["jitter_pct"] = ka.jitter_pct
        out["on_stale"] = 0 if ka.on_stale == "close" else 1
        out["min_interval_ms"] = _check.seconds("min_interval", ka.min_interval,
                                                low=MIN_INTERVAL_FLOOR)
        out["clamp_interval"] = int(ka.clamp)
    if request_ms is not None:
        out["request_timeout_ms"] = request_ms
    return out
