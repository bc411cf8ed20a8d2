"""Profiles that explain a figure: where a worker's time goes.

This VM exposes no hardware counters (`perf stat -e instructions true`
reports them <not supported>), so instruction counts are out; what works is
perf's software clock sampling (cpu-clock), strace's syscall counts and the
kernel's context-switch counts. A profile runs after the measurements, on a
worker of its own, so it perturbs no figure in the report.

  perf_profile: cpu-clock samples of one block, split by shared object and
                by symbol (Node runs with --perf-basic-prof so that JIT code
                has names);
  syscall_counts: syscalls per operation over one block (strace -c -f,
                attached to every thread of the worker, for the names; the
                total also from perf's raw_syscalls tracepoint, unslowed);
  perf_attach, syscalls_attached: the same for a running process over a
                few seconds;
  py_profile:   Python functions by own time (cProfile), which perf cannot
                see in Python 3.11.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

from method import Worker


def perf_status() -> dict[str, Any]:
    """What perf can do here: hardware counters, software sampling."""
    if not shutil.which("perf"):
        return {"perf": False, "hw_counters": False, "sampling": False,
                "detail": "perf is not installed (Debian: linux-perf)"}
    st = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                        capture_output=True, text=True)
    hw = st.returncode == 0 and "<not supported>" not in st.stderr and \
        "<not counted>" not in st.stderr
    with tempfile.TemporaryDirectory() as tmp:
        rec = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                              os.path.join(tmp, "p.data"), "true"], capture_output=True, text=True)
    sampling = rec.returncode == 0
    detail = ("hardware counters work" if hw else
              "no hardware counters on this machine (`perf stat -e instructions true`: "
              "not supported)")
    detail += "; cpu-clock sampling works" if sampling else "; perf record fails"
    return {"perf": True, "hw_counters": hw, "sampling": sampling, "detail": detail}


def _node_perf_argv(argv: list[str]) -> list[str]:
    """Node with JIT symbols for perf (it also writes an isolate log into its
    working directory, which perf_profile makes a temporary one)."""
    if os.path.basename(argv[0]).startswith("node"):
        return [argv[0], "--perf-basic-prof", *argv[1:]]
    return argv


def perf_profile(name: str, argv: list[str], cmd: dict[str, Any],
                 env: dict[str, str] | None = None, focus: str | None = None,
                 top: int = 12) -> dict[str, Any]:
    """cpu-clock samples of one block of cmd in a fresh worker (after one
    warm-up block), run from a temporary directory (argv must be absolute). Returns {"samples", "dso": [[name, pct]], "sym":
    [[symbol, dso, pct]], "focus": [[symbol, inclusive pct]]}; percentages of
    the process's sampled CPU, "focus" for the symbols matching the regex
    focus, callees included (where mcpping's own functions spend it)."""
    cmd = {**cmd, "samples": False}
    tmp = tempfile.mkdtemp(prefix="mcpping-perf-")
    data = os.path.join(tmp, "perf.data")
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    w = None
    try:
        w = Worker(name, ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-g",
                          "-D", "-1", "--control", f"fd:{ctl_r},{ack_w}", "-o", data, "--",
                          *_node_perf_argv(argv)],
                   env=env, cwd=tmp, pass_fds=(ctl_r, ack_w))
        os.close(ctl_r)
        os.close(ack_w)
        ctl_r = ack_w = -1
        w.block(cmd)

        def control(word: str) -> None:
            os.write(ctl_w, word.encode() + b"\n")
            os.read(ack_r, 16)  # perf's "ack": the events are on (or off) now

        control("enable")
        w.block(cmd)
        control("disable")
        pid = w.info.get("pid")
        w.close()
        w = None
        return _perf_report(data, top, focus, pid)
    finally:
        if w is not None:
            w.kill()
        for fd in (ctl_r, ctl_w, ack_r, ack_w):
            if fd >= 0:
                os.close(fd)
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_perf_maps()


