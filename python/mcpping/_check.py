"""Validation at the public boundary: one sentence per bad value, naming it.

Every number a caller passes is checked here before it reaches C: finite,
in range, an integer where one is meant. A bad one raises TypeError (wrong
kind) or ValueError (out of range) naming the parameter and the allowed
range; nothing is clamped, defaulted or wrapped.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from . import _native

__all__ = ["MAX_SECONDS", "seconds", "optional_seconds", "integer", "number", "choice", "flag", "text",
           "setting", "default", "choices"]

#: The C settings table (mcpping/settings.h), by name; times in seconds.
TABLE = {row["name"]: row for row in _native.settings_table()}
#: The longest time the engine takes (MCPP_MAX_MS, 2^31 - 1 ms), in seconds.
MAX_SECONDS = TABLE["timeout_ms"]["max"]
#: The shortest positive time: the engine counts milliseconds.
MIN_SECONDS = TABLE["timeout_ms"]["min"]


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
    v = _real(shown, value, _native.setting_range(name, low, low_name))
    return _native.setting_check(name, shown, v, low, low_name)


def _real(name: str, value: Any, wanted: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {wanted}, not {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int too big for a float
        v = math.inf
    if not math.isfinite(v):
        raise ValueError(f"{name} must be {wanted}, not {value!r}")
    return v


def seconds(name: str, value: Any, *, low: float = MIN_SECONDS, zero: str | None = None) -> int:
    """Checks a time in seconds, ``low`` .. MAX_SECONDS; returns whole milliseconds.

    With ``zero`` (what 0 means, e.g. "off"), 0 is allowed too.
    """
    ms = _ms(name, value, low, zero, None)
    assert ms is not None
    return ms


def optional_seconds(name: str, value: Any, *, none: str) -> int | None:
    """Like :func:`seconds`, with None allowed (``none`` says what it means)."""
    return _ms(name, value, MIN_SECONDS, None, none)


def _ms(name: str, value: Any, low: float, zero: str | None, none: str | None) -> int | None:
    wanted = f"between {low:g} and {MAX_SECONDS} seconds"
    if zero is not None:
        wanted = f"0 ({zero}) or {wanted}"
    if none is not None:
        if value is None:
            return None
        wanted = f"None ({none}) or {wanted}"
    v = _real(name, value, wanted)
    if v == 0 and zero is not None:
        return 0
    if not low <= v <= MAX_SECONDS:
        raise ValueError(f"{name} must be {wanted}, not {value!r}")
    return max(1, round(v * 1000))


def integer(name: str, value: Any, low: int, high: int) -> int:
    """Checks an integer in ``low`` .. ``high`` (a bool or a float is refused)."""
    wanted = f"an integer between {low} and {high}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {wanted}, not {type(value).__name__} {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be {wanted}, not {value!r}")
    return int(value)


def number(name: str, value: Any, low: float, high: float) -> float:
    """Checks a finite real number in ``low`` .. ``high`` (a bool is refused)."""
    wanted = f"a number between {low:g} and {high:g}"
    v = _real(name, value, wanted)
    if not low <= v <= high:
        raise ValueError(f"{name} must be {wanted}, not {value!r}")
    return v


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
