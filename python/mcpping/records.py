"""Where governance records go: a JSONL file, a callback, or logging."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from typing import IO, Any, Union

from . import _isolation

__all__ = ["RecordTarget", "RecordSink"]

logger = logging.getLogger("mcpping")

#: A path (JSONL, appended), a callable taking the record as a dict, or None
#: for the ``mcpping`` logger: one JSON line per record, at DEBUG for the
#: routine ones (a ping answered either way) and at INFO for everything else
#: (failures, state changes, close), so an application logging at INFO sees
#: what matters without a line per keepalive ping. While the logger is not
#: enabled for INFO, a connection makes no records at all; raised later, it
#: gets them from the connection's next ping or batch of events on.
RecordTarget = Union[str, "os.PathLike[str]", Callable[[dict[str, Any]], Any], None]


class RecordSink:
    """Writes each governance record (a JSON object, one line) to its target."""

    def __init__(self, target: RecordTarget, report: _isolation.Reporter | None = None) -> None:
        self._fn: Callable[[dict[str, Any]], Any] | None = None
        self._file: IO[str] | None = None
        self._path = ""
        # A record that cannot be written is reported to the loop's
        # exception handler; it never stops the items after it.
        self._report = report or _isolation.reporter(asyncio.get_running_loop())
        if callable(target):
            self._fn = target
        elif target is not None:
            self._path = os.fspath(target)
            # Line-buffered so records survive a crash of the host.
            self._file = open(self._path, "a", buffering=1, encoding="utf-8")

    @property
    def follows_logger(self) -> bool:
        """True if records go to the ``mcpping`` logger (no file, no callback)."""
        return self._file is None and self._fn is None

    def wanted(self) -> bool:
        """True if a record written now would go anywhere.

        A file or a callback always takes them; the logger only while it is
        enabled for INFO (routine records need DEBUG, and are dropped here).
        """
        # follows_logger, inlined: this runs twice per ping.
        return (self._file is not None or self._fn is not None
                or logger.isEnabledFor(logging.INFO))

    def write(self, line: str) -> None:
        """Delivers one record given as its JSON text."""
        if self._file is not None:
            try:
                self._file.write(line + "\n")
            except (OSError, ValueError) as exc:
                self._report(f"mcpping: cannot write a governance record to {self._path}", exc)
        elif self._fn is not None:
            _isolation.call(self._report, "the record callback", self._fn, json.loads(line))
        else:
            level = logging.DEBUG if _is_routine(line) else logging.INFO
            if logger.isEnabledFor(level):
                logger.log(level, "%s", line)

    def close(self) -> None:
        """Closes the file, if any (a failing final flush is reported too)."""
        f, self._file = self._file, None
        if f is not None:
            try:
                f.close()
            except OSError as exc:
                self._report(f"mcpping: cannot write a governance record to {self._path}", exc)


def _is_routine(line: str) -> bool:
    """True for ping_ok, probe_ok and ping_answered records (the engine writes compact JSON)."""
    return ('"event":"ping_ok"' in line or '"event":"probe_ok"' in line
            or '"event":"ping_answered"' in line)