def perf_attach(pid: int, seconds: float, top: int = 12) -> dict[str, Any]:
    """cpu-clock samples of a running process for seconds; as perf_profile."""
    tmp = tempfile.mkdtemp(prefix="mcpping-perf-")
    data = os.path.join(tmp, "perf.data")
    try:
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-g",
                        "-p", str(pid), "-o", data, "--", "sleep", str(seconds)],
                       capture_output=True, timeout=seconds + 60, check=True)
        return _perf_report(data, top)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _perf_report(data: str, top: int, focus: str | None = None,
                 pid: int | None = None) -> dict[str, Any]:
    """Summarises perf.data; with pid, only that process's samples (perf
    record follows children, and the worker's server is one)."""
    only = ["--pid", str(pid)] if pid else []

    def report(sort: str, children: bool = False) -> str:
        return subprocess.run(["perf", "report", "-i", data, "--stdio", *only,
                               "--children" if children else "--no-children", "-g", "none",
                               "--percent-limit", "0.5", "--sort", sort],
                              capture_output=True, text=True, timeout=300).stdout

    samples = 0
    m = re.search(r"# Samples: (\S+)", report("dso"))
    if m:
        samples = _count(m.group(1))
    dso = [[n, p] for p, n in _rows(report("dso"), 1)][:top]
    sym = []
    for p, rest in _rows(report("dso,sym"), 2):
        d, s = rest
        sym.append([re.sub(r"^\[[.k]\] ", "", s), d, p])
    out = {"samples": samples, "dso": dso, "sym": sym[:top]}
    if focus:
        inclusive = []
        for line in report("sym", children=True).splitlines():
            m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[[.k]\]\s+(.*?)\s*$", line)
            if m and re.search(focus, m.group(3)) and float(m.group(1)) >= 2.0:
                inclusive.append([m.group(3), float(m.group(1))])
        out["focus"] = inclusive[:8]
    return out


def _count(s: str) -> int:
    mult = {"K": 1_000, "M": 1_000_000}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def _rows(text: str, ncols: int) -> list[tuple[float, Any]]:
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"\s*([\d.]+)%\s+(.*)$", line)
        if not m:
            continue
        rest = m.group(2).strip()
        if ncols == 1:
            out.append((float(m.group(1)), rest))
        else:
            parts = re.split(r"\s{2,}", rest, maxsplit=1)
            out.append((float(m.group(1)), (parts[0], parts[1] if len(parts) > 1 else "")))
    return out


def py_profile(name: str, argv: list[str], cmd: dict[str, Any], cwd: str,
               env: dict[str, str] | None = None, top: int = 8) -> dict[str, Any]:
    """Python functions by their own time, from cProfile over a whole worker
    run (argv = [python, script, ...]) of one warm-up and one block of cmd.
    perf cannot see Python frames in 3.11, this can. Returns {"ops",
    "funcs": [[function, share of all own time]]}."""
    import pstats

    tmp = tempfile.mkdtemp(prefix="mcpping-cprofile-")
    out = os.path.join(tmp, "stats")
    cmd = {**cmd, "samples": False}
    w = Worker(name, [argv[0], "-m", "cProfile", "-o", out, *argv[1:]], env=env, cwd=cwd)
    try:
        w.block(cmd)
        ops = w.block(cmd)["ops"]
        w.close()
        w = None
        st = pstats.Stats(out)
    finally:
        if w is not None:
            w.kill()
    shutil.rmtree(tmp, ignore_errors=True)
    total = sum(v[2] for v in st.stats.values()) or 1.0
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])
    funcs = []
    for (file, line, fn), v in rows[:top]:
        where = f"{os.path.basename(file)}:{line}({fn})" if file != "~" else fn
        funcs.append([where, 100.0 * v[2] / total])
    return {"ops": ops, "funcs": funcs}


def _remove_perf_maps() -> None:
    """Node's --perf-basic-prof leaves /tmp/perf-PID.map behind."""
    for f in os.listdir("/tmp"):
        if re.fullmatch(r"perf-\d+\.map", f):
            try:
                pid = int(f[5:-4])
                os.kill(pid, 0)
            except ProcessLookupError:
                os.unlink(os.path.join("/tmp", f))
            except (ValueError, PermissionError, OSError):
                pass


