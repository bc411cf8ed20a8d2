"""The measuring method every benchmark row shares.

A *series* is one client setup (the bare pipe, mcpping's Python API, the
official TS SDK, ...) run by a long-lived *worker* process that keeps its
connection open between blocks. The runner drives the workers of a row in
rounds: each round runs one short block of every series, the order rotating
from round to round (A B C, B C A, C A B, ...), so slow drift and bursts of
noise fall on every series alike. Warm-up rounds come first (they also size
the blocks) and are not kept.

The block protocol, one JSON object per line (see clients/worker.py and
clients/worker.js for the two hosts' halves of it; clients/c_ping.c speaks
it in C):

  worker -> runner  {"ready": true, "pid": P, ...}  once, when connected
  runner -> worker  {"n": N, ...}                   one block: N operations
                                                    ("samples": false: no per-op lists)
  worker -> runner  {"ops": N, "wall_s": S, "cpu_s": S, "csw": K,
                     "samples_us": [...]?, ...}     the block's result
  runner closes the worker's stdin                  the worker closes and exits 0

cpu_s is the worker's own CPU time over the block, user + system, all its
threads (getrusage(RUSAGE_SELF) / process.cpuUsage()); csw its context
switches (voluntary + involuntary) over the block. samples_us, when present,
holds one latency per operation.

Figures are summarised per block first (a block's p50, its rate, its CPU
per operation), then over blocks: the interquartile mean (spread() says
why not the median), with the interquartile range as the spread. A ratio
between two series is the ratio of their interquartile means; its spread
is the interquartile range of the per-round ratios (the two blocks of one
round ran seconds apart), which tells how firm it is.
"""
from __future__ import annotations

import json
import os
import select
import signal
import statistics
import subprocess
import tempfile
import time
from typing import Any, Callable


WARM_S = 1.0  # warm-up per series, in seconds of its blocks, for sized rows


class WorkerError(RuntimeError):
    pass


