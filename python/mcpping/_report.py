"""The CLI's output: ping(8)-style lines or JSON lines (docs/cli.md).

The Node command prints byte-identical lines; keys are fixed and floats are
printed the way ``json.dumps`` prints them.
"""

from __future__ import annotations

import json
import re
import sys
from typing import IO, Any

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


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _rtt_triple(rtts_ms: list[float]) -> tuple[float, float, float] | None:
    if not rtts_ms:
        return None
    total = 0.0
    for x in rtts_ms:  # not sum(): 3.12's compensated sum would differ from Node's
        total += x
    return min(rtts_ms), total / len(rtts_ms), max(rtts_ms)


def status_text(status: str, reason: str | None, sent: int, received: int) -> str:
    """A row's status: ``ok``, ``loss 33.3%``, ``spawn failed: …`` (docs/cli.md)."""
    if status == "loss":
        return f"loss {format_loss((sent - received) / sent * 100)}"
    if status in ("ok", "unsupported", "timeout"):
        return status
    return f"{status}: {reason}" if reason else status


class ConfigReporter:
    """Prints ``mcpping --config``: which files were read, one aligned row
    per server, a summary; or, with ``--json``, one object for each."""

    COLUMNS = ("NAME", "TRANSPORT", "PROTOCOL", "RTT MIN/AVG/MAX", "STATUS")

    def __init__(self, json_mode: bool, out: IO[str] | None = None, quiet: bool = False) -> None:
        self.json = json_mode
        self.quiet = quiet  # -q: the summary without the table
        self.out = out or sys.stdout

    def _line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def files(self, files: list[tuple[str, int]]) -> None:
        """Each config file read, with its number of servers."""
        for path, n in files:
            if self.json:
                self._line(_j({"event": "config", "file": path, "servers": n}))
            else:
                self._line(f"config {path}: {n} server{'' if n == 1 else 's'}")

    def start(self, servers: int, count: int, interval: float, timeout: float,
              deadline: float) -> None:
        if not self.json:
            self._line(f"MCPPING {servers} server{'' if servers == 1 else 's'}: "
                       f"{count} ping{'' if count == 1 else 's'} each, interval {interval:.1f} s, "
                       f"timeout {timeout:.1f} s, deadline {deadline:.1f} s")

    def results(self, rows: list[Any], time_ms: float) -> None:
        """Every server's row (Result of _config_check), then the summary."""
        counts = {"ok": 0, "unsupported": 0, "skipped": 0, "failed": 0}
        for r in rows:
            counts["failed" if r.failed else r.status] += 1
        if self.json:
            for r in rows:
                self._line(self._json_row(r))
            self._line(_j({"event": "summary", "servers": len(rows), **counts,
                           "time_ms": int(round(time_ms))}))
            return
        table = [self.COLUMNS] + [self._cells(r) for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(self.COLUMNS) - 1)]
        if rows and not self.quiet:
            self._line("")
        for cells in table if rows and not self.quiet else []:
            head = "  ".join(c.ljust(w) for c, w in zip(cells, widths))
            self._line(f"{head}  {cells[-1]}")
        self._line("")
        self._line("--- mcpping config statistics ---")
        self._line(f"{len(rows)} server{'' if len(rows) == 1 else 's'}, {counts['ok']} ok, "
                   f"{counts['unsupported']} unsupported, {counts['skipped']} skipped, "
                   f"{counts['failed']} failed, time {int(round(time_ms))} ms")

    @staticmethod
    def _cells(r: Any) -> tuple[str, ...]:
        t = _rtt_triple(r.rtts_ms)
        rtt = "/".join(f"{x:.3f}" for x in t) + " ms" if t else "-"
        cells = (r.server.name, r.server.transport, r.protocol_version or "-", rtt,
                 status_text(r.status, r.reason, r.sent, r.received))
        # A name or a server's message with a newline must not break the table.
        return tuple(_CONTROL.sub("?", c) for c in cells)

    @staticmethod
    def _json_row(r: Any) -> str:
        t = _rtt_triple(r.rtts_ms)
        loss = (r.sent - r.received) / r.sent * 100 if r.sent else None
        rtt = {k: (float(round(v, 3)) if t else None)
               for k, v in zip(("min", "avg", "max"), t or (0, 0, 0))}
        return _j({"event": "server", "name": r.server.name, "transport": r.server.transport,
                   "protocol_version": r.protocol_version, "status": r.status,
                   "reason": r.reason, "sent": r.sent, "received": r.received,
                   "loss_pct": None if loss is None else float(round(loss, 1)), "rtt_ms": rtt,
                   "file": r.server.file, "json_path": r.server.json_path})
