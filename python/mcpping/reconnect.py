"""Reconnect policy: when a stdio server fails, spawn it again.

The rules (when, how long to wait, what happens to requests in flight)
live in the C core; this only checks the numbers and hands them over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _check, _native

__all__ = ["Reconnect", "set_retry_budget"]

_default = _check.default


@dataclass(frozen=True)
class Reconnect:
    """Respawn a stdio server that went stale, exited or closed its pipes.

    Every request in flight at the failure fails at once with
    :class:`~mcpping.RequestInDoubt` and is never sent again. The old process
    group is killed and reaped; a new server is spawned after ``initial``
    seconds, then ``initial * multiplier``, ... at most ``max_delay``, each
    spread by ``jitter`` (0.2: anywhere in 80%..120%), and later still if the
    process-wide retry budget (:func:`set_retry_budget`) is spent. The
    application's first ``initialize`` is replayed on the new server (its
    answer is not delivered again), then ``notifications/initialized``;
    messages sent meanwhile wait and go out in order (a request's timeout
    runs while it waits: past it, ``TimeoutError``, and it is never sent).
    After ``max_attempts`` failed attempts in a row the connection closes,
    with a reason saying so.
    """

    initial: float = _default("reconnect.initial_ms")
    max_delay: float = _default("reconnect.max_delay_ms")
    multiplier: float = _default("reconnect.multiplier")
    jitter: float = _default("reconnect.jitter")
    max_attempts: int = _default("reconnect.max_attempts")

    def __post_init__(self) -> None:
        # Refused here, where the caller wrote it, not at connect time.
        self.settings()

    def settings(self) -> dict[str, Any]:
        """The native layer's ``reconnect`` settings, each checked by the C table."""
        initial_ms = _check.setting("Reconnect.initial", "reconnect.initial_ms", self.initial)
        return {
            "initial_ms": initial_ms,
            "max_delay_ms": _check.setting("Reconnect.max_delay", "reconnect.max_delay_ms", self.max_delay,
                                           low=initial_ms / 1000, low_name="initial"),
            "multiplier": _check.setting("Reconnect.multiplier", "reconnect.multiplier", self.multiplier),
            "jitter": _check.setting("Reconnect.jitter", "reconnect.jitter", self.jitter),
            "max_attempts": _check.setting("Reconnect.max_attempts", "reconnect.max_attempts", self.max_attempts),
        }


def check(reconnect: Any) -> Reconnect | None:
    """Checks a ``reconnect=`` option: a Reconnect or None."""
    if reconnect is not None and not isinstance(reconnect, Reconnect):
        raise TypeError(f"reconnect must be a mcpping.Reconnect or None, not {reconnect!r}")
    return reconnect


def set_retry_budget(burst: int = _native.RETRY_BUDGET_BURST,
                     per_second: float = _native.RETRY_BUDGET_PER_SECOND) -> None:
    """Sets the retry budget every reconnecting connection of this process shares.

    At most ``burst`` servers are respawned at once, then ``per_second``:
    a fleet whose servers all fail together comes back at that rate, not in
    a storm. The defaults are 10 and 2.0.
    """
    _native.set_retry_budget(int(_check.setting("burst", "retry_budget.burst", burst)),
                             float(_check.setting("per_second", "retry_budget.per_second", per_second)))
