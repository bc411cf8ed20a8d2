"""Round-trip statistics of a connection's pings, in bounded memory."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from . import _check

__all__ = ["Stats", "nearest_rank", "WINDOW"]

#: How many of the most recent RTTs the percentiles (p50, p99) cover.
WINDOW = 10_000
#: The largest window (memory stays bounded: 8 bytes a sample, twice).
MAX_WINDOW = 10_000_000


def nearest_rank(sorted_values: list[float], pct: float) -> float:
    """The nearest-rank percentile of an ascending list (non-empty)."""
    k = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[k - 1]


@dataclass
class Stats:
    """Ping outcomes so far. RTTs are in seconds.

    ``count`` is pings sent, ``received`` pongs, ``lost`` timeouts and errors;
    ``loss`` is the lost fraction of the pings that finished (0.0 - 1.0).

    Memory stays bounded however long the connection lives: ``min``, ``avg``,
    ``max`` and ``mdev`` are running figures over every pong, while ``p50``
    and ``p99`` cover only the most recent ``window`` RTTs (default
    :data:`WINDOW`), which ``rtts`` lists, oldest first.
    """

    count: int = 0
    received: int = 0
    lost: int = 0
    window: int = field(default=WINDOW, repr=False)
    _n: int = field(default=0, init=False, repr=False)
    _min: float = field(default=math.inf, init=False, repr=False)
    _max: float = field(default=-math.inf, init=False, repr=False)
    _sum: float = field(default=0.0, init=False, repr=False)
    _mean: float = field(default=0.0, init=False, repr=False)
    _m2: float = field(default=0.0, init=False, repr=False)
    _recent: deque[float] = field(init=False, repr=False, compare=False)
    _sorted: list[float] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check.integer("window", self.window, 1, MAX_WINDOW)
        self._recent = deque(maxlen=self.window)

    def add_rtt(self, rtt: float) -> None:
        """Records a pong."""
        self.received += 1
        self._n += 1
        self._min = min(self._min, rtt)
        self._max = max(self._max, rtt)
        self._sum += rtt
        # Welford: the running mean and sum of squared deviations.
        delta = rtt - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (rtt - self._mean)
        self._recent.append(rtt)
        self._sorted = None

    @property
    def rtts(self) -> list[float]:
        """The most recent RTTs (at most ``window``), oldest first."""
        return list(self._recent)

    @property
    def loss(self) -> float:
        done = self.received + self.lost
        return self.lost / done if done else 0.0

    @property
    def min(self) -> float | None:
        return self._min if self._n else None

    @property
    def max(self) -> float | None:
        return self._max if self._n else None

    @property
    def avg(self) -> float | None:
        return self._sum / self._n if self._n else None

    @property
    def mdev(self) -> float | None:
        """Standard deviation, as ping(8) prints it."""
        return math.sqrt(max(0.0, self._m2 / self._n)) if self._n else None

    def _window_sorted(self) -> list[float]:
        if self._sorted is None:
            self._sorted = sorted(self._recent)
        return self._sorted

    @property
    def p50(self) -> float | None:
        """Median of the recent window (nearest rank)."""
        return nearest_rank(self._window_sorted(), 50) if self._n else None

    @property
    def p99(self) -> float | None:
        """99th percentile of the recent window (nearest rank)."""
        return nearest_rank(self._window_sorted(), 99) if self._n else None

    def as_dict(self) -> dict[str, float | int | None]:
        """Counts plus RTT figures, in seconds."""
        return {
            "count": self.count, "received": self.received, "lost": self.lost,
            "loss": self.loss, "min": self.min, "avg": self.avg, "max": self.max,
            "mdev": self.mdev, "p50": self.p50, "p99": self.p99,
        }

    def __str__(self) -> str:
        s = f"{self.count} pings, {self.received} pongs, {self.loss * 100:.1f}% loss"
        if self._n:
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
