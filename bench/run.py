#!/usr/bin/env python3
"""mcpping benchmarks, side by side with the official SDKs and a bare pipe.

    python3 bench/run.py [--quick] [--rows ping,idle,...] [--unsteady] [--no-profile]
    python3 bench/run.py --render          (rewrite RESULTS.md from RESULTS.json)

`make bench` builds what this needs and runs it (`make bench BENCH_OPTS="--quick
--rows ping"` for a short partial run). The whole run holds the CPUs out of
deep idle (steady mode, machine.py) and says whether it could. Each row
(bench/rows/) measures its series in interleaved blocks and reports medians
with their spread (bench/method.py). The rows with ratios run in passes
spread over the whole run, fresh workers each pass, because this VM's speed
moves in spells tens of seconds long that slow some series more than others
(schedule()); profiles run after the measuring (bench/profiles.py). A full
run writes bench/RESULTS.md, bench/RESULTS.json and bench/latency_cdf.png; a
quick or partial run writes them to bench/out/
unless --out says otherwise, so it never replaces the full report by
accident. `python3 bench/compare.py A.json B.json` compares two runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import machine  # noqa: E402
import method  # noqa: E402
import profiles  # noqa: E402
import report  # noqa: E402
from rows import ROWS  # noqa: E402

ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build")
PROGRAMS = {"responder": "responder", "c_ping": "bench-c-ping", "idle_cost": "bench-idle-cost",
            "idle_floor": "bench-idle-floor"}
NOISY_CORES = 0.05  # other processes' CPU above which a row is flagged
PASSES = {False: 4, True: 2}  # passes of the spread rows, by --quick


class Context:
    """What a row gets: programs, interpreters, run options."""

    def __init__(self, quick: bool, out: str, programs: dict[str, str], perf: dict[str, Any],
                 passes: int = 1):
        self.quick = quick
        self.passes = passes
        self.pass_no = 0
        self.spread = False
        self._kept: dict[tuple[str, str], dict[str, list[Any]]] = {}
        self.out = out
        self.root = ROOT
        self.clients = os.path.join(HERE, "clients")
        self.programs = programs
        self.py = sys.executable
        self.node = shutil.which("node") or "node"
        self.perf = perf
        self.row = ""

    def pick(self, full: Any, quick: Any) -> Any:
        return quick if self.quick else full

    def rounds(self, full: int, quick: int) -> int:
        """This pass's share of a spread row's rounds (schedule())."""
        total = self.pick(full, quick)
        return max(1, total // self.passes + (self.pass_no < total % self.passes))

    @property
    def final_pass(self) -> bool:
        return self.pass_no == self.passes - 1

    def keep(self, tag: str, lists: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """Adds this pass's lists (per series, in round order) to the row's
        earlier passes' under tag, and returns them all: a spread row
        computes its figures over every pass so far, and the last pass's
        result is the row's."""
        store = self._kept.setdefault((self.row, tag), {})
        for name, xs in lists.items():
            store.setdefault(name, []).extend(xs)
        return {name: list(xs) for name, xs in store.items()}

    def log(self, msg: str) -> None:
        where = self.row + (f" pass {self.pass_no + 1}/{self.passes}"
                            if self.row and self.spread and self.passes > 1 else "")
        print(f"[bench{' ' + where if where else ''}] {msg}", file=sys.stderr, flush=True)


def prepare_programs() -> tuple[str, dict[str, str]]:
    """Builds the C programs if needed and copies them to a private directory,
    so that a `make clean` elsewhere during the run cannot pull them away."""
    paths = {k: os.path.join(BUILD, v) for k, v in PROGRAMS.items()}
    if not all(os.path.exists(p) for p in paths.values()):
        subprocess.run(["make", "-s", *(os.path.relpath(p, ROOT) for p in paths.values())],
                       cwd=ROOT, check=True)
    private = tempfile.mkdtemp(prefix="mcpping-bench-bin-")
    copies = {}
    for k, p in paths.items():
        copies[k] = os.path.join(private, os.path.basename(p))
        shutil.copy2(p, copies[k])
    return private, copies


