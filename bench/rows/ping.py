"""Sequential ping round trip: one ping in flight, the bare pipe, the C
driver, both bindings and both official SDKs; wall time and CPU per ping."""
from __future__ import annotations

import os
import re
from typing import Any

import method
import profiles
import report

KEY = "ping"
TITLE = "Sequential ping round trip"
SPREAD = True  # runs in passes spread over the run (run.py schedule())

LABELS = {
    "floor": "bare libuv pipe (floor)",
    "c-driver": "mcpping C driver",
    "py-api": "mcpping Python `peer.ping()`",
    "py-sdk": "Python SDK `ClientSession.send_ping()`",
    "node-api": "mcpping Node `peer.ping()`",
    "ts-sdk": "TS SDK `client.ping()`",
}


def specs(ctx: Any) -> dict[str, tuple[list[str], None]]:
    """The ping workers (bench/clients), shared with the pipelined row."""
    c, r = ctx.programs["c_ping"], ctx.programs["responder"]
    py = os.path.join(ctx.clients, "ping_worker.py")
    js = os.path.join(ctx.clients, "ping_worker.js")
    return {"floor": ([c, "floor", r], None), "c-driver": ([c, "driver", r], None),
            "py-api": ([ctx.py, py, "api", r], None), "py-sdk": ([ctx.py, py, "sdk", r], None),
            "node-api": ([ctx.node, js, "api", r], None),
            "ts-sdk": ([ctx.node, js, "sdk", r], None)}


# mcpping's own native functions, for the profiles' inclusive view.
FOCUS = r"^(mcpp_|mcpping_|Napi::|napi_|py_|drain|EventToJs)|mcpping_node::"

RATIOS = [  # key, numerator, denominator, figure, label
    ("c-driver/floor p50", "c-driver", "floor", "p50_us", "C driver p50 ÷ bare pipe p50"),
    ("py-sdk/py-api p50", "py-sdk", "py-api", "p50_us",
     "Python SDK p50 ÷ mcpping Python p50 (how many times faster)"),
    ("node-api/ts-sdk p50", "node-api", "ts-sdk", "p50_us", "mcpping Node p50 ÷ TS SDK p50"),
    ("ts-sdk/node-api p50", "ts-sdk", "node-api", "p50_us",
     "TS SDK p50 ÷ mcpping Node p50 (how many times faster)"),
    ("py-api/py-sdk cpu", "py-api", "py-sdk", "cpu_us_per_op",
     "Python CPU per ping, mcpping ÷ SDK"),
    ("node-api/ts-sdk cpu", "node-api", "ts-sdk", "cpu_us_per_op",
     "Node CPU per ping, mcpping ÷ SDK"),
    ("c-driver/floor cpu", "c-driver", "floor", "cpu_us_per_op",
     "C driver CPU per ping ÷ bare pipe's"),
    ("py-api/floor p50", "py-api", "floor", "p50_us", "mcpping Python p50 ÷ bare pipe p50"),
    ("node-api/floor p50", "node-api", "floor", "p50_us", "mcpping Node p50 ÷ bare pipe p50"),
]


def ratios(blocks: dict[str, list[dict[str, Any]]], table: list[tuple]) -> dict[str, Any]:
    out = {}
    for key, num, den, fig, label in table:
        if num in blocks and den in blocks:
            out[key] = {**method.ratio(blocks, num, den, fig), "label": label}
    return out


def run(ctx: Any) -> dict[str, Any]:
    pooled: dict[str, list[float]] = {n: [] for n in LABELS}
    target = ctx.pick(0.05, 0.02)
    modes: dict[str, Any] = {}

    def ready(name: str, info: dict[str, Any]) -> None:
        mode = info.get("runtime_mode")  # (mode, why), or {mode, why} from Node
        if isinstance(mode, dict):
            mode = [mode.get("mode"), mode.get("why")]
        if mode:
            modes[name] = mode

    blocks, commands = method.measure(
        specs(ctx), {n: {"n": 200} for n in LABELS}, ctx.rounds(60, 8), ctx.root, ctx.log,
        target_s=target,
        on_block=lambda name, raw: pooled[name].extend(raw.get("samples_us", ())),
        on_ready=ready)
    blocks, pooled = ctx.keep("blocks", blocks), ctx.keep("samples", pooled)
    res = {"rounds": method.rounds(blocks), "target_s": target, "commands": commands,
           "series": {n: method.summary(b) for n, b in blocks.items()},
           "ratios": ratios(blocks, RATIOS), "blocks": blocks, "runtime_modes": modes}
    if ctx.final_pass:  # the earlier passes' results are superseded, charts and all
        res["chart"] = chart(pooled, res["series"], os.path.join(ctx.out, "latency_cdf.png"))
    return res