def syscall_counts(name: str, argv: list[str], cmd: dict[str, Any], cwd: str,
                   env: dict[str, str] | None = None) -> dict[str, Any]:
    """Syscalls per operation over one block of cmd (after a warm-up block),
    every thread of a fresh worker traced (strace attaches to a running worker;
    threads it starts later are followed too). Returns {"per_op": total,
    "calls": [[syscall, per_op]]}."""
    if not shutil.which("strace"):
        return {"error": "strace is not installed"}
    cmd = {**cmd, "samples": False}
    tmp = tempfile.mkdtemp(prefix="mcpping-strace-")
    out = os.path.join(tmp, "counts")
    w = Worker(name, argv, env=env, cwd=cwd)
    st = None
    try:
        w.block(cmd)
        untraced = _untraced_syscalls(w, cmd)
        # -p attaches every thread of the process and says so in one line.
        st = subprocess.Popen(["strace", "-f", "-c", "-o", out, "-p", str(w.pid)],
                              stderr=subprocess.PIPE, text=True)
        while "attached" not in (line := st.stderr.readline()):
            if not line:
                raise RuntimeError("strace exited before attaching")
        ops = w.block(cmd)["ops"]
        st.send_signal(signal.SIGINT)
        st.wait(60)
        st = None
        with open(out) as f:
            text = f.read()
    finally:
        if st is not None:
            st.kill()
            st.wait()
        w.close()
        shutil.rmtree(tmp, ignore_errors=True)
    res = _strace_summary(text, ops)
    if untraced is not None:
        res["per_op_untraced"] = untraced
    return res


def _untraced_syscalls(w: Worker, cmd: dict[str, Any]) -> float | None:
    """Syscalls per operation over one block, every thread, counted by the
    kernel's raw_syscalls tracepoint (perf stat) rather than by strace.
    strace stops every thread at every call, so a block takes several times
    longer under it and whatever runs by the clock (the watchdog's tick, a
    timer) is counted several times over per operation; this count is not
    slowed. None where perf cannot count the tracepoint."""
    if not shutil.which("perf"):
        return None
    ps = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter",
                           "-p", str(w.pid)], stderr=subprocess.PIPE, text=True)
    try:
        # perf says nothing once attached; the worker is idle meanwhile
        # (blocked reading its next command), so an early start costs nothing.
        time.sleep(0.3)
        ops = w.block(cmd)["ops"]
        ps.send_signal(signal.SIGINT)
        err = ps.communicate(timeout=60)[1]
    finally:
        if ps.poll() is None:
            ps.kill()
            ps.wait()
    for line in err.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "raw_syscalls:sys_enter" and f[0].isdigit():
            return int(f[0]) / ops
    return None


def syscalls_attached(pid: int, seconds: float) -> dict[str, Any]:
    """Syscalls per second of a running process (every thread), counted by
    strace for seconds. Returns {"per_op": total, "calls": [[name, per_s]]}
    with seconds as the unit of "op"."""
    if not shutil.which("strace"):
        return {"error": "strace is not installed"}
    tmp = tempfile.mkdtemp(prefix="mcpping-strace-")
    out = os.path.join(tmp, "counts")
    try:
        subprocess.run(["timeout", "-s", "INT", str(seconds), "strace", "-f", "-c", "-o", out,
                        "-p", str(pid)], capture_output=True, timeout=seconds + 60)
        with open(out) as f:
            return _strace_summary(f.read(), seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _strace_summary(text: str, ops: float, top: int = 8) -> dict[str, Any]:
    calls = []
    total = 0
    for line in text.splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and re.fullmatch(r"[\d.]+", parts[0]) and parts[3].isdigit():
            if parts[-1] == "total":
                continue
            total += int(parts[3])
            calls.append([parts[-1], int(parts[3]) / ops])
    calls.sort(key=lambda c: -c[1])
    return {"per_op": total / ops, "calls": calls[:top]}
