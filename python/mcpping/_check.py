"""Validation at the public boundary: one sentence per bad value, naming it.

Every number a caller passes is checked by C's rows (the settings table and
the call arguments', mcpp_arguments_table), in Python's units: seconds for
times, None where Python says "none". A bad one raises TypeError (wrong
kind) or ValueError (out of range, C's sentence) naming the parameter and
the allowed range; nothing is clamped, defaulted or wrapped.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from . import _native

__all__ = ["seconds", "optional_seconds", "choice", "flag", "text", "setting", "default",
           "choices"]

#: The C settings table (mcpping/settings.h) and the call arguments that
#: are no setting (kill_grace_ms, retry_budget.*, rtt_window), by name;
#: times in seconds.
TABLE = {row["name"]: row for row in (*_native.settings_table(), *_native.arguments_table())}


def default(name: str) -> Any:
    """The library's default for a setting (the table's policy), in Python's unit."""
    row = TABLE[name]
    return row["policy"] if row["unit"] in ("ms", "ratio") else int(row["policy"])


def choices(name: str) -> tuple[str, ...]:
    """A choice setting's names, in C's value order."""
    return tuple(TABLE[name]["choices"].split("|"))


def setting(shown: str, name: str, value: Any, *, low: float | None = None,
            low_name: str | None = None) -> Any:
    """``value`` (as ``shown`` wrote it; ``low``: a floor another setting raised) checked by the C
    table, in C's unit (ms for times, a choice's index); TypeError/ValueError with C's sentence."""
    if TABLE[name]["unit"] == "choice":
        if value not in choices(name):
            raise ValueError(f"{shown} must be {_native.setting_range(name)}, not {value!r}")
        return choices(name).index(value)
    v = _real(shown, value, lambda: _native.setting_range(name, low, low_name))
    return _native.setting_check(name, shown, v, low, low_name)


def _real(name: str, value: Any, wanted: Callable[[], str]) -> float:
    """``value`` as a finite float; ``wanted()`` (what is allowed, said
    only for a refusal) names the range in the error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {wanted()}, not {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int too big for a float
        v = math.inf
    if not math.isfinite(v):
        raise ValueError(f"{name} must be {wanted()}, not {value!r}")
    return v


def seconds(name: str, value: Any, *, row: str = "timeout_ms") -> int:
    """A time in seconds checked by a C row (``timeout_ms``: a call's
    timeout; ``kill_grace_ms``: 0 too, SIGKILL at once); whole milliseconds."""
    return int(setting(name, row, value))


def optional_seconds(name: str, value: Any, *, none: str) -> int | None:
    """Like :func:`seconds`, with None allowed (``none`` says what it means:
    Python's spelling; the range and the check are C's)."""
    if value is None:
        return None
    def wanted() -> str:
        return f"None ({none}) or {_native.setting_range('timeout_ms')}"
    v = _real(name, value, wanted)
    try:
        return int(_native.setting_check("timeout_ms", name, v))
    except ValueError:
        raise ValueError(f"{name} must be {wanted()}, not {value!r}") from None


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """Checks that ``value`` is one of ``allowed``."""
    if value not in allowed:
        one_of = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {one_of}, not {value!r}")
    return str(value)


def flag(name: str, value: Any) -> bool:
    """Checks a bool."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def text(name: str, value: Any) -> str:
    """Checks a non-empty str."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, not {type(value).__name__} {value!r}")
    return value
