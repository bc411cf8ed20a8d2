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

import method  # noqa: E402


def blocks(**series: list[float]) -> dict[str, list[dict[str, float]]]:
    return {name: [{"p50_us": x} for x in xs] for name, xs in series.items()}


def test_ratio_is_the_ratio_of_the_medians_with_the_per_round_iqr_beside_it():
    b = blocks(a=[10, 20, 30, 40, 50], b=[5, 10, 10, 20, 25])
    r = method.ratio(b, "a", "b", "p50_us")
    assert r["value"] == pytest.approx(30 / 10)
    # Per-round ratios 2, 2, 3, 2, 2: the spread is theirs, not the medians'.
    assert (r["q1"], r["q3"]) == (pytest.approx(2.0), pytest.approx(2.0))
    assert r["rounds"] == 5


def test_spread_gives_the_median_and_the_interquartile_range():
    s = method.spread([1, 2, 3, 4, 5, 6, 7, 8, 100])
    assert s["median"] == 5
    assert (s["q1"], s["q3"]) == (3, 7)
    assert method.spread([])["median"] is None


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


def test_interleave_warms_up_sizes_blocks_and_rotates_the_order(worker_script, tmp_path):
    log = tmp_path / "order"
    specs = {n: ([sys.executable, str(worker_script), n, str(log)], None) for n in "ABC"}
    got, commands = method.measure(specs, {n: {"n": 10} for n in "ABC"}, 3, str(tmp_path),
                                   target_s=0.005)
    order = log.read_text().split()
    # Two sizing rounds in the given order, then A B C, B C A, C A B.
    assert order == list("ABC") * 2 + list("ABCBCACAB")
    for n in "ABC":
        assert commands[n]["n"] > 10  # 10 ops of 10 µs are far below 5 ms
        assert len(got[n]) == 3
        b = got[n][0]
        assert b["p50_us"] == 10.0
        assert b["cpu_us_per_op"] > 0 and b["rate"] > 0


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
