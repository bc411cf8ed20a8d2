"""Unit tests of Stats: exact running figures, percentiles over a bounded window."""

from __future__ import annotations

import math
import random
import tracemalloc

import pytest

from mcpping import _native
from mcpping.stats import WINDOW, Stats


def nearest_rank(sorted_values, pct):
    """The test's own oracle: nearest rank, the definition the C core follows."""
    return sorted_values[max(1, math.ceil(pct / 100 * len(sorted_values))) - 1]


def _reference(values: list[float]) -> dict[str, float]:
    """min/avg/max/mdev from the full list, the way ping(8) defines them."""
    n = len(values)
    avg = math.fsum(values) / n
    var = math.fsum((v - avg) ** 2 for v in values) / n
    return {"min": min(values), "avg": avg, "max": max(values), "mdev": math.sqrt(var)}


def _samples(n: int, seed: int = 1) -> list[float]:
    rnd = random.Random(seed)
    # Latency-like: a base near 1 ms, a long tail, the odd outlier.
    return [0.001 + rnd.expovariate(2000) + (0.05 if rnd.random() < 0.01 else 0.0) for _ in range(n)]


def test_empty() -> None:
    s = Stats()
    assert (s.min, s.avg, s.max, s.mdev, s.p50, s.p99) == (None,) * 6
    assert s.loss == 0.0
    assert s.rtts == []
    assert str(s) == "0 pings, 0 pongs, 0.0% loss"


def test_exact_figures_over_the_whole_life() -> None:
    values = _samples(50_000)
    s = Stats(window=1000)
    for v in values:
        s.add_rtt(v)
    ref = _reference(values)
    assert s.received == len(values)
    # min and max are exact even though the window holds only the last 1000.
    assert s.min == ref["min"]
    assert s.max == ref["max"]
    assert min(values) < min(values[-1000:])  # the minimum did fall out of the window
    assert math.isclose(s.avg, ref["avg"], rel_tol=1e-12)
    assert math.isclose(s.mdev, ref["mdev"], rel_tol=1e-9)


def test_mdev_constant_samples_is_zero_not_nan() -> None:
    s = Stats()
    for _ in range(1000):
        s.add_rtt(0.1)
    assert s.mdev == 0.0
    assert s.avg == pytest.approx(0.1, rel=1e-12)


def test_mdev_large_offset_small_spread() -> None:
    # The sum-of-squares formula loses everything to cancellation here; Welford does not.
    values = [1e4 + (i % 2) * 1e-3 for i in range(10_000)]
    s = Stats()
    for v in values:
        s.add_rtt(v)
    assert math.isclose(s.mdev, 0.5e-3, rel_tol=1e-6)


def test_percentiles_cover_the_recent_window() -> None:
    values = _samples(30_000, seed=7)
    window = 5000
    s = Stats(window=window)
    for v in values:
        s.add_rtt(v)
    recent = sorted(values[-window:])
    assert s.rtts == values[-window:]
    assert s.p50 == nearest_rank(recent, 50)
    assert s.p99 == nearest_rank(recent, 99)
    # The whole-life percentile differs here, so a full-history implementation fails.
    old = [10.0] * 20_000 + [0.001] * window
    t = Stats(window=window)
    for v in old:
        t.add_rtt(v)
    assert t.p50 == 0.001 and t.p99 == 0.001
    assert t.max == 10.0


def test_percentiles_before_the_window_fills() -> None:
    values = [0.005, 0.001, 0.003, 0.002, 0.004]
    s = Stats()
    for v in values:
        s.add_rtt(v)
    assert s.p50 == 0.003
    assert s.p99 == 0.005
    s.add_rtt(0.0005)  # the cached sort must be refreshed
    assert s.p50 == 0.002


def test_memory_constant_after_100k_adds() -> None:
    s = Stats()
    assert s.window == WINDOW
    for v in _samples(WINDOW):
        s.add_rtt(v)
    more = _samples(100_000, seed=3)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for v in more:
            s.add_rtt(v)
        s.p50  # noqa: B018 (sorts the window)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(s.rtts) == WINDOW
    assert s.received == WINDOW + 100_000
    # A list of every RTT would grow by 100k floats (> 3 MB); the window stays put.
    assert after - before < 1_000_000, after - before


def test_window_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Stats(window=0)


def test_loss_and_text() -> None:
    s = Stats()
    for _ in range(4):
        s.observe(native("ping"))
    for us in (1000, 2000, 3000):
        s.observe(native("pong", rtt_us=us))
    s.observe(native("timeout"))
    assert s.loss == 0.25
    assert str(s) == "4 pings, 3 pongs, 25.0% loss, rtt min/avg/max/mdev = 1.000/2.000/3.000/0.816 ms"
    d = s.as_dict()
    assert d["p50"] == 0.002 and d["p99"] == 0.003 and d["count"] == 4
    html = s._repr_html_()
    assert "<td>25.0%</td>" in html and "<td>2.000</td>" in html


def native(kind: str, **kw: object) -> dict[str, object]:
    """A native event dict as the C layer makes it (the keys Stats reads)."""
    return {"type": kind, "rpc_code": 0, "error": 0, "invalid": False, "rtt_us": 0, **kw}


def test_counts_come_from_the_c_rule_closing_errors_are_not_lost() -> None:
    s = Stats()
    for _ in range(5):
        s.observe(native("ping"))
    s.observe(native("ping_error", rpc_code=-32000))
    s.observe(native("ping_error", invalid=True))
    s.observe(native("timeout", error=_native.MCPP_ERR_CLOSED))
    s.observe(native("unsupported", rpc_code=-32601))
    s.observe(native("pong", rtt_us=1500))
    assert (s.count, s.received, s.lost) == (5, 1, 2)
    assert s.min == 0.0015
    assert _native.event_outcome(native("timeout", error=_native.MCPP_ERR_CLOSED)) == "closed"
    assert _native.event_outcome(native("timeout")) == "timeout"
    # The peer's code lives apart from ours: -6 from the peer is its error.
    assert _native.event_outcome(native("ping_error", rpc_code=_native.MCPP_ERR_CLOSED)) == "error"
    assert _native.event_outcome(native("stale")) is None
    assert _native.outcome_is_lost("invalid") and not _native.outcome_is_lost("closed")