def floor_p50(programs: dict[str, str]) -> float | None:
    """The bare pipe's sequential p50 over two blocks after a warm-up."""
    try:
        blocks, _ = method.measure(
            {"floor": ([programs["c_ping"], "floor", programs["responder"]], None)},
            {"floor": {"n": 2000}}, 2, ROOT)
        return method.spread([b["p50_us"] for b in blocks["floor"]])["iqm"]
    except method.WorkerError:
        return None


def draft_reason(res: dict[str, Any], all_rows: bool) -> str:
    why = []
    if not res["steady"]["held"]:
        why.append("taken without steady mode")
    if res["quick"]:
        why.append("a --quick run (small blocks, few rounds)")
    if not all_rows:
        why.append("a partial run (" + ", ".join(res["rows"]) + ")")
    noisy = [k for k, r in res["rows"].items() if machine.noisy(r.get("load", {}), NOISY_CORES)]
    if noisy:
        others = res["load"].get("others_cores", 0.0)
        why.append(f"taken on a loaded machine (other processes used {others:.2f} cores on "
                   f"average; noisy rows: {', '.join(noisy)})")
    return "; ".join(why)


def measure(o: argparse.Namespace, keys: list[str]) -> dict[str, Any]:
    private, programs = prepare_programs()
    perf = profiles.perf_status()
    ctx = Context(o.quick, o.out, programs, perf, o.passes or PASSES[o.quick])
    res: dict[str, Any] = {"schema": 1, "argv": sys.argv[1:], "quick": o.quick,
                           "machine": machine.facts(),
                           "versions": machine.versions(ROOT, ctx.py, ctx.node), "perf": perf,
                           "rows": {}, "failed": {}}
    t0 = time.monotonic()
    check = {"unheld_p50_us": floor_p50(programs)}
    try:
        with machine.Steady(wanted=not o.unsteady) as steady:
            res["steady"] = steady.status()
            ctx.log(("steady: " if steady.held else "UNSTEADY: ") + steady.detail)
            if steady.held:
                check["held_p50_us"] = floor_p50(programs)
            res["steady_check"] = check
            start = machine.snapshot()
            by_key = {r.KEY: r for r in ROWS}
            loads: dict[str, list[dict[str, Any]]] = {}
            for pass_no, key in schedule(keys, by_key, ctx.passes):
                if key in res["failed"]:
                    continue
                row = by_key[key]
                ctx.row, ctx.pass_no, ctx.spread = key, pass_no, spread(row)
                ctx.log(row.TITLE)
                a = machine.snapshot()
                try:
                    r = row.run(ctx)
                except Exception:  # one failing row must not lose the others
                    res["failed"][key] = traceback.format_exc()[-3000:]
                    res["rows"].pop(key, None)
                    ctx.log(f"failed:\n{res['failed'][key]}")
                    continue
                loads.setdefault(key, []).append(machine.load_between(a, machine.snapshot()))
                r["title"] = row.TITLE
                r["passes"] = pass_no + 1 if ctx.spread else 1
                r["load"] = machine.merge_loads(loads[key])
                res["rows"][key] = r
            res["rows"] = {k: res["rows"][k] for k in keys if k in res["rows"]}
            res["load"] = machine.load_between(start, machine.snapshot())
            res["goals"] = goals(res)
            if o.profile if o.profile is not None else not o.quick:
                for key, r in res["rows"].items():
                    row = by_key[key]
                    if hasattr(row, "explain"):
                        ctx.row = key
                        mine = [g for g in res["goals"] if g["row"] == key]
                        r["profile"] = row.explain(ctx, r, mine)
                # Some goals read the profiles (syscalls per ping).
                res["goals"] = goals(res)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    res["elapsed_s"] = time.monotonic() - t0
    res["draft"] = "; ".join(x for x in (o.draft, draft_reason(res, keys == all_keys())) if x)
    return res


