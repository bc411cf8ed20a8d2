"""``mcpping --config``'s output: every byte comes from C
(csrc/src/app/config_table.c), so the Node command prints the same."""

from __future__ import annotations

import sys
from typing import IO, Any

from . import _native

__all__ = ["ConfigReporter"]


class ConfigReporter:
    """Prints ``mcpping --config``'s lines, every byte of which comes from C
    (csrc/src/app/config_table.c); ``results`` returns the exit status."""

    def __init__(self, json_mode: bool, out: IO[str] | None = None, quiet: bool = False) -> None:
        self.json = json_mode
        self.quiet = quiet  # -q: the summary without the table
        self.out = out or sys.stdout

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def files(self, files: list[tuple[str, int]]) -> None:
        self._write(_native.config_format_files(files, self.json))

    def start(self, servers: int, count: int, interval: float, timeout: float,
              deadline: float) -> None:
        self._write(_native.config_format_start(servers, count, interval, timeout, deadline,
                                                self.json))

    def results(self, rows: list[dict[str, Any]], time_ms: float) -> int:
        text, status = _native.config_format_results(rows, time_ms,
                                                     self.json, self.quiet)
        self._write(text)
        return int(status)
