"""Rich displays for Jupyter: a peer's card with an inline SVG latency sparkline.

Plain strings and SVG only, so notebooks get it without any extra package.
Everything shown is escaped: a server names itself.
"""

from __future__ import annotations

from html import escape
from typing import Any, Sequence

__all__ = ["sparkline", "peer_card"]

_STATE_COLOURS = {"alive": "#2e7d32", "suspect": "#ef6c00", "stale": "#c62828",
                  "closed": "#616161"}
#: At most this many of the most recent RTTs are drawn.
SPARK_POINTS = 120


def sparkline(rtts: Sequence[float], width: int = 160, height: int = 32) -> str:
    """An SVG polyline of the most recent RTTs (seconds), scaled to fit; "" if none."""
    pts = list(rtts)[-SPARK_POINTS:]
    if not pts:
        return ""
    lo, hi = min(pts), max(pts)
    span = (hi - lo) or 1.0
    step = width / max(len(pts) - 1, 1)
    pad = 2
    coords = " ".join(
        f"{i * step:.1f},{pad + (height - 2 * pad) * (1 - (v - lo) / span):.1f}"
        for i, v in enumerate(pts))
    title = f"{len(pts)} RTTs, {lo * 1e3:.3f} to {hi * 1e3:.3f} ms"
    return (f"<svg class='mcpping-spark' xmlns='http://www.w3.org/2000/svg' width='{width}' "
            f"height='{height}' viewBox='0 0 {width} {height}' role='img'>"
            f"<title>{escape(title)}</title>"
            f"<polyline fill='none' stroke='#1565c0' stroke-width='1.5' points='{coords}'/></svg>")


def _ms(value: float | None) -> str:
    return "&ndash;" if value is None else f"{value * 1e3:.3f} ms"


def peer_card(*, name: str, state: str, protocol: str | None, pid: int | None,
              stats: dict[str, Any], rtts: Sequence[float], healthy: bool | None) -> str:
    """The HTML table Peer._repr_html_ shows."""
    colour = _STATE_COLOURS.get(state, "#616161")
    rows = [
        ("state", f"<span style='color:{colour};font-weight:bold'>{escape(state)}</span>"
                  + ("" if healthy is None else f" ({'healthy' if healthy else 'not healthy'})")),
        ("server", escape(name) + ("" if pid is None else f" (pid {pid})")),
        ("protocol", escape(protocol) if protocol else "&ndash;"),
        ("pings", f"{stats['count']} sent, {stats['received']} pongs, "
                  f"{stats['loss'] * 100:.1f}% loss"),
        ("rtt min/avg/max", " / ".join(_ms(stats[k]) for k in ("min", "avg", "max"))),
        ("rtt p50/p99", " / ".join(_ms(stats[k]) for k in ("p50", "p99"))),
    ]
    spark = sparkline(rtts)
    if spark:
        rows.append(("latency", spark))
    body = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{k}</th><td>{v}</td></tr>"
                   for k, v in rows)
    return f"<table class='mcpping-peer'>{body}</table>"
