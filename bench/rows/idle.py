"""What watching 1000 idle connections costs: CPU and memory of the client
process, keepalive every second, through mcpping's C driver."""
from __future__ import annotations

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
    blocks = []
    for w in r.pop("windows"):
        f = method.block_figures({**w, "ops": max(1, w["pongs"])})
        f["cpu_pct"] = 100.0 * w["cpu_s"] / w["wall_s"]
        f["pongs_per_s"] = w["pongs"] / w["wall_s"]
        blocks.append(f)
    res = {"n": n, "windows": windows, "window_s": window_s, "run": r,
           "series": {"keepalive": method.summary(blocks)}, "blocks": blocks}
    s = res["series"]["keepalive"]
    res["figures"] = {
        "idle cpu_pct": {"label": f"CPU % of one core at {n} idle connections",
                         "value": s["cpu_pct"]["iqm"]},
        "idle cpu per ping": {"label": "CPU µs per keepalive ping",
                              "value": s["cpu_us_per_op"]["iqm"]},
        "idle rss per conn": {"label": "RSS bytes per connection",
                              "value": r["rss_per_conn_bytes"]}}
    return res


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    s = res["series"]["keepalive"]
    cpu = s["cpu_pct"]
    rss = res["run"]["rss_per_conn_bytes"]
    m = (f"{report.iqm(cpu, 2)} % of one core, {rss:,.0f} B RSS per connection "
         f"(N = {res['n']})")
    if res["n"] != FULL_N:
        return [method.goal("1000 idle connections", "≤ 1% of one core and ≤ 4 KiB each", m,
                            None, f"quick run: {res['n']} connections")]
    note = "borderline: the interquartile range straddles 1%" \
        if cpu["q1"] <= 1.0 <= cpu["q3"] else ""
    return [method.goal("1000 idle connections", "≤ 1% of one core and ≤ 4 KiB each", m,
                        cpu["iqm"] <= 1.0 and rss <= 4096, note)]


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
