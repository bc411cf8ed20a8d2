"""Jupyter displays: Peer._repr_html_ (with its SVG sparkline) and Stats.plot()."""

from __future__ import annotations

import sys

import pytest

import mcpping
from mcpping import _html
from conftest import DEMO


async def test_a_live_peers_card_shows_state_server_protocol_rtts_and_a_sparkline():
    async with mcpping.connect(DEMO, keepalive=None) as peer:
        before = peer._repr_html_()
        assert "mcpping-peer" in before and "<svg" not in before  # nothing to draw yet
        for _ in range(5):
            await peer.ping(timeout=2)
        card = peer._repr_html_()
        assert ">alive</span>" in card and "(healthy)" in card
        assert f"{peer.name} (pid {peer.pid})" in card
        assert peer.protocol_version and peer.protocol_version in card
        assert "5 sent, 5 pongs, 0.0% loss" in card
        assert f"{peer.stats.min * 1e3:.3f} ms" in card and f"{peer.stats.p99 * 1e3:.3f} ms" in card
        points = card.split("points='", 1)[1].split("'", 1)[0].split()
        assert len(points) == 5
    closed = peer._repr_html_()
    assert ">closed</span>" in closed and "pid" not in closed and "healthy" not in closed


def test_sparkline_puts_the_slowest_rtt_at_the_top_and_the_fastest_at_the_bottom():
    svg = _html.sparkline([0.002, 0.001, 0.003], width=100, height=20)
    pts = [tuple(map(float, p.split(","))) for p in svg.split("points='")[1].split("'")[0].split()]
    assert [x for x, _ in pts] == [0.0, 50.0, 100.0]
    ys = [y for _, y in pts]
    assert ys[2] == min(ys) == 2.0 and ys[1] == max(ys) == 18.0
    assert "3 RTTs, 1.000 to 3.000 ms" in svg
    assert _html.sparkline([]) == ""
    # At most the most recent SPARK_POINTS are drawn.
    many = _html.sparkline([0.001] * (_html.SPARK_POINTS + 30))
    assert len(many.split("points='")[1].split("'")[0].split()) == _html.SPARK_POINTS


def test_a_server_naming_itself_with_markup_is_escaped():
    stats = mcpping.Stats().as_dict()
    card = _html.peer_card(name="<script>x</script>", state="alive", protocol="<b>",
                           pid=1, stats=stats, rtts=[], healthy=True)
    assert "<script>" not in card and "&lt;script&gt;" in card and "&lt;b&gt;" in card


def test_stats_plot_draws_the_rtts_in_ms():
    import matplotlib
    matplotlib.use("Agg")
    s = mcpping.Stats()
    for v in (0.001, 0.004, 0.002):
        s.add_rtt(v)
    ax = s.plot()
    (line,) = ax.get_lines()[:1]
    assert list(line.get_ydata()) == pytest.approx([1.0, 4.0, 2.0])
    assert ax.get_ylabel() == "RTT (ms)"
    import matplotlib.pyplot as plt
    plt.close(ax.figure)


def test_stats_plot_without_matplotlib_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        mcpping.Stats().plot()
