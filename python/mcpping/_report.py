"""The CLI's output: ping(8)-style lines or JSON lines (docs/cli.md).

The Node command prints byte-identical lines; keys are fixed and floats are
printed the way ``json.dumps`` prints them.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from . import _native
from .stats import Stats

__all__ = ["Reporter", "format_loss"]


def _j(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def format_loss(pct: float) -> str:
    """``20%`` when whole, else one decimal (``33.3%``)."""
    one = round(pct, 1)
    return f"{int(one)}%" if one == int(one) else f"{one:.1f}%"


class Reporter:
    """Prints a run's header, per-ping lines and summary.

    The summary's RTT figures come from :class:`~mcpping.stats.Stats`, fed in
    ms by :meth:`pong`, so memory stays bounded however long the run:
    min/avg/max/mdev cover every pong, p50/p99 the most recent
    :data:`~mcpping.stats.WINDOW` (10,000) pongs. Node's command uses
    RttStats, which gives bit-identical figures.
    """

    def __init__(self, json_mode: bool, quiet: bool, out: IO[str] | None = None) -> None:
        self.json = json_mode
        self.quiet = quiet
        self.out = out or sys.stdout
        self.name = ""
        self.stats = Stats()  # RTTs in ms here (its arithmetic is unit-free)

    def _line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def connected(self, peer: str, transport: str, protocol: str | None,
                  session_id: str | None, timeout_ms: int, interval_ms: int) -> None:
        self.name = peer
        if self.json:
            self._line(_j({"event": "connected", "peer": peer, "transport": transport,
                           "protocol_version": protocol, "session_id": session_id}))
        else:
            proto = f"protocol {protocol}" if protocol else "no handshake"
            self._line(f"MCPPING {peer} ({transport}, {proto}): "
                       f"timeout {timeout_ms / 1000:.1f} s, interval {interval_ms / 1000:.1f} s")

    def pong(self, seq: int, rtt_ms: float) -> None:
        self.stats.add_rtt(rtt_ms)  # counted for the summary even with -q
        if self.quiet:
            return
        if self.json:
            self._line(_j({"event": "pong", "seq": seq, "rtt_ms": float(round(rtt_ms, 3))}))
        else:
            self._line(f"pong from {self.name}: seq={seq} time={rtt_ms:.3f} ms")

    def timeout(self, seq: int, timeout_ms: int) -> None:
        if self.quiet:
            return
        if self.json:
            self._line(_j({"event": "timeout", "seq": seq, "timeout_ms": timeout_ms}))
        else:
            self._line(f"timeout from {self.name}: seq={seq} no answer after {timeout_ms} ms")

    def ping_error(self, seq: int, code: int, message: str) -> None:
        if self.quiet:
            return
        if self.json:
            self._line(_j({"event": "ping_error", "seq": seq, "code": code, "message": message}))
        else:
            self._line(f"error from {self.name}: seq={seq} code={code} {message}")

    def invalid(self, seq: int, message: str) -> None:
        if self.quiet:
            return
        if self.json:
            self._line(_j({"event": "ping_invalid", "seq": seq, "message": message}))
        else:
            self._line(f"invalid pong from {self.name}: seq={seq} {message}")

    def unsupported(self, seq: int, code: int | None, message: str) -> None:
        if self.json and not self.quiet:
            self._line(_j({"event": "unsupported", "seq": seq, "code": code, "message": message}))

    def summary(self, sent: int, received: int, time_ms: float) -> None:
        # ping(8)'s loss, unanswered of sent; not Stats.loss (lost of finished).
        loss = (sent - received) / sent * 100 if sent else 0.0
        keys = ("min", "avg", "max", "mdev", "p50", "p99")
        st: dict[str, float] | None = None
        if self.stats.received:
            st = {k: getattr(self.stats, k) for k in keys}
        if self.json:
            rtt = {k: (float(round(st[k], 3)) if st else None) for k in keys}
            self._line(_j({"event": "summary", "sent": sent, "received": received,
                           "loss_pct": float(round(loss, 1)), "time_ms": int(round(time_ms)),
                           "rtt_ms": rtt}))
            return
        self._line("")
        self._line(f"--- {self.name} mcpping statistics ---")
        self._line(f"{sent} pings sent, {received} pongs received, {format_loss(loss)} loss, "
                   f"time {int(round(time_ms))} ms")
        if st:
            self._line("rtt min/avg/max/mdev = " + "/".join(f"{st[k]:.3f}" for k in keys[:4]) + " ms")




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

    def results(self, rows: list[Any], time_ms: float) -> int:
        text, status = _native.config_format_results([r.row() for r in rows], time_ms,
                                                     self.json, self.quiet)
        self._write(text)
        return int(status)