def _ratio_goal(res: dict[str, Any], key: str, limit: float, at_most: bool
                ) -> tuple[bool | None, str, str]:
    r = res["ratios"].get(key, {})
    met, note = method.judge(r, limit, at_most)
    return met, report.times(r), note


def _mode(res: dict[str, Any], name: str) -> str:
    """Which mode the series' runtime ran in (issue 21), for the report."""
    mode = res.get("runtime_modes", {}).get(name)
    return f" (runtime in {mode[0]} mode)" if mode else ""


# Issue 21's "Done when" for one ping in flight: (series, its label, p50 ratio
# key and limit as a p50 speed-up, CPU ratio key and limit, syscalls per ping).
BINDING_GOALS = [
    ("py-api", "Python", "py-sdk/py-api p50", 5.0, "py-api/py-sdk cpu", 0.2, 4.0),
    ("node-api", "Node", "ts-sdk/node-api p50", 1.5, "node-api/ts-sdk cpu", 0.5, 3.5),
]
CSW_PER_PING = 1.2  # client context switches per ping, both bindings


def _both(parts: list[tuple[bool | None, str]]) -> tuple[bool | None, str]:
    """All met (None if any unmeasured), and the notes of those that straddle."""
    mets = [m for m, _ in parts]
    met = None if None in mets else all(mets)
    if False in mets:
        met = False
    return met, "; ".join(n for _, n in parts if n)


def _syscalls(res: dict[str, Any], name: str) -> float | None:
    """Syscalls per ping from the strace profile (full runs only)."""
    return res.get("profile", {}).get(name, {}).get("syscalls", {}).get("per_op")


def _untraced_note(res: dict[str, Any], name: str) -> str:
    """The unslowed count beside strace's, which the goal was set with."""
    u = res.get("profile", {}).get(name, {}).get("syscalls", {}).get("per_op_untraced")
    return "" if u is None else f" under strace ({u:.2f} counted unslowed by perf; see the profiles)"


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    g = []
    met, m, note = _ratio_goal(res, "c-driver/floor p50", 1.3, True)
    g.append(method.goal("C driver ping p50", "≤ 1.3× the bare pipe", m, met, note))
    busy = rows.get("busy", {}).get("series")
    for name, lang, p50_key, speedup, cpu_key, cpu_limit, sys_limit in BINDING_GOALS:
        sdk = "`ClientSession.send_ping`" if lang == "Python" else "TS `client.ping`"
        met, m, note = _ratio_goal(res, p50_key, speedup, False)
        m = f"{m} faster{_mode(res, name)}"
        if name == "node-api":
            kept = None
            if busy:
                kept = all(busy[k]["answered_during"]["median"] == busy[k]["sent_during"]["median"]
                           for k in ("node-api", "ts-sdk-mcpping") if k in busy)
                m += "; answered while blocked: " + ("all" if kept else "**not all**")
            else:
                m += "; answer-while-blocked not measured in this run"
            met, _ = _both([(met, ""), (kept, "")])
        g.append(method.goal(f"{lang} `peer.ping` p50", f"≥ {speedup:g}× faster than {sdk}",
                             m, met, note))
        met, m, note = _ratio_goal(res, cpu_key, cpu_limit, True)
        g.append(method.goal(f"{lang} CPU per ping", f"≤ {cpu_limit:g}× the SDK's", m, met, note))
        csw = res["series"].get(name, {}).get("csw_per_op", {}).get("iqm")
        sysc = _syscalls(res, name)
        met, _ = _both([(None if csw is None else csw <= CSW_PER_PING, ""),
                        (None if sysc is None else sysc <= sys_limit, "")])
        m = (f"{'not measured' if csw is None else f'{csw:.2f}'} context switches, "
             f"{'not profiled' if sysc is None else f'{sysc:.2f}'} syscalls per ping"
             f"{_untraced_note(res, name)}")
        g.append(method.goal(f"{lang} client cost per ping",
                             f"≤ {CSW_PER_PING:g} context switches and ≤ {sys_limit:g} syscalls",
                             m, met))
    return g