def spread(row: Any) -> bool:
    return getattr(row, "SPREAD", False)


def schedule(keys: list[str], by_key: dict[str, Any], passes: int) -> list[tuple[int, str]]:
    """The order of the run: (pass, row key) pairs.

    This VM's speed moves in spells tens of seconds long (the host's doing:
    every series slows, those that hand work between threads most), so a
    ratio taken over one 20-second stretch depends on the spell it fell in.
    The spread rows (SPREAD = True: those with ratios) therefore run in
    passes, each with fresh workers and its share of the rounds, and the
    other rows run between the passes, so every ratio samples the whole run.
    """
    many = [k for k in keys if spread(by_key[k])]
    once = [k for k in keys if k not in many]
    gaps = max(1, passes - 1)
    out: list[tuple[int, str]] = []
    for p in range(passes):
        out += [(p, k) for k in many]
        if p < gaps:
            out += [(0, k) for k in once[p::gaps]]
    return out


def goals(res: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in ROWS:
        if row.KEY in res["rows"] and hasattr(row, "goals"):
            for g in row.goals(res["rows"][row.KEY], res["rows"]):
                out.append({**g, "row": row.KEY})
    return out


def all_keys() -> list[str]:
    return [r.KEY for r in ROWS]


def write(res: dict[str, Any], out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "RESULTS.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "RESULTS.md"), "w") as f:
        f.write(report.render(res, ROWS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="short blocks, few rounds, 100 idle "
                    "connections: for trying the method, not for quoting")
    ap.add_argument("--rows", default=None, help="comma-separated rows: " + ",".join(all_keys()))
    ap.add_argument("--unsteady", action="store_true", help="do not hold the CPUs out of idle")
    ap.add_argument("--profile", dest="profile", action="store_true", default=None,
                    help="run the profiles (the default for a full run)")
    ap.add_argument("--no-profile", dest="profile", action="store_false")
    ap.add_argument("--passes", type=int, default=None, help="passes of the rows with ratios "
                    f"(default {PASSES[False]}, {PASSES[True]} with --quick)")
    ap.add_argument("--draft", default="", help="mark the report as a draft, saying why")
    ap.add_argument("--out", default=None, help="directory for RESULTS.md/.json and the chart "
                    "(default: bench/ for a full run, bench/out/ otherwise)")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite RESULTS.md from the RESULTS.json in --out (no measuring)")
    o = ap.parse_args()
    if o.passes is not None and o.passes < 1:
        ap.error("--passes must be at least 1")
    keys = all_keys() if not o.rows else o.rows.split(",")
    unknown = [k for k in keys if k not in all_keys()]
    if unknown:
        ap.error(f"unknown rows: {', '.join(unknown)} (rows: {', '.join(all_keys())})")
    if o.out is None:
        o.out = HERE if keys == all_keys() and not o.quick else os.path.join(HERE, "out")
    if o.render:
        with open(os.path.join(o.out, "RESULTS.json")) as f:
            res = json.load(f)
        res["goals"] = goals(res)
        write(res, o.out)
        return
    os.makedirs(o.out, exist_ok=True)
    res = measure(o, keys)
    write(res, o.out)
    print(f"{'steady' if res['steady']['held'] else 'UNSTEADY'}: {res['steady']['detail']}")
    for g in res["goals"]:
        print(f"{report.verdict(g['met']).strip('*'):8} {g['figure']}: {g['measured']}"
              + (f" [{g['note']}]" if g.get("note") else ""))
    if res["failed"]:
        print("failed rows: " + ", ".join(res["failed"]))
    if res["draft"]:
        print(f"draft: {res['draft']}")
    print(f"wrote {os.path.relpath(os.path.join(o.out, 'RESULTS.md'), ROOT)} in "
          f"{res['elapsed_s'] / 60:.1f} min")
    sys.exit(1 if res["failed"] else 0)


if __name__ == "__main__":
    main()
