"""Keepalive policy and its translation to the engine's settings."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Literal

from . import _check, _native

__all__ = ["KeepAlive"]

_default = _check.default
#: The per-ping timeout every connection defaults to (the table's timeout_ms), in seconds.
PING_TIMEOUT: float = _default("timeout_ms")


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
    instead, with the same interval, timeout and failures. The defaults,
    ranges and sentences are the C settings table's (mcpping/settings.h).
    """

    interval: float = _default("interval_ms")
    timeout: float = _default("timeout_ms")
    failures: int = _default("failures")
    jitter_pct: int = _default("jitter_pct")
    on_stale: Literal["close", "report"] = "close"
    #: The floor on ``interval`` (below 0.01 s means 0.01 s); lower it
    #: deliberately for fast tests.
    min_interval: float = _default("min_interval_ms")
    #: Raise an ``interval`` below ``min_interval`` to the floor instead of
    #: refusing it.
    clamp: bool = False

    def __post_init__(self) -> None:
        # Refused here, where the caller wrote it, not at connect time.
        self.settings()

    def settings(self) -> dict[str, Any]:
        """The native layer's keepalive settings, each checked by the C table."""
        floor = _check.setting("KeepAlive.min_interval", "min_interval_ms", self.min_interval)
        _check.flag("KeepAlive.clamp", self.clamp)
        low = None if self.clamp else floor / 1000
        return {
            "interval_ms": _check.setting("KeepAlive.interval", "interval_ms", self.interval,
                                          low=low, low_name=None if self.clamp else "min_interval"),
            "timeout_ms": _check.setting("KeepAlive.timeout", "timeout_ms", self.timeout),
            "failures": _check.setting("KeepAlive.failures", "failures", self.failures),
            "jitter_pct": _check.setting("KeepAlive.jitter_pct", "jitter_pct", self.jitter_pct),
            "on_stale": _check.setting("KeepAlive.on_stale", "on_stale", self.on_stale),
            "min_interval_ms": floor,
            "clamp_interval": int(self.clamp),
        }


def clock_offset_us() -> int:
    """Unix time minus monotonic time, in µs, for record timestamps."""
    return time.time_ns() // 1000 - time.monotonic_ns() // 1000


def now_us() -> int:
    """The monotonic clock the engine runs on, in µs."""
    return time.monotonic_ns() // 1000


#: The ``probe`` default: ``server/discover`` on 2026-07-28 sessions,
#: ``tools/list`` on legacy servers that refuse ping.
AUTO_PROBE = _native.PROBE_AUTO


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
    _native.setting_check_text("probe_method", "probe", probe)  # C's rule and sentence
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
    if keepalive is not None and not isinstance(keepalive, KeepAlive):
        raise TypeError(f"keepalive must be a KeepAlive or None, not {keepalive!r}")
    if peer_name is not None and not isinstance(peer_name, str):
        raise TypeError(f"peer_name must be a str or None, not {peer_name!r}")
    timeout = _default("timeout_ms") if ping_timeout is None else ping_timeout
    request_ms = _check.optional_seconds("request_timeout", request_timeout, none="no deadline")
    out: dict[str, Any] = {
        "role": _check.setting("role", "role", role),
        "transport": _check.setting("transport", "transport", transport),
        "interval_ms": 0,
        "timeout_ms": _check.setting("ping_timeout", "timeout_ms", timeout),
        "nonce": int.from_bytes(os.urandom(8), "little"),
        "clock_offset_us": clock_offset_us(),
        "peer_name": peer_name,
        "probe_method": probe_method(probe),
    }
    if keepalive:
        out.update(keepalive.settings())
    if request_ms is not None:
        out["request_timeout_ms"] = request_ms
    return out
