"""Round-trip statistics of a connection's pings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Stats", "nearest_rank"]


def nearest_rank(sorted_values: list[float], pct: float) -> float:
    """The nearest-rank percentile of an ascending list (non-empty)."""
    k = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[k - 1]


@dataclass
class Stats:
    """Ping outcomes so far. RTTs are in seconds.

    ``count`` is pings sent, ``received`` pongs, ``lost`` timeouts and errors;
    ``loss`` is the lost fraction of the pings that finished (0.0 - 1.0).
    """

    count: int = 0
    received: int = 0
    lost: int = 0
    rtts: list[float] = field(default_factory=list, repr=False)

    def add_rtt(self, rtt: float) -> None:
        """Records a pong."""
        self.received += 1
        self.rtts.append(rtt)

    @property
    def loss(self) -> float:
        done = self.received + self.lost
        return self.lost / done if done else 0.0

    @property
    def min(self) -> float | None:
        return min(self.rtts) if self.rtts else None

    @property
    def max(self) -> float | None:
        return max(self.rtts) if self.rtts else None

    @property
    def avg(self) -> float | None:
        return sum(self.rtts) / len(self.rtts) if self.rtts else None

    @property
    def mdev(self) -> float | None:
        """Standard deviation, as ping(8) prints it."""
        if not self.rtts:
            return None
        avg = sum(self.rtts) / len(self.rtts)
        return math.sqrt(max(0.0, sum(r * r for r in self.rtts) / len(self.rtts) - avg * avg))

    @property
    def p50(self) -> float | None:
        return nearest_rank(sorted(self.rtts), 50) if self.rtts else None

    @property
    def p99(self) -> float | None:
        return nearest_rank(sorted(self.rtts), 99) if self.rtts else None

    def as_dict(self) -> dict[str, float | int | None]:
        """Counts plus RTT figures, in seconds."""
        return {
            "count": self.count, "received": self.received, "lost": self.lost,
            "loss": self.loss, "min": self.min, "avg": self.avg, "max": self.max,
            "mdev": self.mdev, "p50": self.p50, "p99": self.p99,
        }

    def __str__(self) -> str:
        s = f"{self.count} pings, {self.received} pongs, {self.loss * 100:.1f}% loss"
        if self.rtts:
            s += (f", rtt min/avg/max/mdev = {self.min * 1e3:.3f}/{self.avg * 1e3:.3f}/"  # type: ignore[operator]
                  f"{self.max * 1e3:.3f}/{self.mdev * 1e3:.3f} ms")  # type: ignore[operator]
        return s

    def _repr_html_(self) -> str:
        """A small table for Jupyter."""
        def ms(v: float | None) -> str:
            return "&ndash;" if v is None else f"{v * 1e3:.3f}"

        rows = [("pings", str(self.count)), ("pongs", str(self.received)),
                ("loss", f"{self.loss * 100:.1f}%")]
        rows += [(f"{k} (ms)", ms(getattr(self, k))) for k in ("min", "avg", "max", "mdev", "p50", "p99")]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
        return f"<table class='mcpping-stats'>{body}</table>"
