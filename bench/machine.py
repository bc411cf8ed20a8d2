"""What the runner knows about the machine: steady mode, load, versions.

Steady mode: on this kind of VM a process woken from an idle CPU pays a
wake-up that swings a pipe round trip between ~8 and ~90 µs from one run to
the next. Holding /dev/cpu_dma_latency open with the value 0 asks the kernel
(PM QoS) to keep CPUs out of deep idle states for as long as the file stays
open, which is what ../shared/tools/steady does for one command; the runner
holds it for the whole run.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import struct
import subprocess
import time
from typing import Any

DMA_LATENCY = "/dev/cpu_dma_latency"


class Steady:
    """Holds the CPU-idle latency request at 0 while in use.

    held tells whether it could; detail says what happened, in words.
    """

    def __init__(self, wanted: bool = True):
        self.wanted = wanted
        self.held = False
        self.detail = "not requested (--unsteady)"
        self._fd: int | None = None

    def __enter__(self) -> "Steady":
        if not self.wanted:
            return self
        try:
            fd = os.open(DMA_LATENCY, os.O_WRONLY)
            os.write(fd, struct.pack("i", 0))
        except OSError as e:
            self.detail = f"could not hold {DMA_LATENCY}: {e.strerror}"
            return self
        self._fd = fd
        now = latency_in_force()
        self.held = now == 0
        self.detail = (f"{DMA_LATENCY} held at 0 µs for the whole run" if self.held else
                       f"{DMA_LATENCY} written, but the kernel reports {now} µs in force")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def status(self) -> dict[str, Any]:
        return {"wanted": self.wanted, "held": self.held, "detail": self.detail}


def latency_in_force() -> int | None:
    """The CPU wake-up latency (µs) the kernel holds to now, or None."""
    try:
        fd = os.open(DMA_LATENCY, os.O_RDONLY)
    except OSError:
        return None
    try:
        return struct.unpack("i", os.read(fd, 4))[0]
    except (OSError, struct.error):
        return None
    finally:
        os.close(fd)


# ------------------------------------------------------------------- load

def _cpu_times() -> list[int]:
    """The aggregate line of /proc/stat: user nice system idle iowait irq softirq steal."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return []


def _ours() -> float:
    """CPU seconds used by this process and its reaped descendants."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def snapshot() -> dict[str, Any]:
    return {"t": time.monotonic(), "loadavg": list(os.getloadavg()), "stat": _cpu_times(),
            "ours": _ours()}


def load_between(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """How busy the machine was between two snapshots, and how much of it
    was not us: busy and others in cores (1.0 = one CPU fully busy).

    The benchmark's own processes count once they have been reaped, so take
    the second snapshot after a row's workers have exited.
    """
    wall = b["t"] - a["t"]
    out: dict[str, Any] = {"wall_s": wall, "loadavg_start": a["loadavg"],
                           "loadavg_end": b["loadavg"]}
    if a["stat"] and b["stat"] and wall > 0:
        d = [y - x for x, y in zip(a["stat"], b["stat"])]
        hz = os.sysconf("SC_CLK_TCK")
        total = sum(d) or 1
        busy_s = (total - d[3] - d[4]) / hz
        ours_s = b["ours"] - a["ours"]
        out.update(busy_cores=busy_s / wall, ours_cores=ours_s / wall,
                   others_cores=max(0.0, (busy_s - ours_s) / wall),
                   steal_pct=100.0 * d[7] / total)
    return out


def merge_loads(loads: list[dict[str, Any]]) -> dict[str, Any]:
    """One row's load over its passes: wall time summed, cores averaged
    over it, the load average at the first pass's start and the last's end."""
    wall = sum(ld["wall_s"] for ld in loads)
    out: dict[str, Any] = {"wall_s": wall, "loadavg_start": loads[0]["loadavg_start"],
                           "loadavg_end": loads[-1]["loadavg_end"]}
    for k in ("busy_cores", "ours_cores", "others_cores", "steal_pct"):
        if wall > 0 and all(k in ld for ld in loads):
            out[k] = sum(ld[k] * ld["wall_s"] for ld in loads) / wall
    return out


def noisy(load: dict[str, Any], limit_cores: float = 0.05) -> bool:
    """Whether something else used more than limit_cores while we measured."""
    return load.get("others_cores", 0.0) > limit_cores


# ------------------------------------------------------- facts, versions

def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _cmd(argv: list[str], cwd: str | None = None) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30,
                              cwd=cwd).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def facts() -> dict[str, str]:
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    idle = "/sys/devices/system/cpu/cpuidle"
    return {"nproc": str(os.cpu_count()), "cpu": cpu or platform.processor(),
            "kernel": f"{platform.system()} {platform.release()}",
            "cpuidle": f"driver {_read(idle + '/current_driver') or 'unknown'}, governor "
                       f"{_read(idle + '/current_governor_ro') or _read(idle + '/current_governor') or 'unknown'}",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def versions(root: str, py: str, node: str) -> dict[str, str]:
    v: dict[str, str] = {}
    v["mcpping (Python)"] = _cmd([py, "-c", "import mcpping; print(mcpping.__version__)"], root)
    v["mcpping (Node)"] = _cmd([node, "-e", "console.log(require('./').version)"], root)
    v["mcpping commit"] = _cmd(["git", "describe", "--always", "--dirty"], root)
    v["Python"] = platform.python_version()
    v["mcp (official Python SDK)"] = _cmd(
        [py, "-c", "import importlib.metadata as m; print(m.version('mcp'))"], root)
    v["Node.js"] = _cmd([node, "--version"], root)
    try:
        with open(os.path.join(root, "node_modules/@modelcontextprotocol/sdk/package.json")) as f:
            v["@modelcontextprotocol/sdk"] = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        v["@modelcontextprotocol/sdk"] = "not installed"
    v["libuv (system: C driver, Python)"] = _cmd(["pkg-config", "--modversion", "libuv"])
    v["libuv (Node's own: Node addon)"] = _cmd([node, "-p", "process.versions.uv"])
    v["cJSON"] = _cmd(["pkg-config", "--modversion", "libcjson"])
    v["gcc"] = _cmd(["gcc", "-dumpfullversion"])
    v["perf"] = _cmd(["perf", "version"]) or "not installed"
    return v
