"""``mcpping wrap``: liveness for MCP clients you cannot change (docs/cli.md).

A desktop or IDE client launches ``mcpping wrap -- COMMAND [ARG...]`` as its
server. The proxy itself is C (``mcpp_wrap_run``, the same in the Node
command); this module reads C's parse of the command line
(``mcpp_cli_parse``) and hands over. The process then belongs to the proxy
until the client or the server is gone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from . import _native

__all__ = ["USAGE", "WrapOptions", "parse_wrap_args", "main"]


class WrapUsageError(Exception):
    """Bad ``mcpping wrap`` command line (the sentence is C's; ``line`` is
    what the command prints, "mcpping wrap: ...\\n")."""

    def __init__(self, why: str, line: str) -> None:
        super().__init__(why)
        self.line = line


@dataclass
class WrapOptions:
    """The parsed ``mcpping wrap`` command line."""

    interval_ms: int
    timeout_ms: int
    failures: int
    restart: bool = True
    log: str | None = None
    metrics: str | None = None
    name: str | None = None
    command: list[str] = field(default_factory=list)


def _parse(argv: list[str]) -> dict[str, Any]:
    return _native.cli_parse(["wrap", *argv])


#: ``mcpping wrap --help`` (C's text: csrc/src/app/cli_args.c).
USAGE: str = _parse(["--help"])["wrap_usage"]


def parse_wrap_args(argv: list[str]) -> WrapOptions | str:
    """Parses the arguments after ``wrap`` (C's rules, the same in Node);
    returns WrapOptions, or "help"; WrapUsageError with C's sentence."""
    o = _parse(argv)
    if o["mode"] == "wrap_help":
        return "help"
    if o["mode"] != "wrap":
        raise WrapUsageError(o["error"], o["error_line"])
    return WrapOptions(interval_ms=o["interval_ms"], timeout_ms=o["timeout_ms"],
                       failures=o["failures"], restart=o["restart"], log=o["log"],
                       metrics=o["metrics"], name=o["name"], command=o["command"])


def main(argv: list[str]) -> int:
    """``mcpping wrap ARGS``; returns the exit status (docs/cli.md)."""
    o = _parse(argv)
    if o["done"]:  # -h or a usage error: C's bytes and status
        sys.stdout.write(o["out"])
        sys.stderr.write(o["err"])
        return int(o["status"])
    settings: dict[str, object] = {
        "interval_ms": o["interval_ms"], "timeout_ms": o["timeout_ms"], "failures": o["failures"]}
    if o["name"] is not None:
        settings["peer_name"] = o["name"]
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_native.wrap(o["command"], settings, o["restart"], o["log"], o["metrics"], 0, 1,
                            o["name"]))