class Worker:
    """One series' worker process, spoken to over its stdin and stdout."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None,
                 cwd: str | None = None, ready_timeout: float = 60.0,
                 pass_fds: tuple[int, ...] = ()):
        self.name = name
        self.argv = argv
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err, cwd=cwd, env=env, bufsize=0,
                                     start_new_session=True, pass_fds=pass_fds)
        self._buf = b""
        self.info = self._read(ready_timeout)
        if not self.info.get("ready"):
            self.kill()
            raise WorkerError(f"{name}: bad ready line {self.info!r}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def block(self, cmd: dict[str, Any], timeout: float = 300.0) -> dict[str, Any]:
        """Runs one block; returns the worker's result object."""
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        except BrokenPipeError:
            raise WorkerError(f"{self.name}: worker exited\n{self.stderr()}") from None
        return self._read(timeout)

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"{self.name}: no answer in {timeout:g} s\n{self.stderr()}")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.proc.wait()
                raise WorkerError(f"{self.name}: worker exited with {self.proc.returncode}\n"
                                  f"{self.stderr()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            self.kill()
            raise WorkerError(f"{self.name}: not JSON: {line[:200]!r}\n{self.stderr()}") from None

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read()[-2000:]

    def close(self, timeout: float = 30.0) -> None:
        """Closes the worker's stdin and waits for it; kills it if it hangs."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._err.close()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


def run_once(argv: list[str], timeout: float, cwd: str | None = None,
             env: dict[str, str] | None = None) -> Any:
    """Runs a one-shot client in its own session and returns the JSON object
    on its last line of output; kills the whole session on timeout."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=cwd, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise WorkerError(f"timed out after {timeout:g} s: {' '.join(argv)}\n{err[-2000:]}")
    if p.returncode != 0:
        raise WorkerError(f"exit {p.returncode}: {' '.join(argv)}\n{err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


# ------------------------------------------------------------------ stats

def pct(sorted_xs: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty list."""
    k = max(0, min(len(sorted_xs) - 1, int(-(-p * len(sorted_xs) // 100)) - 1))
    return sorted_xs[k]


def spread(xs: list[float]) -> dict[str, float]:
    """The centre and spread of xs: {"iqm", "median", "q1", "q3", "n"}.

    iqm, the centre every figure and ratio uses, is the interquartile mean:
    the mean of the middle half (a 25% trimmed mean). On this VM a figure's
    blocks often fall in two modes, a fast spell's and a slow one's. Their
    median jumps from one mode to the other when a few blocks change sides
    (a pair of runs moved a ratio by 28% that way, their interquartile
    means by 9%); the interquartile mean moves with the modes' shares and
    still leaves out the outliers (a GC pause, a stalled block) that a plain
    mean would take in.
    """
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return {"iqm": None, "median": None, "q1": None, "q3": None, "n": 0}
    if len(xs) == 1:
        return {"iqm": xs[0], "median": xs[0], "q1": xs[0], "q3": xs[0], "n": 1}
    q1, q2, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return {"iqm": interquartile_mean(xs), "median": statistics.median(xs), "q1": q1,
            "q3": q3, "n": len(xs)}


def interquartile_mean(sorted_xs: list[float]) -> float:
    """The mean of the middle half of an already sorted, non-empty list, the
    quarters at each end weighing in fractionally when n is not a multiple
    of 4 (so that every value's weight is the same as in the quantiles)."""
    n = len(sorted_xs)
    lo, hi = n / 4, 3 * n / 4
    total = 0.0
    for i, x in enumerate(sorted_xs):
        total += x * max(0.0, min(i + 1, hi) - max(i, lo))
    return total / (hi - lo)


def block_figures(r: dict[str, Any]) -> dict[str, float]:
    """The per-block figures every row can use, from one worker result."""
    ops = r["ops"]
    f = {"rate": ops / r["wall_s"] if r["wall_s"] > 0 else None,
         "cpu_us_per_op": r["cpu_s"] * 1e6 / ops,
         "csw_per_op": r.get("csw", 0) / ops,
         "wall_us_per_op": r["wall_s"] * 1e6 / ops}
    xs = r.get("samples_us")
    if xs:
        xs = sorted(xs)
        f.update(p50_us=pct(xs, 50), p90_us=pct(xs, 90), p99_us=pct(xs, 99))
    native = r.get("native_us")
    if native:
        f["native_p50_us"] = pct(sorted(native), 50)
    return f


# ------------------------------------------------------------ interleaving

def interleave(workers: dict[str, Worker], commands: dict[str, dict[str, Any]], rounds: int,
               log: Callable[[str], None] = lambda s: None, target_s: float | None = None,
               on_block: Callable[[str, dict[str, Any]], None] | None = None,
               warm_s: float = WARM_S
               ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Runs a warm-up round and then rounds rounds of one block per series,
    the order rotating from round to round.

    With target_s, the warm-up rounds (at least two, and until every series
    has run warm_s) also size each series' blocks: its "n" becomes what takes
    about target_s, so a slow series and a fast one get blocks of about the
    same length. Returns, per series, the figures of
    each kept block in round order (blocks with the same index ran in the
    same round), and the commands used. on_block(name, raw_result) sees
    every kept block's raw result.
    """
    names = list(workers)
    commands = {n: dict(c) for n, c in commands.items()}
    # A first block pays for caches and lazy setup; V8 takes longer still
    # (a fresh TS SDK client runs 3-6x its steady cost for its first ~0.3 s
    # of pings), so sized rows warm up for WARM_S of each series' blocks,
    # re-sizing them after every warm-up block.
    spent = {n: 0.0 for n in names}
    warm_rounds = 0
    while warm_rounds < (2 if target_s else 1) or (
            target_s and min(spent.values()) < warm_s):
        warm_rounds += 1
        for name in names:
            raw = workers[name].block(commands[name])
            spent[name] += raw["wall_s"]
            if target_s and raw["wall_s"] > 0:
                per_op = raw["wall_s"] / raw["ops"]
                commands[name]["n"] = max(20, min(50_000, round(target_s / per_op)))
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rnd in range(rounds):
        if rnd == 0 or (rnd + 1) % 10 == 0 or rnd + 1 == rounds:
            log(f"round {rnd + 1}/{rounds}")
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            raw = workers[name].block(commands[name])
            out[name].append(block_figures(raw))
            if on_block:
                on_block(name, raw)
    return out, commands


def measure(specs: dict[str, tuple[list[str], dict[str, str] | None]],
            commands: dict[str, dict[str, Any]], rounds: int, cwd: str,
            log: Callable[[str], None] = lambda s: None, target_s: float | None = None,
            on_block: Callable[[str, dict[str, Any]], None] | None = None,
            warm_s: float = WARM_S,
            on_ready: Callable[[str, dict[str, Any]], None] | None = None
            ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Starts one worker per series (specs: name -> (argv, env)), runs
    interleave() over them and closes them, also on failure. on_ready gets
    each worker's ready line."""
    workers: dict[str, Worker] = {}
    try:
        for name, (argv, env) in specs.items():
            workers[name] = Worker(name, argv, env=env, cwd=cwd)
            if on_ready:
                on_ready(name, workers[name].info)
        return interleave(workers, commands, rounds, log, target_s, on_block, warm_s)
    finally:
        for w in workers.values():
            w.close()


def rounds(blocks: dict[str, list[Any]]) -> int:
    """How many rounds blocks holds (every series has one block per round)."""
    return min((len(b) for b in blocks.values()), default=0)


def summary(blocks: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """spread() (interquartile mean, median, IQR) over blocks of every figure
    the blocks have."""
    keys = blocks[0].keys() if blocks else ()
    return {k: spread([b.get(k) for b in blocks]) for k in keys}


def ratio(blocks: dict[str, list[dict[str, Any]]], num: str, den: str, figure: str
          ) -> dict[str, Any]:
    """iqm(num's figure) / iqm(den's figure) (spread()), with the IQR of
    the per-round ratios as its spread."""
    a = [b[figure] for b in blocks[num]]
    b = [b[figure] for b in blocks[den]]
    per_round = [x / y for x, y in zip(a, b) if x is not None and y]
    s = spread(per_round)
    ma, mb = spread(a)["iqm"], spread(b)["iqm"]
    return {"num": num, "den": den, "figure": figure,
            "value": ma / mb if ma is not None and mb else None,
            "q1": s["q1"], "q3": s["q3"], "rounds": s["n"]}



# ------------------------------------------------------------------ goals

def goal(figure: str, target: str, measured: str, met: bool | None, note: str = ""
         ) -> dict[str, Any]:
    """One row of the goals table; met None means not measured in this run."""
    return {"figure": figure, "goal": target, "measured": measured, "met": met, "note": note}


def judge(r: dict[str, Any], limit: float, at_most: bool) -> tuple[bool | None, str]:
    """Whether ratio r meets value <= limit (at_most) or >= limit, and a note
    when its interquartile range straddles the limit (a verdict that a
    repeat run could flip)."""
    v = r.get("value")
    if v is None:
        return None, "not measured"
    met = v <= limit if at_most else v >= limit
    q1, q3 = r.get("q1"), r.get("q3")
    if q1 is not None and q3 is not None and q1 <= limit <= q3:
        return met, "borderline: the interquartile range straddles the goal"
    return met, ""