def explain(ctx: Any, res: dict[str, Any], goals_: list[dict[str, Any]]) -> dict[str, Any]:
    """Where a round trip goes, for each series: syscalls per ping (strace)
    and the CPU profile (perf cpu-clock) of one block of about 0.5 s."""
    out: dict[str, Any] = {}
    sp = specs(ctx)
    for name in LABELS:
        per_op = res["series"][name]["wall_us_per_op"]["iqm"] or 100.0
        cmd = {"n": max(200, int(0.5e6 / per_op))}
        argv, env = sp[name]
        ctx.log(f"profile: {name}")
        out[name] = {"syscalls": _try(profiles.syscall_counts, name, argv, cmd, ctx.root, env)}
        if ctx.perf["sampling"]:
            out[name]["perf"] = _try(profiles.perf_profile, name, argv, cmd, env, FOCUS)
        if argv[0] == ctx.py:
            out[name]["python"] = _try(profiles.py_profile, name, argv, cmd, ctx.root, env)
    return out


def _try(fn: Any, *args: Any) -> dict[str, Any]:
    try:
        return fn(*args)
    except Exception as e:  # a profile that fails must not lose the row
        return {"error": str(e).strip().splitlines()[0][:300]}


def render(res: dict[str, Any]) -> list[str]:
    L = [f"One ping in flight. {res['rounds']} rounds{report.passes(res)} after a warm-up; "
         "each block about "
         f"{res['target_s'] * 1000:.0f} ms of pings (block sizes: "
         + ", ".join(f"{LABELS[k].split(' (')[0]} {c['n']}" for k, c in res["commands"].items())
         + "). Latency is the wall time around one ping as the caller sees it (C: `uv_hrtime` "
         "around the write and the pong; Python and Node: around the awaited call). *native* "
         "is the RTT mcpping itself reports, timed in C on its I/O thread. The floor writes the "
         "same ping bytes over a bare libuv pipe and reads one line back, parsing nothing.", ""]
    L += report.series_table(LABELS, res["series"], [
        ("p50_us", "p50 µs", 1), ("p99_us", "p99 µs", 1), ("native_p50_us", "native p50 µs", 1),
        ("rate", "pings/s", 0), ("cpu_us_per_op", "CPU µs/ping", 1),
        ("csw_per_op", "csw/ping", 2)])
    L += report.ratio_table(res["ratios"])
    if res.get("chart"):
        L += [f"![Latency CDF of every series, all blocks pooled]({res['chart']})", ""]
    prof = res.get("profile")
    if prof:
        L += ["### Where a round trip goes", "",
              "Profiles of one block of about 0.5 s per series, each in a fresh worker after a "
              "warm-up block (so they perturb no figure above): syscalls per ping from "
              "`strace -f -c` over every thread of the worker, and perf's cpu-clock samples "
              "of the client process (software clock sampling; see *perf* above). strace "
              "stops every thread at every call, so a block runs several times slower under "
              "it: whatever runs by the clock (mcpping's watchdog looks every 10 ms while the "
              "host turns) weighs several times more per ping, and a pong is always waiting "
              "by the time the loop polls. The count beside it, from the kernel's "
              "`raw_syscalls` tracepoint over a separate unslowed block, is the cost at full "
              "speed: there every Node program polls twice when it would block (libuv's "
              "zero-timeout poll, which Node's idle-time metrics turn on), the TS SDK too.", ""]
        for name, p in prof.items():
            L.append(report.syscall_line(p.get("syscalls"), LABELS[name], "ping"))
        L.append("")
        for name, p in prof.items():
            if p.get("perf"):
                L += report.perf_lines(p["perf"], LABELS[name])
        L.append("")
        py = [(n, p["python"]) for n, p in prof.items() if p.get("python", {}).get("funcs")]
        if py:
            L += ["Python functions by their own time (cProfile over a separate worker run of "
                  "two blocks; the profiler inflates absolute times, the shares are what "
                  "counts):", ""]
            L += [f"- {LABELS[n]}: " + "; ".join(f"`{f}` {pc:.0f}%" for f, pc in p["funcs"])
                  for n, p in py]
            L.append("")
        L += driver_story(res)
        L += handoff_story(res, "node-api", "ts-sdk", "Node", "JavaScript thread")
        L += handoff_story(res, "py-api", "py-sdk", "Python", "asyncio loop's thread")
    return L


