"""The benchmark method (bench/method.py, bench/clients/worker.py,
bench/compare.py): the figures a report quotes come out of these."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import machine  # noqa: E402
import method  # noqa: E402
import run  # noqa: E402


def blocks(**series: list[float]) -> dict[str, list[dict[str, float]]]:
    return {name: [{"p50_us": x} for x in xs] for name, xs in series.items()}


def test_ratio_is_the_ratio_of_the_interquartile_means_with_the_per_round_iqr_beside_it():
    b = blocks(a=[10, 20, 30, 40, 50], b=[5, 10, 10, 20, 25])
    r = method.ratio(b, "a", "b", "p50_us")
    # Middle halves, the quartiles' neighbours weighing 3/4: (15 + 30 + 30) / 2.5
    # and (7.5 + 10 + 15) / 2.5.
    assert r["value"] == pytest.approx(30 / 13)
    # Per-round ratios 2, 2, 3, 2, 2: the spread is theirs, not the medians'.
    assert (r["q1"], r["q3"]) == (pytest.approx(2.0), pytest.approx(2.0))
    assert r["rounds"] == 5


def test_spread_gives_the_interquartile_mean_the_median_and_the_interquartile_range():
    s = method.spread([1, 2, 3, 4, 5, 6, 7, 8, 100])
    assert s["median"] == 5
    assert s["iqm"] == pytest.approx(5.0)  # the outlier is left out, as by the median
    assert (s["q1"], s["q3"]) == (3, 7)
    assert method.spread([4, 2, 6, 8])["iqm"] == pytest.approx(5.0)
    assert method.spread([3])["iqm"] == 3
    assert method.spread([])["iqm"] is None and method.spread([])["median"] is None


def test_the_interquartile_mean_follows_two_modes_shares_where_the_median_jumps():
    # Blocks from a fast spell (50) and a slow one (80): two more slow blocks
    # move the median from one mode to the other (+60%), the interquartile
    # mean by the share they changed in the middle half (11 and 9 of 20 fast,
    # then 9 and 11: 63.5 to 66.5, +5%).
    before = method.spread([50.0] * 21 + [80.0] * 19)
    after = method.spread([50.0] * 19 + [80.0] * 21)
    assert (before["median"], after["median"]) == (50.0, 80.0)
    assert (before["iqm"], after["iqm"]) == (pytest.approx(63.5), pytest.approx(66.5))


def test_a_goal_whose_limit_falls_inside_the_iqr_is_borderline():
    firm = {"value": 1.1, "q1": 1.05, "q3": 1.2}
    loose = {"value": 1.1, "q1": 0.9, "q3": 1.4}
    assert method.judge(firm, 1.3, at_most=True) == (True, "")
    met, note = method.judge(loose, 1.3, at_most=True)
    assert met is True and "borderline" in note
    assert method.judge({"value": 4.0, "q1": 3.5, "q3": 4.5}, 5.0, at_most=False)[0] is False


WORKER = textwrap.dedent("""
    import asyncio, sys, threading, time
    sys.path.insert(0, {clients!r})
    from worker import serve

    name, log = sys.argv[1], sys.argv[2]

    def spin(seconds):
        t = time.thread_time()
        while time.thread_time() - t < seconds:
            pass

    async def block(cmd):
        with open(log, "a") as f:
            f.write(name + "\\n")
        if cmd.get("thread_cpu_s"):
            # CPU burnt on another thread must count too.
            t = threading.Thread(target=spin, args=(cmd["thread_cpu_s"],))
            t.start()
            t.join()
        spin(cmd["n"] * 1e-5)
        return {{"ops": cmd["n"], "samples_us": [10.0] * cmd["n"]}}

    asyncio.run(serve(block))
