"""``mcpping --config``'s table and JSON rows (docs/cli.md).

The single-target check's report is C's (csrc/src/app/cli_run.c); this is
the --config runner's, which moves to C with the --config rules.
"""

from __future__ import annotations

import json
import re
import sys
from typing import IO, Any


__all__ = ["ConfigReporter", "format_loss"]


def _j(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def format_loss(pct: float) -> str:
    """``20%`` when whole, else one decimal (``33.3%``)."""
    one = round(pct, 1)
    return f"{int(one)}%" if one == int(one) else f"{one:.1f}%"


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