def driver_story(res: dict[str, Any]) -> list[str]:
    """The C driver against the floor, from this run's own figures."""
    s, prof = res["series"], res.get("profile", {})
    if "c-driver" not in s or "floor" not in s:
        return []
    d, f = s["c-driver"], s["floor"]
    text = (f"**The C driver against the bare pipe.** {d['p50_us']['median']:.1f} µs against "
            f"{f['p50_us']['median']:.1f} µs at p50, {d['cpu_us_per_op']['median']:.1f} against "
            f"{f['cpu_us_per_op']['median']:.1f} µs of CPU per ping")
    sd, sf = (prof.get(k, {}).get("syscalls", {}) for k in ("c-driver", "floor"))
    if sd.get("per_op") and sf.get("per_op"):
        text += f", {sd['per_op']:.1f} syscalls per ping against {sf['per_op']:.1f}"
    text += (f", {d['csw_per_op']['median']:.2f} context switches per ping against "
             f"{f['csw_per_op']['median']:.2f}.")
    pd = prof.get("c-driver", {}).get("perf", {})
    if pd.get("dso"):
        ours = [(n, pc) for n, pc in pd["dso"] if "kernel" not in n and "libc" not in n
                and "vdso" not in n and "responder" not in n]
        text += (" What the driver adds is user-space work (of its samples: "
                 + ", ".join(f"{n} {pc:.0f}%" for n, pc in ours) + "; the rest is the kernel "
                 "and libc, as for the floor).")
    return [text, ""]


def cpu_split(perf: dict[str, Any]) -> dict[str, float]:
    """A perf profile's samples grouped: kernel, the language runtime
    (interpreter or V8, JIT code included), mcpping's native module, the rest."""
    out = {"kernel": 0.0, "runtime": 0.0, "mcpping": 0.0, "other": 0.0}
    for name, pc in perf.get("dso", []):
        if "kernel" in name:
            out["kernel"] += pc
        elif name == "node" or name.startswith("[JIT]") or name.startswith("libpython"):
            out["runtime"] += pc
        elif name.startswith("mcpping") or name.startswith("_native"):
            out["mcpping"] += pc
        else:
            out["other"] += pc
    return out


