"""Round-trip statistics of a connection's pings, in bounded memory.

The figures come from the C core (``mcpp_rtt_stats``), the same code that
Node's ``RttStats`` and both command lines read, so they agree to the bit.
"""

from __future__ import annotations

from typing import Any

from . import _check, _native

__all__ = ["Stats", "WINDOW"]

#: How many of the most recent RTTs the percentiles (p50, p99) cover (C's MCPP_RTT_WINDOW).
WINDOW: int = _native.RTT_WINDOW

#: Microseconds per second: Stats keeps RTTs in seconds.
_US_PER_S = 1e6


class Stats:
    """Ping outcomes so far. RTTs are in seconds.

    ``count`` is pings sent, ``received`` pongs, ``lost`` timeouts, errors and
    invalid answers (a ping abandoned because the connection closed is not
    lost); ``loss`` is the lost fraction of the pings that finished (0.0 -
    1.0).

    Memory stays bounded however long the connection lives: ``min``, ``avg``,
    ``max`` and ``mdev`` are running figures over every pong, while ``p50``
    and ``p99`` cover only the most recent ``window`` RTTs (default
    :data:`WINDOW`), which ``rtts`` lists, oldest first.
    """

    def __init__(self, window: int = WINDOW) -> None:
        self.window: int = _check.setting("window", "rtt_window", window)
        self._c = _native.RttStats(self.window)

    def add_rtt(self, rtt: float) -> None:
        """Records a pong (in whatever unit the caller reads the figures)."""
        self._c.add(rtt)

    def observe(self, native_event: dict[str, Any]) -> None:
        """Feeds a native event (dict or drained NativeEvent): a ping counts sent, a pong its RTT, a
        lost outcome (the C core decides which) counts lost."""
        self._c.observe(native_event, _US_PER_S)

    def _get(self, key: str) -> Any:
        return self._c.summary()[key]

    @property
    def count(self) -> int:
        return int(self._get("sent"))

    @property
    def received(self) -> int:
        return int(self._get("received"))

    @property
    def lost(self) -> int:
        return int(self._get("lost"))

    @property
    def rtts(self) -> list[float]:
        """The most recent RTTs (at most ``window``), oldest first."""
        return list(self._c.recent())

    @property
    def loss(self) -> float:
        return float(self._get("loss_pct")) / 100

    @property
    def min(self) -> float | None:
        return self._get("min")

    @property
    def max(self) -> float | None:
        return self._get("max")

    @property
    def avg(self) -> float | None:
        return self._get("avg")

    @property
    def mdev(self) -> float | None:
        """Standard deviation, as ping(8) prints it."""
        return self._get("mdev")

    @property
    def p50(self) -> float | None:
        """Median of the recent window (nearest rank)."""
        return self._get("p50")

    @property
    def p99(self) -> float | None:
        """99th percentile of the recent window (nearest rank)."""
        return self._get("p99")

    def as_dict(self) -> dict[str, float | int | None]:
        """Counts plus RTT figures, in seconds."""
        s = self._c.summary()
        return {
            "count": s["sent"], "received": s["received"], "lost": s["lost"],
            "loss": s["loss_pct"] / 100, "min": s["min"], "avg": s["avg"], "max": s["max"],
            "mdev": s["mdev"], "p50": s["p50"], "p99": s["p99"],
        }

    def __repr__(self) -> str:
        return f"Stats(count={self.count}, received={self.received}, lost={self.lost})"

    def __str__(self) -> str:
        d = self.as_dict()
        s = f"{d['count']} pings, {d['received']} pongs, {self.loss * 100:.1f}% loss"
        if d["min"] is not None:
            s += (f", rtt min/avg/max/mdev = {d['min'] * 1e3:.3f}/{d['avg'] * 1e3:.3f}/"  # type: ignore[operator]
                  f"{d['max'] * 1e3:.3f}/{d['mdev'] * 1e3:.3f} ms")  # type: ignore[operator]
        return s

    def plot(self, ax: Any = None, title: str | None = None) -> Any:
        """Draws the recent RTTs (ms, oldest first) with matplotlib; returns the Axes.

        ``ax``: the matplotlib Axes to draw on (None: a new figure's).
        Without matplotlib it raises ImportError saying how to install it.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Stats.plot() needs matplotlib: pip install matplotlib "
                              "(or use the table: display(peer.stats))") from None
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 2.5))
        rtts = [v * 1e3 for v in self.rtts]
        ax.plot(range(1, len(rtts) + 1), rtts, marker=".", linewidth=1)
        if self.p50 is not None:
            ax.axhline(self.p50 * 1e3, linestyle="--", linewidth=0.8, color="grey",
                       label=f"p50 {self.p50 * 1e3:.3f} ms")
            ax.legend(loc="upper right")
        ax.set_xlabel("pong")
        ax.set_ylabel("RTT (ms)")
        ax.set_title(title or f"{self.received} pongs, {self.loss * 100:.1f}% loss")
        return ax

    def _repr_html_(self) -> str:
        """A small table for Jupyter."""
        def ms(v: float | int | None) -> str:
            return "&ndash;" if v is None else f"{v * 1e3:.3f}"

        d = self.as_dict()
        rows = [("pings", str(d["count"])), ("pongs", str(d["received"])),
                ("loss", f"{self.loss * 100:.1f}%")]
        rows += [(f"{k} (ms)", ms(d[k])) for k in ("min", "avg", "max", "mdev", "p50", "p99")]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
        return f"<table class='mcpping-stats'>{body}</table>"
