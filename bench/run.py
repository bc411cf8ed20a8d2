#!/usr/bin/env python3
"""mcpping benchmarks, side by side with the official SDKs and a raw pipe.

    python3 bench/run.py [--quick] [--rows 1,2,3,4,5,6,e] [--reps R]

`make bench` builds what this needs and runs it. Every row runs real
subprocesses over stdio pipes against build/responder (or, for row 3,
bench/rows/ping_server.py). Rows 1, 2, 3 and 6 run each measurement R times,
interleaved, and report medians over the runs; ratios are taken against the
baseline of the same run (then the median of those ratios). Writes
bench/RESULTS.md, bench/latency_cdf.png and the raw figures in
bench/out/results.json.

Rows ("e" = the per-language benchmarks in bench/engine, bench/python and
bench/node, reported as they print them):
  1 sequential ping RTT      2 pipelined throughput (64 in flight)
  3 server pings while the client's loop is blocked
  4 idle keepalive cost      5 time to notice a frozen peer
  6 forwarding a 1 MiB and a 16 MiB tool result
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROWS = os.path.join(HERE, "rows")
BUILD = os.path.join(ROOT, "build")
RESPONDER = os.path.join(BUILD, "responder")
C_PING = os.path.join(BUILD, "bench-c-ping")
IDLE_COST = os.path.join(BUILD, "bench-idle-cost")
PY = sys.executable
NODE = shutil.which("node") or "node"

MIB = 1 << 20


def log(*a: Any) -> None:
    print("[bench]", *a, file=sys.stderr, flush=True)


# ------------------------------------------------------------ subprocesses

def run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    """Runs cmd in its own session; kills the whole session on timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=ROOT, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_session(p)
        out, err = p.communicate()
        raise RuntimeError(f"timed out after {timeout:g} s: {' '.join(cmd)}\n{err[-2000:]}")
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{err[-2000:]}")
    return out