def handoff_story(res: dict[str, Any], api: str, sdk: str, lang: str, loop: str) -> list[str]:
    """A binding's round trip, decomposed from this run's own figures."""
    s = res["series"]
    if api not in s or sdk not in s or not s[api].get("native_p50_us"):
        return []
    wall = s[api]["p50_us"]["iqm"]
    native = s[api]["native_p50_us"]["iqm"]
    ts = s[sdk]["p50_us"]["iqm"]
    floor = s.get("floor", {}).get("p50_us", {}).get("iqm")
    runtime = "V8 and Node's runtime" if lang == "Node" else "the interpreter"
    hosted = (res.get("runtime_modes", {}).get(api) or [None])[0] == "host"
    if hosted:
        between = (f"spent on that same thread around it: waking the {loop}, "
                   "the read of the connection's descriptor (the host's loop watches it "
                   f"itself), the engine, and the {lang} code that turns the pong into the "
                   "caller's result (host mode: no thread hand-off)")
    else:
        between = ("spent between the caller and the I/O thread: handing the ping over (a "
                   f"wake-up of the I/O thread), waking the {loop} with the pong, and the "
                   f"{lang} code that turns the pong into the caller's result")
    text = (f"**Where a {lang} round trip spends its time.** A caller of mcpping's "
            f"`peer.ping()` waits {wall:.1f} µs (p50). {native:.0f} µs of it is the round trip "
            "the engine timed itself (write, the responder, the read"
            + (f"; the bare pipe takes {floor:.1f} µs" if floor else "") + "). The other "
            f"{wall - native:.1f} µs is {between}. The SDK does all of "
            f"it on one thread: {ts:.1f} µs. CPU per ping: {s[api]['cpu_us_per_op']['median']:.1f} "
            f"µs against the SDK's {s[sdk]['cpu_us_per_op']['median']:.1f}.")
    prof = res.get("profile", {})
    sa, ss = (prof.get(k, {}).get("syscalls", {}) for k in (api, sdk))
    if sa.get("calls") and ss.get("calls"):
        ca, cs = dict(sa["calls"]), dict(ss["calls"])
        text += (f" Per ping, mcpping's {lang} client makes {sa['per_op']:.1f} syscalls against "
                 f"the SDK's {ss['per_op']:.1f} (write {ca.get('write', 0):.1f} vs "
                 f"{cs.get('write', 0):.1f}, read {ca.get('read', 0):.1f} vs "
                 f"{cs.get('read', 0):.1f}"
                 + ("; the host's loop watches the connection's descriptor and reads it "
                    "itself, with no loop of mcpping's own in between" if hosted else
                    ": each hand-off is a write on one side and a wake-up and a read on the "
                    "other")
                 + f") and {s[api]['csw_per_op']['median']:.2f} context "
                 f"switches against {s[sdk]['csw_per_op']['median']:.2f}.")
    pa, ps = (prof.get(k, {}).get("perf", {}) for k in (api, sdk))
    if pa.get("dso") and ps.get("dso"):
        xa, xs = cpu_split(pa), cpu_split(ps)
        text += (f" Of mcpping's CPU samples {xa['kernel']:.0f}% are in the kernel, "
                 f"{xa['runtime']:.0f}% in {runtime}, {xa['mcpping']:.0f}% in mcpping's native "
                 f"module and {xa['other']:.0f}% in libc, libuv and the rest; of the SDK's, "
                 f"{xs['kernel']:.0f}% kernel, {xs['runtime']:.0f}% {runtime}.")
        setters = dict(pa.get("focus", [])).get("napi_set_named_property")
        if setters:
            slow = [sym.split("::")[-1].split("<")[0] for sym, _, _ in pa.get("sym", [])
                    if re.search(r"LookupIterator|MigrateToMap|Internalize|SetObjectProperty",
                                 sym)]
            text += (f" {setters:.0f}% of mcpping's samples fall in `napi_set_named_property` "
                     "(callees included): the addon builds each event's JavaScript object one "
                     "named property at a time from C++")
            text += (", which V8 serves through its runtime's slow paths (" +
                     ", ".join(f"`{x}`" for x in dict.fromkeys(slow)) + " among the top symbols)."
                     if slow else ".")
    return [text, ""]


# ------------------------------------------------------------------ chart

def chart(pooled: dict[str, list[float]], series: dict[str, Any], path: str) -> str | None:
    """Writes the latency CDF; returns its file name, or None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 6), dpi=110)
    styles = {"floor": ("black", "-", 2.2), "c-driver": ("tab:blue", "-", 1.8),
              "py-api": ("tab:green", "-", 1.8), "py-sdk": ("tab:green", "--", 1.5),
              "node-api": ("tab:red", "-", 1.8), "ts-sdk": ("tab:red", "--", 1.5)}
    for name, xs in pooled.items():
        if not xs:
            continue
        xs = sorted(xs)
        k = min(len(xs), 4000)
        idx = [min(len(xs) - 1, int(i * len(xs) / k)) for i in range(k)] + [len(xs) - 1]
        color, ls, lw = styles.get(name, ("gray", "-", 1))
        p50 = series[name]["p50_us"]["iqm"]
        ax.plot([xs[i] for i in idx], [(i + 1) / len(xs) for i in idx], color=color,
                linestyle=ls, linewidth=lw, label=f"{LABELS[name]} (p50 {p50:.1f} µs)")
    ax.set_xscale("log")
    ax.set_xlabel("ping round-trip time (µs, log scale)")
    ax.set_ylabel("fraction of pings")
    ax.set_ylim(0, 1.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Sequential ping RTT over stdio, same responder, all blocks pooled")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return os.path.basename(path)
