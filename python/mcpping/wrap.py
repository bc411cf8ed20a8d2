"""``mcpping wrap``: liveness for MCP clients you cannot change (docs/cli.md).

A desktop or IDE client launches ``mcpping wrap -- COMMAND [ARG...]`` as its
server. The proxy itself is C (``mcpp_wrap_run``, the same in the Node
command); this module parses the command line, validates every number with
:mod:`mcpping._check` and hands over. The process then belongs to the proxy
until the client or the server is gone.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import _check, _native

__all__ = ["USAGE", "WrapOptions", "parse_wrap_args", "main"]

_D = _check.default
USAGE = f"""\
usage: mcpping wrap [options] -- COMMAND [ARG...]
  Runs COMMAND as the MCP server of the client that launched us: every line
  passes through unchanged, a server that goes stale or exits is restarted,
  and the server never outlives the client.
  -i, --interval SEC  keepalive: ping the server after SEC idle (default {_D("interval_ms"):g}; 0 = off)
  -W, --timeout SEC   per-ping timeout (default {_D("timeout_ms"):g})
  --failures N        failed pings in a row that make the server stale (default {_D("failures")})
  --no-restart        exit (status 1) when the server goes stale or exits
                      (default: restart it, replaying the client's handshake)
  --log FILE          append governance records (JSONL) to FILE
  --metrics ADDR      Prometheus text on a loopback HOST:PORT (e.g. 127.0.0.1:9464)
  --name NAME         the config entry's name: `server` in records and metrics
  -h, --help          this text
"""


class WrapUsageError(Exception):
    """Bad ``mcpping wrap`` command line."""


@dataclass
class WrapOptions:
    """The parsed ``mcpping wrap`` command line."""

    interval_ms: int = round(_D("interval_ms") * 1000)
    timeout_ms: int = round(_D("timeout_ms") * 1000)
    failures: int = _D("failures")
    restart: bool = True
    log: str | None = None
    metrics: str | None = None
    name: str | None = None
    command: list[str] = field(default_factory=list)


def _float(flag: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise WrapUsageError(f"{flag} needs a number, got {text!r}") from None
    if not math.isfinite(v):
        raise WrapUsageError(f"{flag} needs a finite number, got {text!r}")
    return v


def _checked(fn: Callable[..., int], *args: Any, **kwargs: Any) -> int:
    """Runs one _check validator; its sentence becomes the usage error."""
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise WrapUsageError(str(e)) from None


def parse_wrap_args(argv: list[str]) -> WrapOptions | str:
    """Parses the arguments after ``wrap``; returns WrapOptions, or "help"."""
    o = WrapOptions()
    i = 0
    takes = {"-i", "--interval", "-W", "--timeout", "--failures", "--log", "--metrics", "--name"}
    while i < len(argv):
        a = argv[i]
        if a == "--":
            o.command = argv[i + 1:]
            break
        if a in ("-h", "--help"):
            return "help"
        if a == "--no-restart":
            o.restart = False
        elif a == "--restart":
            o.restart = True
        elif a in takes:
            if i + 1 >= len(argv):
                raise WrapUsageError(f"{a} needs a value")
            v = argv[i + 1]
            i += 1
            if a in ("-i", "--interval"):
                # wrap has no --min-interval: the floor is the library's.
                o.interval_ms = _checked(_check.setting, "--interval", "interval_ms", _float(a, v),
                                         low=_D("min_interval_ms"), low_name="min_interval")
            elif a in ("-W", "--timeout"):
                o.timeout_ms = _checked(_check.setting, "--timeout", "timeout_ms", _float(a, v))
            elif a == "--failures":
                try:
                    n = int(v)
                except ValueError:
                    raise WrapUsageError(f"--failures needs an integer, got {v!r}") from None
                o.failures = _checked(_check.setting, "--failures", "failures", n)
            elif a == "--log":
                o.log = v
            elif a == "--metrics":
                o.metrics = v
            else:
                if not v:
                    raise WrapUsageError("--name needs a non-empty value")
                o.name = v
        else:
            raise WrapUsageError(f"unknown option {a!r} (put the server command after --)")
        i += 1
    if not o.command:
        raise WrapUsageError("a server command is required: mcpping wrap [options] -- COMMAND [ARG...]")
    return o


def main(argv: list[str]) -> int:
    """``mcpping wrap ARGS``; returns the exit status (docs/cli.md)."""
    try:
        o = parse_wrap_args(argv)
    except WrapUsageError as e:
        sys.stderr.write(f"mcpping wrap: {e}\n")
        return 2
    if o == "help":
        sys.stdout.write(USAGE)
        return 0
    assert isinstance(o, WrapOptions)
    settings: dict[str, object] = {
        "interval_ms": o.interval_ms, "timeout_ms": o.timeout_ms, "failures": o.failures}
    if o.name is not None:
        settings["peer_name"] = o.name
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_native.wrap(o.command, settings, o.restart, o.log, o.metrics, 0, 1, o.name))