def kill_session(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p.wait()


def run_json(cmd: list[str], timeout: float) -> Any:
    out = run(cmd, timeout)
    return json.loads(out.strip().splitlines()[-1])


def cmd_output(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              cwd=ROOT).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


# ------------------------------------------------------------------ stats

def pct(sorted_xs: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_xs:
        return float("nan")
    k = max(0, min(len(sorted_xs) - 1, int(-(-p * len(sorted_xs) // 100)) - 1))
    return sorted_xs[k]


def med(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def fmt_ratio(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}×" if x < 0.1 else f"{x:.2f}×"


def goal(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**not met**")


# ------------------------------------------------------------- versions

def versions() -> dict[str, str]:
    v: dict[str, str] = {}
    v["mcpping (Python)"] = cmd_output([PY, "-c", "import mcpping; print(mcpping.__version__)"])
    v["mcpping (Node)"] = cmd_output([NODE, "-e", "console.log(require('./').version)"])
    v["Python"] = platform.python_version()
    v["mcp (official Python SDK)"] = cmd_output(
        [PY, "-c", "import importlib.metadata as m; print(m.version('mcp'))"])
    v["Node.js"] = cmd_output([NODE, "--version"])
    try:
        with open(os.path.join(ROOT, "node_modules/@modelcontextprotocol/sdk/package.json")) as f:
            v["@modelcontextprotocol/sdk"] = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        v["@modelcontextprotocol/sdk"] = "not installed"
    v["libuv (system, C driver and Python)"] = cmd_output(["pkg-config", "--modversion", "libuv"])
    v["libuv (Node's own, Node addon)"] = cmd_output([NODE, "-p", "process.versions.uv"])
    v["cJSON"] = cmd_output(["pkg-config", "--modversion", "libcjson"])
    v["gcc"] = cmd_output(["gcc", "-dumpfullversion"])
    try:
        import matplotlib
        v["matplotlib"] = matplotlib.__version__
    except ImportError:
        v["matplotlib"] = "not installed"
    return v


def cpu_times() -> list[int]:
    """The aggregate line of /proc/stat: user nice system idle iowait irq softirq steal."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return []


def machine() -> dict[str, str]:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": str(os.cpu_count()), "cpu": cpu or platform.processor(),
            "kernel": f"{platform.system()} {platform.release()}",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


# ------------------------------------------------------------ rows 1 & 2

def cli_python() -> list[str]:
    exe = shutil.which("mcpping")
    return [exe] if exe else [PY, "-m", "mcpping"]


# name -> (label, language, builder(n, depth) -> argv, parse kind)
def ping_series() -> dict[str, tuple[str, str]]:
    return {
        "floor": ("bare libuv pipe (floor)", "C"),
        "c-driver": ("mcpping C driver", "C"),
        "py-api": ("mcpping Python API", "Python"),
        "py-sdk": ("official Python SDK send_ping()", "Python"),
        "node-api": ("mcpping Node API", "Node"),
        "ts-sdk": ("official TS SDK client.ping()", "Node"),
        "cli-py": ("mcpping CLI (Python) -i 0", "CLI"),
        "cli-node": ("mcpping CLI (Node) -i 0", "CLI"),
    }


def ping_cmd(name: str, n: int, depth: int) -> list[str]:
    r = RESPONDER
    if name == "floor":
        return [C_PING, "floor", str(n), str(depth), r]
    if name == "c-driver":
        return [C_PING, "driver", str(n), str(depth), r]
    if name in ("py-api", "py-sdk"):
        return [PY, os.path.join(ROWS, "py_ping.py"), name[3:], str(n), str(depth), r]
    if name in ("node-api", "ts-sdk"):
        return [NODE, os.path.join(ROWS, "node_ping.js"), "api" if name == "node-api" else "sdk",
                str(n), str(depth), r]
    if name == "cli-py":
        return [*cli_python(), "-c", str(n), "-i", "0", "--json", "--", r]
    if name == "cli-node":
        return [NODE, os.path.join(ROOT, "node", "cli.js"), "-c", str(n), "-i", "0", "--json",
                "--", r]
    raise KeyError(name)


def run_ping(name: str, n: int, depth: int) -> dict[str, Any]:
    if name.startswith("cli-"):
        out = run(ping_cmd(name, n, depth), 300)
        samples, summary = [], {}
        for line in out.splitlines():
            ev = json.loads(line)
            if ev.get("event") == "pong":
                samples.append(ev["rtt_ms"] * 1000)
            elif ev.get("event") == "summary":
                summary = ev
        if summary.get("received") != n:
            raise RuntimeError(f"{name}: {summary}")
        return {"n": n, "depth": 1, "elapsed_s": summary["time_ms"] / 1000,
                "rate": n / (summary["time_ms"] / 1000), "samples_us": samples}
    return run_json(ping_cmd(name, n, depth), 300)


def summarize_samples(samples: list[float]) -> dict[str, float]:
    xs = sorted(samples)
    return {"p50": pct(xs, 50), "p90": pct(xs, 90), "p99": pct(xs, 99), "max": xs[-1]}


def row1(reps: int, quick: bool) -> dict[str, Any]:
    """Each series runs right after its own floor run, so its ratio compares
    two measurements taken seconds apart under the same machine load."""
    n_fast = 2000 if quick else 10000
    n = {"floor": n_fast // 2, "c-driver": n_fast, "py-api": n_fast // 2,
         "py-sdk": n_fast // 4, "node-api": n_fast // 2, "ts-sdk": n_fast // 2,
         "cli-py": n_fast // 2, "cli-node": n_fast // 2}
    names = list(ping_series())
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    floors: dict[str, list[dict[str, Any]]] = {k: [] for k in names if k != "floor"}
    samples: dict[str, list[float]] = {k: [] for k in names}

    def one(name: str) -> dict[str, Any]:
        r = run_ping(name, n[name], 1)
        st = summarize_samples(r["samples_us"])
        st["rate"] = r["rate"]
        samples[name].extend(r["samples_us"])
        return st

    for rep in range(reps):
        log(f"row 1: run {rep + 1}/{reps}")
        for name in names[1:]:
            f = one("floor")
            runs["floor"].append(f)
            floors[name].append(f)
            runs[name].append(one(name))
    out: dict[str, Any] = {"n": n, "reps": reps, "series": {}}
    for name in names:
        rs = runs[name]
        fl = floors.get(name, rs)
        entry = {k: med([r[k] for r in rs]) for k in ("p50", "p90", "p99", "max", "rate")}
        entry["p50_vs_floor"] = med([r["p50"] / f["p50"] for r, f in zip(rs, fl)])
        entry["p99_vs_floor"] = med([r["p99"] / f["p99"] for r, f in zip(rs, fl)])
        entry["rate_vs_floor"] = med([r["rate"] / f["rate"] for r, f in zip(rs, fl)])
        entry["runs"] = rs
        out["series"][name] = entry
    # mcpping vs its own SDK: the two runs of the same rep, back to back-ish.
    for api, sdk in (("py-api", "py-sdk"), ("node-api", "ts-sdk")):
        out["series"][api]["sdk_p50_speedup"] = med(
            [s["p50"] / a["p50"] for a, s in zip(runs[api], runs[sdk])])
        out["series"][api]["sdk_rate_speedup"] = med(
            [a["rate"] / s["rate"] for a, s in zip(runs[api], runs[sdk])])
    out["_samples"] = samples
    return out


def row2(reps: int, quick: bool) -> dict[str, Any]:
    """As row 1: each series right after its own floor run."""
    scale = 1 if quick else 4
    n = {"floor": 50000 * scale, "c-driver": 50000 * scale, "py-api": 5000 * scale,
         "py-sdk": 2000 * scale, "node-api": 5000 * scale, "ts-sdk": 5000 * scale}
    names = list(n)
    runs: dict[str, list[float]] = {k: [] for k in names}
    floors: dict[str, list[float]] = {k: [] for k in names[1:]}
    for rep in range(reps):
        log(f"row 2: run {rep + 1}/{reps}")
        for name in names[1:]:
            f = run_json(ping_cmd("floor", n["floor"], 64), 300)["rate"]
            runs["floor"].append(f)
            floors[name].append(f)
            runs[name].append(run_json(ping_cmd(name, n[name], 64), 300)["rate"])
    out: dict[str, Any] = {"n": n, "depth": 64, "reps": reps, "series": {}}
    for name in names:
        fl = floors.get(name, runs[name])
        out["series"][name] = {
            "rate": med(runs[name]),
            "vs_floor": med([r / f for r, f in zip(runs[name], fl)]),
            "runs": runs[name]}
    for api, sdk in (("py-api", "py-sdk"), ("node-api", "ts-sdk")):
        out["series"][api]["vs_sdk"] = med([a / s for a, s in zip(runs[api], runs[sdk])])
    return out


# ------------------------------------------------------------------ row 3

BUSY_SERIES = {
    "py-api": ("mcpping Python API (`mcpping.connect`)", "py", "api"),
    "py-sdk-mcpping": ("official Python SDK session over `mcpping.sdk.stdio_client`", "py",
                       "sdk-mcpping"),
    "py-sdk": ("official Python SDK (`ClientSession`, its stdio_client)", "py", "sdk"),
    "node-api": ("mcpping Node API (`mcpping.connect`)", "node", "api"),
    "ts-sdk-mcpping": ("official TS SDK `Client` over `mcpping.StdioClientTransport`", "node",
                       "sdk-mcpping"),
    "ts-sdk": ("official TS SDK (`Client`, its StdioClientTransport)", "node", "sdk"),
}


def busy_once(lang: str, mode: str, block: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcpping-bench-") as tmp:
        logf = os.path.join(tmp, "server.log")
        pre, post = 0.5, 1.5
        if lang == "py":
            cmd = [PY, os.path.join(ROWS, "busy_client.py"), mode, logf, str(pre), str(post),
                   str(block)]
        else:
            cmd = [NODE, os.path.join(ROWS, "busy_client.js"), mode, logf, str(pre), str(post),
                   str(block)]
        env = dict(os.environ, PYTHON=PY)
        out = run(cmd, 60, env=env)
        win = json.loads(out.strip().splitlines()[-1])
        sent: dict[int, int] = {}
        answered: dict[int, int] = {}
        with open(logf) as f:
            for line in f:
                kind, seq, t = line.split()
                (sent if kind == "S" else answered)[int(seq)] = int(t)
    b0, b1 = win["block_start_ns"], win["block_end_ns"]
    # Pings sent in the last 50 ms of the block could be answered just after it
    # ends even when answered at once: leave them out of the count.
    during = [q for q, t in sent.items() if b0 <= t < b1 - 50_000_000]
    in_block = [q for q in during if q in answered and answered[q] < b1]
    lat = sorted((answered[q] - sent[q]) / 1e6 for q in during if q in answered)
    return {"block_s": (b1 - b0) / 1e9, "sent_during": len(during),
            "answered_during": len(in_block),
            "answered_eventually": sum(1 for q in during if q in answered),
            "lat_p50_ms": pct(lat, 50) if lat else None, "lat_max_ms": lat[-1] if lat else None,
            "sent_total": len(sent), "answered_total": len(answered)}


def row3(reps: int, quick: bool) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in BUSY_SERIES}
    for rep in range(reps):
        log(f"row 3: run {rep + 1}/{reps}")
        for name, (_, lang, mode) in BUSY_SERIES.items():
            runs[name].append(busy_once(lang, mode, 2.0))
    out: dict[str, Any] = {"reps": reps, "series": {}}
    for name, rs in runs.items():
        out["series"][name] = {k: med([r[k] for r in rs]) for k in rs[0]}
        out["series"][name]["runs"] = rs
    return out


# ------------------------------------------------------------------ row 4

def row4(quick: bool) -> dict[str, Any]:
    duration = 10 if quick else 60
    out: dict[str, Any] = {"duration_s": duration, "series": {}}
    for n in (1, 100, 1000):
        log(f"row 4: {n} connections for {duration} s")
        out["series"][str(n)] = run_json([IDLE_COST, str(n), str(duration), RESPONDER],
                                         duration + 120)
    return out


# ------------------------------------------------------------------ row 5

FROZEN_SERIES = {
    "py-api": ("mcpping Python API", "py", "api", "interval 1 s, timeout 1 s, failures 2"),
    "node-api": ("mcpping Node API", "node", "api", "interval 1 s, timeout 1 s, failures 2"),
    "py-sdk": ("official Python SDK", "py", "sdk", "defaults"),
    "ts-sdk": ("official TS SDK", "node", "sdk", "defaults"),
}


def pid_alive_responder(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0]) == b"responder"
    except OSError:
        return False


def row5(quick: bool) -> dict[str, Any]:
    limit = 15.0 if quick else 120.0
    log(f"row 5: SIGSTOP the server; waiting up to {limit:g} s (the four clients run at once)")
    tmp = tempfile.mkdtemp(prefix="mcpping-bench-")
    procs = {}
    pidfiles = {}
    try:
        for name, (_, lang, mode, _) in FROZEN_SERIES.items():
            pidfiles[name] = os.path.join(tmp, f"{name}.pid")
            script = os.path.join(ROWS, "frozen.py" if lang == "py" else "frozen.js")
            cmd = [PY if lang == "py" else NODE, script, mode, RESPONDER, pidfiles[name],
                   str(limit)]
            procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, start_new_session=True, cwd=ROOT)
        out: dict[str, Any] = {"limit_s": limit, "series": {}}
        deadline = time.monotonic() + limit + 60
        for name, p in procs.items():
            try:
                so, se = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
                res = json.loads(so.strip().splitlines()[-1]) if p.returncode == 0 else {
                    "noticed_s": None, "how": f"client failed: {se.strip()[-300:]}"}
            except subprocess.TimeoutExpired:
                kill_session(p)
                res = {"noticed_s": None, "how": "client hung; killed"}
            except (ValueError, IndexError):
                res = {"noticed_s": None, "how": "client printed no result"}
            out["series"][name] = res
        return out
    finally:
        for p in procs.values():
            if p.poll() is None:
                kill_session(p)
        # Whatever happened, no stopped server survives the row.
        for f in pidfiles.values():
            try:
                with open(f) as fh:
                    pid = int(fh.read().strip())
            except (OSError, ValueError):
                continue
            if pid_alive_responder(pid):
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ row 6

FWD_SERIES = {
    "py-mcpping": ("Python: `mcpping.sdk.stdio_client`", "py", "mcpping"),
    "py-sdk": ("Python: `mcp.client.stdio.stdio_client`", "py", "sdk"),
    "node-mcpping": ("Node: `mcpping.StdioClientTransport`", "node", "mcpping"),
    "ts-sdk": ("Node: SDK `StdioClientTransport` (maxBufferSize 64 MiB)", "node", "sdk"),
}


def row6(reps: int, quick: bool) -> dict[str, Any]:
    k = 2 if quick else 5
    sizes = [str(MIB), str(16 * MIB)]
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in FWD_SERIES}
    for rep in range(reps):
        log(f"row 6: run {rep + 1}/{reps}")
        for name, (_, lang, mode) in FWD_SERIES.items():
            script = os.path.join(ROWS, "forwarding.py" if lang == "py" else "forwarding.js")
            res = run_json([PY if lang == "py" else NODE, script, mode, RESPONDER, str(k), *sizes],
                           600)
            runs[name].append({s: statistics.median(v) for s, v in res.items()})
    out: dict[str, Any] = {"k": k, "reps": reps, "series": {}}
    for name, rs in runs.items():
        out["series"][name] = {s: med([r[s] for r in rs]) for s in sizes}
        out["series"][name]["runs"] = rs
    for api, sdk in (("py-mcpping", "py-sdk"), ("node-mcpping", "ts-sdk")):
        out["series"][api]["vs_sdk"] = {
            s: med([a[s] / b[s] for a, b in zip(runs[api], runs[sdk])]) for s in sizes}
    # The TS SDK's own default refuses lines over 10 MiB: check it as shipped.
    try:
        run_json([NODE, os.path.join(ROWS, "forwarding.js"), "sdk-default", RESPONDER, "1",
                  str(16 * MIB)], 120)
        out["ts_sdk_default_16mib"] = "ok"
    except RuntimeError as e:
        msg = [ln for ln in str(e).splitlines() if "Error" in ln or "error" in ln]
        out["ts_sdk_default_16mib"] = "failed: " + (msg[0].strip() if msg else "error")
    return out


# ------------------------------------------------- per-language benchmarks

def extras() -> dict[str, Any]:
    out: dict[str, Any] = {}
    cands = {
        "bench/engine (build/bench-engine --json)": [os.path.join(BUILD, "bench-engine"), "--json"],
        "bench/python (bench_ping.py --json)": [PY, os.path.join(HERE, "python", "bench_ping.py"),
                                                "--json"],
        "bench/node (bench_ping.js --json)": [NODE, os.path.join(HERE, "node", "bench_ping.js"),
                                              "--json"],
    }
    for label, cmd in cands.items():
        if not os.path.exists(cmd[0] if cmd[0] != PY and cmd[0] != NODE else cmd[1]):
            out[label] = {"_missing": True}
            continue
        log(f"extras: {label}")
        try:
            out[label] = run_json(cmd, 300)
        except (RuntimeError, ValueError, IndexError) as e:
            out[label] = {"_error": str(e).splitlines()[0]}
    return out


def flatten(d: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(d, dict):
        items = []
        for k, v in d.items():
            items += flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return items
    if isinstance(d, list):
        if len(d) > 8:
            return [(prefix, f"[{len(d)} values]")]
        return [(prefix, json.dumps(d))]
    return [(prefix, d)]


# ------------------------------------------------------------------ chart

def chart(r1: dict[str, Any], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ping_series()
    fig, ax = plt.subplots(figsize=(10, 6), dpi=110)
    styles = {"floor": ("black", "-", 2.2), "c-driver": ("tab:blue", "-", 1.8),
              "py-api": ("tab:green", "-", 1.8), "py-sdk": ("tab:green", "--", 1.5),
              "node-api": ("tab:red", "-", 1.8), "ts-sdk": ("tab:red", "--", 1.5),
              "cli-py": ("tab:purple", ":", 1.5), "cli-node": ("tab:orange", ":", 1.5)}
    for name, xs in r1["_samples"].items():
        if not xs:
            continue
        xs = sorted(xs)
        k = min(len(xs), 4000)
        idx = [min(len(xs) - 1, int(i * len(xs) / k)) for i in range(k)] + [len(xs) - 1]
        ys = [(i + 1) / len(xs) for i in idx]
        xs = [xs[i] for i in idx]
        color, ls, lw = styles.get(name, ("gray", "-", 1))
        s = r1["series"][name]
        ax.plot(xs, ys, color=color, linestyle=ls, linewidth=lw,
                label=f"{labels[name][0]} (p50 {s['p50']:.1f} µs)")
    ax.set_xscale("log")
    ax.set_xlabel("ping round-trip time (µs, log scale)")
    ax.set_ylabel("fraction of pings")
    ax.set_ylim(0, 1.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"Sequential ping RTT over stdio, same responder, same run "
                 f"({r1['reps']} runs pooled)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ------------------------------------------------------------------ report

def report(res: dict[str, Any]) -> str:
    L: list[str] = []
    a = L.append
    m, v = res["machine"], res["versions"]
    a("# mcpping benchmark results")
    a("")
    a(f"Generated by `make bench` (`python3 bench/run.py{' --quick' if res['quick'] else ''}`) "
      f"on {m['date']}. Do not edit by hand.")
    a("")
    a("Every figure below comes from one run of the command on one machine: real "
      "subprocesses talking JSON-RPC over stdio pipes to the same C responder "
      "(`tests/peers/responder.c`, which answers `ping`, `initialize`, `tools/list` "
      "and `tools/call`). The machine is shared and noisy, so repeated measurements are "
      "interleaved and reported as medians; ratios are computed against the baseline of "
      "the same run and then the median is taken. Absolute times are only indicative.")
    a("")
    a("## Machine and versions")
    a("")
    a(f"- machine: {m['nproc']} CPUs, {m['cpu']}, {m['kernel']}")
    if "load_start" in res:
        a("- load average (1/5/15 min) at the start: "
          + " / ".join(f"{x:.2f}" for x in res["load_start"]) + "; at the end: "
          + " / ".join(f"{x:.2f}" for x in res.get("load_end", ())))
    if "cpu_share" in res:
        c = res["cpu_share"]
        a(f"- CPU time over the run (all CPUs, /proc/stat): {c['busy_pct']:.1f}% busy, "
          f"{c['steal_pct']:.1f}% stolen by the hypervisor")
    for k, val in v.items():
        a(f"- {k}: {val or 'unknown'}")
    a("")
    head = headline(res)
    if head:
        a("## Headline")
        a("")
        for h in head:
            a(f"- {h}")
        a("")

    labels = ping_series()
    if "row1" in res:
        r = res["row1"]
        s = r["series"]
        a("## 1. Sequential ping RTT")
        a("")
        a(f"One ping in flight, {r['reps']} interleaved runs, medians of the per-run "
          f"percentiles (µs). Pings per run: "
          + ", ".join(f"{labels[k][0]} {n}" for k, n in r["n"].items()) + ". "
          "RTT is the wall time around one ping as the caller sees it (C: `uv_hrtime` around "
          "the write and the pong; Python/Node: around the awaited call), except the CLI "
          "rows, which print the engine's own RTT (measured in C on the I/O thread). "
          "The floor writes the same ping bytes over a bare libuv pipe and reads one line "
          "back, parsing nothing. Each series runs right after a floor run of its own; "
          "its ratio is against that floor run (median over runs), and the floor row shows "
          "all floor runs.")
        a("")
        a("| series | p50 | p90 | p99 | max | pings/s | p50 vs floor | p99 vs floor |")
        a("|---|---:|---:|---:|---:|---:|---:|---:|")
        for k, e in s.items():
            d = "†" if k.startswith("cli-") else ""
            a(f"| {labels[k][0]} | {fmt(e['p50'])} | {fmt(e['p90'])} | {fmt(e['p99'])} | "
              f"{fmt(e['max'])} | {fmt(e['rate'])} | {fmt_ratio(e['p50_vs_floor'])}{d} | "
              f"{fmt_ratio(e['p99_vs_floor'])}{d} |")
        a("")
        fl = [x["p50"] for x in s["floor"]["runs"]]
        a(f"† The CLI prints the engine's RTT, timed in C on the I/O thread without the "
          f"host's event loop, so its ratios are not like for like with the rows above it. "
          f"The CLI's pings/s includes its own pacing between pings.")
        a("")
        a(f"The floor's p50 ranged from {min(fl):.1f} to {max(fl):.1f} µs over its "
          f"{len(fl)} runs in this session. On this virtual machine a sequential round trip "
          f"is dominated by waking a process whose CPU has gone idle, and that cost changes "
          f"from run to run with what else the host is doing; a series that keeps a CPU "
          f"busier between pings can even come in under the floor. That is why every ratio "
          f"is taken against the floor run made just before it; compare figures between "
          f"sessions with care.")
        a("")
        a("![Latency CDF of every row-1 series](latency_cdf.png)")
        a("")
        a("| goal | measured | |")
        a("|---|---|---|")
        c = s["c-driver"]["p50_vs_floor"]
        a(f"| C driver p50 ≤ 1.3× floor | {fmt_ratio(c)} | {goal(c <= 1.3)} |")
        for api, lang in (("py-api", "Python"), ("node-api", "Node")):
            x = s[api]["p50_vs_floor"]
            a(f"| {lang} API p50 ≤ 2× floor | {fmt_ratio(x)} | {goal(x <= 2.0)} |")
            sp = s[api]["sdk_p50_speedup"]
            a(f"| {lang} API p50 ≥ 5× faster than its official SDK (SDK p50 ÷ API p50) | "
              f"{sp:.2f} | {goal(sp >= 5.0)} |")
        a("")
        fast = min(fl)
        slow = [x for x in fl if x > 2.5 * fast]
        if slow:
            a(f"{len(slow)} of {len(fl)} floor runs ran in a slow mode (p50 more than 2.5× "
              f"the session's best, {fast:.1f} µs).")
            if s["floor"]["p50"] > 2.5 * fast:
                a("That was most of them. In that mode a round trip is dominated by the "
                  "wake-up cost that every series pays, which pulls the ratios above towards "
                  "1: read the ratio verdicts of this session as weak evidence.")
            a("")
        for api, sdk, lang in (("py-api", "py-sdk", "Python"), ("node-api", "ts-sdk", "Node")):
            target = s[sdk]["p50"] / 5
            best_floor = min(x["p50"] for x in s["floor"]["runs"])
            if target < best_floor:
                a(f"For {lang}, 5× faster than the official SDK's p50 ({s[sdk]['p50']:.1f} µs) "
                  f"means {target:.1f} µs, below the bare pipe's best p50 in this session "
                  f"({best_floor:.1f} µs): no client over this pipe could reach it here.")
                a("")

    if "row2" in res:
        r = res["row2"]
        a("## 2. Pipelined throughput (64 pings in flight)")
        a("")
        a(f"{r['reps']} interleaved runs, median pings/s; ratio against the floor run made "
          "just before each measurement (the floor writes each batch of ping lines in one write, as a pipelining "
          "client would). Pings per run: "
          + ", ".join(f"{labels[k][0]} {n}" for k, n in r["n"].items()) + ".")
        a("")
        a("| series | pings/s | vs floor | vs its official SDK | goal ≥ 0.5× floor |")
        a("|---|---:|---:|---:|---|")
        for k, e in r["series"].items():
            g = goal(e["vs_floor"] >= 0.5) if k in ("c-driver", "py-api", "node-api") else ""
            vs = fmt_ratio(e.get("vs_sdk")) if "vs_sdk" in e else ""
            a(f"| {labels[k][0]} | {fmt(e['rate'])} | {fmt_ratio(e['vs_floor'])} | {vs} | {g} |")
        a("")

    if "row3" in res:
        r = res["row3"]
        a("## 3. Server pings answered while the client is busy")
        a("")
        a("The server (`bench/rows/ping_server.py`) pings the client every 100 ms; the client "
          "blocks its event loop for 2 s (Python: `time.sleep(2)` inside an asyncio callback; "
          "Node: a busy loop). Measured from the server side on CLOCK_MONOTONIC: pings sent "
          "during the block (up to 50 ms before its end), how many were answered before the "
          "block ended, and the latency "
          f"of the pings sent during the block. Medians of {r['reps']} run(s).")
        a("")
        a("| client | sent during block | answered during block | answered eventually | "
          "latency p50 (ms) | latency max (ms) |")
        a("|---|---:|---:|---:|---:|---:|")
        for k, e in r["series"].items():
            a(f"| {BUSY_SERIES[k][0]} | {fmt(e['sent_during'], 0)} | "
              f"{fmt(e['answered_during'], 0)} | {fmt(e['answered_eventually'], 0)} | "
              f"{fmt(e['lat_p50_ms'], 2)} | {fmt(e['lat_max_ms'], 2)} |")
        a("")

    if "row4" in res:
        r = res["row4"]
        a("## 4. Idle keepalive cost")
        a("")
        a(f"`bench/rows/idle_cost.c`: one process runs N connections through mcpping's C "
          f"driver on one uv loop (what the runtime's I/O thread does) to N "
          f"`responder` processes, keepalive every 1 s (jitter 10%). After 2.5 s to "
          f"settle it measures {r['duration_s']} s: CPU seconds of the monitoring process "
          f"(getrusage, user + system), its RSS growth over the baseline taken before the "
          f"first spawn, and the bytes live in mcpping's allocator (counted by an injected "
          f"allocator).")
        a("")
        a("| connections | CPU s | CPU % of one core | RSS growth (KiB) | RSS bytes / conn | "
          "allocator bytes / conn | keepalive pongs/s | CPU µs per keepalive ping |")
        a("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n, e in r["series"].items():
            per = e["cpu_s"] * 1e6 / e["pongs"] if e["pongs"] else None
            a(f"| {n} | {e['cpu_s']:.3f} | {e['cpu_pct']:.2f}% | "
              f"{e['rss_end_kib'] - e['rss_base_kib']:,} | {fmt(e['rss_per_conn_bytes'])} | "
              f"{fmt(e['alloc_per_conn_bytes'])} | {fmt(e['pongs_per_s'])} | {fmt(per)} |")
        a("")
        idle = [n for n, e in r["series"].items() if e["pongs_per_s"] < 0.5 * int(n)]
        if idle:
            a(f"**Warning:** keepalive did not run as expected for N = {', '.join(idle)} "
              f"(far fewer than one pong per connection per second): those figures do not "
              f"measure keepalive.")
            a("")
        big = r["series"].get("1000")
        if big:
            a("| goal at 1000 connections | measured | |")
            a("|---|---|---|")
            a(f"| ≤ 1% of one core | {big['cpu_pct']:.2f}% | {goal(big['cpu_pct'] <= 1.0)} |")
            a(f"| ≤ 4 KiB RSS per connection | {fmt(big['rss_per_conn_bytes'])} B | "
              f"{goal(big['rss_per_conn_bytes'] <= 4096)} |")
            a("")
            a("The allocator figure counts what mcpping asked for (buffers included, "
              "touched or not); RSS counts the pages actually touched, plus libuv and libc "
              "overhead outside mcpping's allocator.")
            a("")

    if "row5" in res:
        r = res["row5"]
        a("## 5. Time to notice a frozen peer")
        a("")
        a(f"After the handshake the server gets SIGSTOP (its pipes stay open: nothing closes, "
          f"nothing errors). mcpping runs keepalive with interval 1 s, timeout 1 s, "
          f"failures 2 and is timed to its `stale` event; the official SDKs run with their "
          f"defaults and one ping in flight from the moment of the freeze, and are timed to "
          f"whatever surfaces first (the ping failing, an error or close callback). Waited up "
          f"to {r['limit_s']:g} s; the four clients run at the same time. The server is always "
          f"SIGCONTed and killed afterwards.")
        a("")
        a("| client | settings | noticed after | suspect after | how |")
        a("|---|---|---:|---:|---|")
        for k, e in r["series"].items():
            lab, _, _, sets = FROZEN_SERIES[k]
            t = e.get("noticed_s")
            when = f"{t:.2f} s" if t is not None else f"never (> {r['limit_s']:g} s)"
            sus = f"{e['suspect_s']:.2f} s" if e.get("suspect_s") is not None else ""
            a(f"| {lab} | {sets} | {when} | {sus} | {e.get('how', '')} |")
        a("")

    if "row6" in res:
        r = res["row6"]
        a("## 6. Forwarding a large tool result")
        a("")
        a(f"`tools/call` returning one text content of 1 MiB and 16 MiB from the same "
          f"responder, through the official SDK's client session; only the transport "
          f"differs. Median of {r['k']} calls per process (after one warm-up call), median "
          f"over {r['reps']} interleaved run(s); ratio = mcpping time / SDK transport time in "
          f"the same run (below 1 is faster).")
        a("")
        a("| transport | 1 MiB (ms) | 16 MiB (ms) | 1 MiB vs SDK | 16 MiB vs SDK |")
        a("|---|---:|---:|---:|---:|")
        s1, s16 = str(MIB), str(16 * MIB)
        for k, e in r["series"].items():
            vs = e.get("vs_sdk", {})
            a(f"| {FWD_SERIES[k][0]} | {fmt(e[s1] * 1000)} | {fmt(e[s16] * 1000)} | "
              f"{fmt_ratio(vs.get(s1)) if vs else ''} | {fmt_ratio(vs.get(s16)) if vs else ''} |")
        a("")
        a(f"The TS SDK's `StdioClientTransport` with its default settings and a 16 MiB "
          f"result: {r.get('ts_sdk_default_16mib')} (its read buffer defaults to 10 MiB, so "
          f"the row above raises `maxBufferSize` to 64 MiB to time it at all).")
        a("")

    if res.get("failed"):
        a("## Rows that failed in this run")
        a("")
        for name, err in res["failed"].items():
            a(f"- {name}:")
            a("")
            a("  ```")
            for ln in err.splitlines()[-12:]:
                a(f"  {ln}")
            a("  ```")
        a("")

    if "extras" in res:
        a("## Per-language benchmarks")
        a("")
        a("As printed (`--json`) by the benchmarks each package ships, run once in this "
          "same session.")
        a("")
        for label, d in res["extras"].items():
            a(f"### {label}")
            a("")
            if d.get("_missing"):
                a("Not present in this checkout.")
            elif d.get("_error"):
                a(f"Failed: `{d['_error']}`")
            else:
                a("| figure | value |")
                a("|---|---|")
                for k, val in flatten(d):
                    a(f"| {k} | {val} |")
            a("")
    return "\n".join(L).rstrip() + "\n"


def headline(res: dict[str, Any]) -> list[str]:
    h = []
    if "row1" in res:
        s = res["row1"]["series"]
        h.append(f"Sequential ping p50: C driver {fmt_ratio(s['c-driver']['p50_vs_floor'])} the "
                 f"bare pipe; Python API {fmt_ratio(s['py-api']['p50_vs_floor'])}, Node API "
                 f"{fmt_ratio(s['node-api']['p50_vs_floor'])} the bare pipe.")
        h.append(f"Official SDK p50 ÷ mcpping p50 (goal ≥ 5): Python "
                 f"{s['py-api']['sdk_p50_speedup']:.2f} (`send_ping()` vs `peer.ping()`), "
                 f"Node {s['node-api']['sdk_p50_speedup']:.2f} (`client.ping()` vs "
                 f"`peer.ping()`; below 1 means mcpping is slower).")
    if "row2" in res:
        s = res["row2"]["series"]
        h.append(f"Pipelined (64 in flight): C driver {fmt_ratio(s['c-driver']['vs_floor'])} "
                 f"the bare pipe's rate (Python API {fmt_ratio(s['py-api']['vs_floor'])}, "
                 f"Node API {fmt_ratio(s['node-api']['vs_floor'])}); against their own SDK: "
                 f"Python {fmt_ratio(s['py-api']['vs_sdk'])}, Node "
                 f"{fmt_ratio(s['node-api']['vs_sdk'])} the rate.")
    if "row3" in res:
        s = res["row3"]["series"]
        h.append("With the client's loop blocked 2 s, server pings answered during the block: "
                 + ", ".join(f"{BUSY_SERIES[k][0].split(' (')[0]} "
                             f"{fmt(e['answered_during'], 0)}/{fmt(e['sent_during'], 0)}"
                             for k, e in s.items()) + ".")
    if "row4" in res and "1000" in res["row4"]["series"]:
        e = res["row4"]["series"]["1000"]
        h.append(f"1000 idle connections, 1 s keepalive: {e['cpu_pct']:.2f}% of one core, "
                 f"{fmt(e['rss_per_conn_bytes'])} B RSS per connection.")
    if "row5" in res:
        s = res["row5"]["series"]
        lim = res["row5"]["limit_s"]

        def t(k: str) -> str:
            x = s.get(k, {}).get("noticed_s")
            return f"{x:.1f} s" if x is not None else f"never (> {lim:g} s)"
        h.append(f"Frozen peer noticed: mcpping Python {t('py-api')}, Node {t('node-api')}; "
                 f"official Python SDK {t('py-sdk')}, TS SDK {t('ts-sdk')}.")
    if "row6" in res:
        s = res["row6"]["series"]
        m16 = str(16 * MIB)
        h.append(f"16 MiB tool result, mcpping transport vs the SDK's: Python "
                 f"{fmt_ratio(s['py-mcpping']['vs_sdk'][m16])}, Node "
                 f"{fmt_ratio(s['node-mcpping']['vs_sdk'][m16])} of the SDK's time.")
    return h


# ------------------------------------------------------------------ main

def prepare_programs() -> str:
    """Builds the C programs if needed and copies them to a private directory,
    so that a `make clean` elsewhere during the run cannot pull them away."""
    global RESPONDER, C_PING, IDLE_COST
    progs = [RESPONDER, C_PING, IDLE_COST]
    if not all(os.path.exists(p) for p in progs):
        log("building the benchmark programs")
        subprocess.run(["make", "-s", *(os.path.relpath(p, ROOT) for p in progs)], cwd=ROOT,
                       check=True)
    private = tempfile.mkdtemp(prefix="mcpping-bench-bin-")
    copies = []
    for p in progs:
        dst = os.path.join(private, os.path.basename(p))
        shutil.copy2(p, dst)
        copies.append(dst)
    RESPONDER, C_PING, IDLE_COST = copies
    return private


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small N, short durations, fewer runs")
    ap.add_argument("--rows", default=None,
                    help="comma-separated rows to run: 1-6 and e (default: all; --quick: 1-6)")
    ap.add_argument("--reps", type=int, default=None, help="runs per measurement (5; quick 2)")
    ap.add_argument("--out", default=HERE, help="directory for RESULTS.md and latency_cdf.png")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite RESULTS.md from bench/out/results.json (no measuring)")
    o = ap.parse_args()
    if o.render:
        os.makedirs(o.out, exist_ok=True)
        with open(os.path.join(HERE, "out", "results.json")) as f:
            res = json.load(f)
        md = report(res) + f"\nTotal time of this run: {res['elapsed_s'] / 60:.1f} min.\n"
        with open(os.path.join(o.out, "RESULTS.md"), "w") as f:
            f.write(md)
        return
    rows = set((o.rows or ("1,2,3,4,5,6" if o.quick else "1,2,3,4,5,6,e")).split(","))
    reps = o.reps or (2 if o.quick else 5)
    os.makedirs(o.out, exist_ok=True)
    private = prepare_programs()
    t0 = time.monotonic()
    res: dict[str, Any] = {"quick": o.quick, "machine": machine(), "versions": versions(),
                           "load_start": os.getloadavg()}
    stat0 = cpu_times()
    steps = [("1", "row1", lambda: row1(reps, o.quick)),
             ("2", "row2", lambda: row2(reps, o.quick)),
             ("3", "row3", lambda: row3(1 if o.quick else min(reps, 3), o.quick)),
             ("6", "row6", lambda: row6(1 if o.quick else min(reps, 3), o.quick)),
             ("5", "row5", lambda: row5(o.quick)),
             ("4", "row4", lambda: row4(o.quick)),
             ("e", "extras", extras)]
    for key, name, fn in steps:
        if key not in rows:
            continue
        try:
            res[name] = fn()
        except Exception as e:  # one failing row must not lose the others
            log(f"{name} failed: {e}")
            res.setdefault("failed", {})[name] = str(e).strip()[-1500:]
    res["elapsed_s"] = time.monotonic() - t0
    res["load_end"] = os.getloadavg()
    stat1 = cpu_times()
    if stat0 and stat1:
        d = [b - a for a, b in zip(stat0, stat1)]
        total = sum(d) or 1
        res["cpu_share"] = {"busy_pct": 100.0 * (total - d[3] - d[4]) / total,
                            "steal_pct": 100.0 * d[7] / total}
    shutil.rmtree(private, ignore_errors=True)

    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    raw = {k: v for k, v in res.items()}
    if "row1" in raw:
        raw["row1"] = {k: v for k, v in raw["row1"].items() if k != "_samples"}
    with open(os.path.join(HERE, "out", "results.json"), "w") as f:
        json.dump(raw, f, indent=1)
    if "row1" in res:
        chart(res["row1"], os.path.join(o.out, "latency_cdf.png"))
    md = report(res)
    md += f"\nTotal time of this run: {res['elapsed_s'] / 60:.1f} min.\n"
    with open(os.path.join(o.out, "RESULTS.md"), "w") as f:
        f.write(md)
    log(f"wrote {os.path.relpath(os.path.join(o.out, 'RESULTS.md'), ROOT)} "
        f"in {res['elapsed_s']:.0f} s")
    for line in headline(res):
        print(line)


if __name__ == "__main__":
    main()