""")


@pytest.fixture
def worker_script(tmp_path: Path) -> Path:
    p = tmp_path / "toy_worker.py"
    p.write_text(WORKER.format(clients=str(BENCH / "clients")))
    return p


def run_toys(worker_script: Path, tmp_path: Path, names: str, rounds: int, warm_s: float
             ) -> tuple[list[str], dict, dict]:
    """Measures toy series named by the letters of names in blocks of ~5 ms;
    returns the order the blocks ran in, the blocks and the commands."""
    log = tmp_path / "order"
    specs = {n: ([sys.executable, str(worker_script), n, str(log)], None) for n in names}
    got, commands = method.measure(specs, {n: {"n": 10} for n in names}, rounds,
                                   str(tmp_path), target_s=0.005, warm_s=warm_s)
    return log.read_text().split(), got, commands


def test_interleave_warms_up_sizes_blocks_and_rotates_the_order(worker_script, tmp_path):
    order, got, commands = run_toys(worker_script, tmp_path, "ABC", 3, warm_s=0.0)
    # Two sizing rounds in the given order, then A B C, B C A, C A B.
    assert order == list("ABC") * 2 + list("ABCBCACAB")
    for n in "ABC":
        assert commands[n]["n"] > 10  # 10 ops of 10 µs are far below 5 ms
        assert len(got[n]) == 3
        b = got[n][0]
        assert b["p50_us"] == 10.0
        assert b["cpu_us_per_op"] > 0 and b["rate"] > 0


def test_warm_up_goes_on_until_every_series_has_run_warm_s(worker_script, tmp_path):
    order, got, _ = run_toys(worker_script, tmp_path, "AB", 2, warm_s=0.2)
    warm = order[:-4]
    # Blocks of ~5 ms: 0.2 s of warm-up takes about forty rounds, not just the
    # two that size the blocks (which only a machine 40 times slower than the
    # blocks' CPU time could make last 0.2 s).
    assert len(warm) >= 6 and warm == list("AB") * (len(warm) // 2)
    assert order[-4:] == list("ABBA")
    assert all(len(got[n]) == 2 for n in "AB")


def test_a_block_counts_the_cpu_of_every_thread_of_the_worker(worker_script, tmp_path):
    w = method.Worker("toy", [sys.executable, str(worker_script), "toy", str(tmp_path / "log")])
    try:
        r = w.block({"n": 1, "thread_cpu_s": 0.05})
    finally:
        w.close()
    assert r["ops"] == 1
    assert r["cpu_s"] >= 0.05
    assert r["wall_s"] >= 0.05


def test_a_worker_that_dies_is_reported_with_its_stderr(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text("import sys\nprint('{\"ready\": true}', flush=True)\n"
                      "sys.stdin.readline()\nsys.exit('boom: no block for you')\n")
    w = method.Worker("dies", [sys.executable, str(script)])
    with pytest.raises(method.WorkerError, match="boom: no block for you"):
        w.block({"n": 1})
    w.close()


def run_json(tmp_path: Path, name: str, ratios: dict[str, float]) -> Path:
    res = {"machine": {"date": name}, "steady": {"held": True}, "load": {},
           "rows": {"ping": {"ratios": {k: {"value": v, "label": k}
                                        for k, v in ratios.items()}}},
           "goals": []}
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(res))
    return p


def compare(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / "compare.py"), str(a), str(b)],
                          capture_output=True, text=True)


def test_compare_flags_a_ratio_that_moved_beyond_15_percent(tmp_path):
    a = run_json(tmp_path, "a", {"c-driver/floor p50": 1.10, "node-api/ts-sdk p50": 1.00})
    b = run_json(tmp_path, "b", {"c-driver/floor p50": 1.20, "node-api/ts-sdk p50": 1.20})
    p = compare(a, b)
    assert p.returncode == 1, p.stdout
    line = {k: next(ln for ln in p.stdout.splitlines() if f"ping: {k}" in ln)
            for k in ("node-api/ts-sdk", "c-driver/floor")}
    assert line["node-api/ts-sdk"].startswith("!!")  # +20%
    assert not line["c-driver/floor"].startswith("!!")  # +9%
    assert "1 of 2 ratios moved" in p.stdout


def test_compare_passes_two_runs_within_15_percent(tmp_path):
    a = run_json(tmp_path, "a", {"c-driver/floor p50": 1.10, "py-sdk/py-api p50": 4.0})
    b = run_json(tmp_path, "b", {"c-driver/floor p50": 1.05, "py-sdk/py-api p50": 4.5})
    p = compare(a, b)
    assert p.returncode == 0, p.stdout
    assert "0 of 2 ratios moved" in p.stdout


class Row:
    def __init__(self, key: str, spread: bool):
        self.KEY, self.SPREAD = key, spread


def test_spread_rows_run_in_passes_with_the_other_rows_between_them():
    rows = {"ping": Row("ping", True), "busy": Row("busy", False),
            "wrap": Row("wrap", True), "idle": Row("idle", False)}
    got = run.schedule(["ping", "busy", "wrap", "idle"], rows, 3)
    assert got == [(0, "ping"), (0, "wrap"), (0, "busy"),
                   (1, "ping"), (1, "wrap"), (0, "idle"),
                   (2, "ping"), (2, "wrap")]
    assert run.schedule(["ping", "busy"], rows, 1) == [(0, "ping"), (0, "busy")]


def test_a_spread_row_gets_its_share_of_the_rounds_and_keeps_every_pass():
    ctx = run.Context(quick=False, out="", programs={}, perf={}, passes=4)
    ctx.row = "ping"
    shares, kept = [], {}
    for p in range(4):
        ctx.pass_no = p
        shares.append(ctx.rounds(10, 2))
        kept = ctx.keep("blocks", {"a": [p] * shares[-1], "b": [p * 10] * shares[-1]})
        assert ctx.final_pass == (p == 3)
    assert shares == [3, 3, 2, 2] and sum(shares) == 10
    assert kept == {"a": [0, 0, 0, 1, 1, 1, 2, 2, 3, 3],
                    "b": [0, 0, 0, 10, 10, 10, 20, 20, 30, 30]}
    assert method.rounds(kept) == 10
    ctx.row = "wrap"  # another row's lists are its own
    assert ctx.keep("blocks", {"a": [7]}) == {"a": [7]}


def test_a_row_s_load_over_its_passes_is_averaged_over_their_wall_time():
    a = {"wall_s": 10.0, "loadavg_start": [1, 1, 1], "loadavg_end": [2, 2, 2],
         "busy_cores": 1.0, "ours_cores": 1.0, "others_cores": 0.0, "steal_pct": 0.0}
    b = {"wall_s": 30.0, "loadavg_start": [3, 3, 3], "loadavg_end": [4, 4, 4],
         "busy_cores": 1.0, "ours_cores": 0.6, "others_cores": 0.4, "steal_pct": 2.0}
    m = machine.merge_loads([a, b])
    assert m["wall_s"] == 40.0
    assert m["others_cores"] == pytest.approx(0.3) and m["steal_pct"] == pytest.approx(1.5)
    assert (m["loadavg_start"], m["loadavg_end"]) == ([1, 1, 1], [4, 4, 4])
