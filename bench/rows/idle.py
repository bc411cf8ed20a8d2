"""What watching 1000 idle connections costs: CPU and memory of the client
process, keepalive every second, through mcpping's C driver and through
each binding (bench/clients/idle_binding.{py,js}: no listener, so a pong
should wake nobody)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any

import method
import profiles
import report

KEY = "idle"
TITLE = "Keepalive at 1000 idle connections"
FULL_N = 1000


def run(ctx: Any) -> dict[str, Any]:
    n = ctx.pick(FULL_N, 100)
    windows, window_s = ctx.pick(12, 3), ctx.pick(5.0, 2.0)
    ctx.log(f"{n} connections, {windows} windows of {window_s:g} s")
    r = method.run_once([ctx.programs["idle_cost"], str(n), str(windows), str(window_s),
                         ctx.programs["responder"]], 600 + windows * window_s, ctx.root)
    blocks = _windows(r.pop("windows"))
    ctx.log(f"floor: {n} bare libuv pipes")
    floor = method.run_once([ctx.programs["idle_floor"], str(n), str(windows), str(window_s),
                             ctx.programs["responder"]], 600 + windows * window_s, ctx.root)
    res = {"n": n, "windows": windows, "window_s": window_s, "run": r,
           "series": {"keepalive": method.summary(blocks),
                      "floor": method.summary(_windows(floor["windows"]))},
           "blocks": blocks}
    for name, (exe, script) in {"python": (ctx.py, "idle_binding.py"),
                                "node": (ctx.node, "idle_binding.js")}.items():
        ctx.log(f"{name}: {n} connections through the binding")
        res["series"][name] = method.summary(_binding(ctx, exe, script, n, windows, window_s))
    s = res["series"]["keepalive"]
    res["figures"] = {
        "idle cpu_pct": {"label": f"CPU % of one core at {n} idle connections",
                         "value": s["cpu_pct"]["iqm"]},
        "idle cpu per ping": {"label": "CPU µs per keepalive ping",
                              "value": s["cpu_us_per_op"]["iqm"]},
        "idle rss per conn": {"label": "RSS bytes per connection",
                              "value": r["rss_per_conn_bytes"]}}
    return res


def _windows(windows: list[dict[str, Any]]) -> list[dict[str, float]]:
    """The figures of each measured window (idle_cost and idle_floor alike)."""
    blocks = []
    for w in windows:
        f = method.block_figures({**w, "ops": max(1, w["pongs"])})
        f["cpu_pct"] = 100.0 * w["cpu_s"] / w["wall_s"]
        f["pongs_per_s"] = w["pongs"] / w["wall_s"]
        blocks.append(f)
    return blocks


def _binding(ctx: Any, exe: str, script: str, n: int, windows: int, window_s: float
             ) -> list[dict[str, float]]:
    """One binding's windows (idle_binding prints a JSON line per window)."""
    argv = [exe, os.path.join(ctx.clients, script), str(n), str(windows), str(window_s),
            ctx.programs["responder"]]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=ctx.root)
    try:
        out, err = p.communicate(timeout=300 + windows * window_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise method.WorkerError(f"timed out: {' '.join(argv)}\n{err[-2000:]}")
    if p.returncode != 0:
        raise method.WorkerError(f"exit {p.returncode}: {' '.join(argv)}\n{err[-2000:]}")
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    return [{"cpu_pct": x["cpu_pct"], "cpu_us_per_op": x["cpu_us_per_ping"],
             "csw_per_op": x["csw_per_ping"], "pongs_per_s": x["pongs"] / window_s}
            for x in lines]


# Issue 21: each binding at most twice the C driver's CPU per keepalive ping.
BINDING_LIMIT = 2.0


def _binding_goal(res: dict[str, Any]) -> dict[str, Any] | None:
    c = res["series"]["keepalive"]["cpu_us_per_op"]["iqm"]
    parts, mets = [], []
    for name, label in (("python", "Python"), ("node", "Node")):
        b = res["series"].get(name, {}).get("cpu_us_per_op", {}).get("iqm")
        if b is None or not c:
            continue
        parts.append(f"{label} {b / c:.2f}× ({b:.1f} µs)")
        mets.append(b / c <= BINDING_LIMIT)
    if not parts:
        return None
    return method.goal("idle keepalive through the bindings",
                       f"≤ {BINDING_LIMIT:g}× the C driver's CPU per keepalive ping "
                       f"({c:.1f} µs)", ", ".join(parts), all(mets))


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    extra = [g for g in (_binding_goal(res),) if g]
    s = res["series"]["keepalive"]
    cpu = s["cpu_pct"]
    rss = res["run"]["rss_per_conn_bytes"]
    m = (f"{report.iqm(cpu, 2)} % of one core, {rss:,.0f} B RSS per connection "
         f"(N = {res['n']})")
    if res["n"] != FULL_N:
        return [method.goal("1000 idle connections", "≤ 1% of one core and ≤ 4 KiB each", m,
                            None, f"quick run: {res['n']} connections")] + extra
    note = "borderline: the interquartile range straddles 1%" \
        if cpu["q1"] <= 1.0 <= cpu["q3"] else ""
    floor = res["series"].get("floor", {}).get("cpu_pct", {})
    if floor.get("iqm"):
        note = "; ".join(x for x in (note, (
            f"bare libuv pipes with the same traffic: {report.iqm(floor, 2)} %, so the "
            f"driver costs {cpu['iqm'] / floor['iqm']:.2f}× the floor")) if x)
    return [method.goal("1000 idle connections", "≤ 1% of one core and ≤ 4 KiB each", m,
                        cpu["iqm"] <= 1.0 and rss <= 4096, note)] + extra


def explain(ctx: Any, res: dict[str, Any], goals_: list[dict[str, Any]]) -> dict[str, Any]:
    """When a goal is not met: perf's cpu-clock samples and strace's syscall
    counts of the steady state, one after the other in a separate run."""
    if all(g["met"] is not False for g in goals_) or not ctx.perf["sampling"]:
        return {}
    secs = 5.0
    ctx.log(f"profile: {res['n']} connections, {secs:g} s")
    p = subprocess.Popen([ctx.programs["idle_cost"], str(res["n"]), "1", str(2 * secs + 4),
                          ctx.programs["responder"]], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ctx.root)
    try:
        while "settled" not in (line := p.stderr.readline()):
            if not line:
                return {"perf": {"error": "idle_cost exited before settling"}}
        out = {"perf": profiles.perf_attach(p.pid, secs)}
        per_s = profiles.syscalls_attached(p.pid, secs)
        pongs = res["series"]["keepalive"]["pongs_per_s"]["iqm"] or 1
        if "calls" in per_s:
            per_s = {"per_op": per_s["per_op"] / pongs,
                     "calls": [[c, n / pongs] for c, n in per_s["calls"]]}
        out["syscalls"] = per_s
        return out
    except Exception as e:  # a profile that fails must not lose the row
        return {"perf": {"error": str(e).splitlines()[0][:300]}}
    finally:
        p.communicate()


def render(res: dict[str, Any]) -> list[str]:
    r = res["run"]
    L = [f"`bench/clients/idle_cost.c`: one process runs {res['n']} connections through "
         "mcpping's C driver on one uv loop (what each binding's I/O thread does) to as many "
         "`responder` processes, keepalive every 1 s (jitter 10%), after the MCP handshake. "
         f"After 2.5 s to settle it measures {res['windows']} windows of {res['window_s']:g} s: "
         "the CPU of the monitoring process (getrusage, user + system) and the keepalive pongs "
         "in each; at the end its RSS growth over the baseline taken before the first spawn, "
         "and the bytes live in mcpping's allocator (counted by an injected allocator).", ""]
    s = res["series"]["keepalive"]
    L += report.table(["figure", "interquartile mean (IQR over windows)"], [
        ["CPU % of one core", report.iqm(s["cpu_pct"], 2)],
        ["keepalive pongs/s", report.iqm(s["pongs_per_s"], 0)],
        ["CPU µs per keepalive ping", report.iqm(s["cpu_us_per_op"], 1)],
        ["context switches per keepalive ping", report.iqm(s["csw_per_op"], 2)],
        ["RSS growth per connection (bytes)", f"{r['rss_per_conn_bytes']:,.0f}"],
        ["mcpping allocator bytes per connection", f"{r['alloc_per_conn_bytes']:,.0f}"],
        ["ping timeouts / stale during the run", f"{r['timeouts']} / {r['stale']}"]])
    rows = [[name, report.iqm(b["cpu_pct"], 2), report.iqm(b["cpu_us_per_op"], 1),
             report.iqm(b["csw_per_op"], 2), report.iqm(b["pongs_per_s"], 0)]
            for name, b in (("bare libuv pipes (floor)", res["series"].get("floor")),
                            ("C driver", s), ("Python binding", res["series"].get("python")),
                            ("Node binding", res["series"].get("node"))) if b]
    if len(rows) > 1:
        L += ["The same keepalive through each binding (bench/clients/idle_binding.py and .js: "
              f"{res['n']} connections in one process, no listener, host mode), and the floor "
              "(`bench/clients/idle_floor.c`: the same servers, handshake and one ping per "
              "connection per second on the same 100 ms grid over bare libuv pipes, one shared "
              "timer, the answers' newlines counted and nothing parsed: what the kernel and "
              "libuv alone cost for this traffic):", ""]
        L += report.table(["through", "CPU % of one core", "CPU µs per keepalive ping",
                           "context switches per ping", "pongs/s"], rows)
    if s["pongs_per_s"]["iqm"] is not None and s["pongs_per_s"]["iqm"] < 0.5 * res["n"]:
        L += ["**Warning:** far fewer than one pong per connection per second: these figures "
              "do not measure keepalive.", ""]
    prof = res.get("profile", {})
    if prof.get("perf"):
        L += ["Profile of the steady state, in a separate run: perf's cpu-clock samples of "
              "the monitoring process for 5 s, then strace's syscall counts for 5 s (per "
              "keepalive ping at the pong rate measured above):", ""]
        L += report.perf_lines(prof["perf"], f"{res['n']} idle connections")
        L += [report.syscall_line(prof.get("syscalls"), f"{res['n']} idle connections",
                                  "keepalive ping"), ""]
    return L
