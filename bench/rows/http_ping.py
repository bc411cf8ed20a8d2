"""Sequential ping over Streamable HTTP: mcpping's HTTP clients against each
official SDK's and a raw keep-alive POST (the floor), all against one copy
of the TS SDK's Streamable HTTP server; wall time and CPU per ping."""
from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
from typing import Any, Iterator

import method
import report
from rows import ping, tools_call

KEY = "http_ping"
TITLE = "Sequential ping over Streamable HTTP"
SPREAD = True  # runs in passes spread over the run (run.py schedule())
SERVER = os.path.join("tests", "node", "fixtures", "sdk_http_server.mjs")

LABELS = {
    "py-mcpping": "mcpping Python `mcpping.http` `peer.ping()`",
    "py-sdk": "Python SDK `ClientSession.send_ping()` over `streamable_http_client`",
    "py-raw": "Python `http.client` keep-alive POST (floor)",
    "node-mcpping": "mcpping Node `HttpSession.ping()`",
    "ts-sdk": "TS SDK `client.ping()` over `StreamableHTTPClientTransport`",
    "node-raw": "Node `node:http` keep-alive POST (floor)",
}

RATIOS = [
    ("py-mcpping/py-sdk p50", "py-mcpping", "py-sdk", "p50_us", "Python p50, mcpping ÷ SDK"),
    ("node-mcpping/ts-sdk p50", "node-mcpping", "ts-sdk", "p50_us", "Node p50, mcpping ÷ SDK"),
    ("py-mcpping/py-sdk cpu", "py-mcpping", "py-sdk", "cpu_us_per_op",
     "Python CPU per ping, mcpping ÷ SDK"),
    ("node-mcpping/ts-sdk cpu", "node-mcpping", "ts-sdk", "cpu_us_per_op",
     "Node CPU per ping, mcpping ÷ SDK"),
    ("py-mcpping/py-raw p50", "py-mcpping", "py-raw", "p50_us", "Python p50, mcpping ÷ raw POST"),
    ("node-mcpping/node-raw p50", "node-mcpping", "node-raw", "p50_us",
     "Node p50, mcpping ÷ raw POST"),
]


@contextlib.contextmanager
def server(ctx: Any, timeout: float = 30.0) -> Iterator[str]:
    """Runs the TS SDK's Streamable HTTP server fixture on loopback; yields
    its URL (its first line of output) and stops it, also on failure."""
    p = subprocess.Popen([ctx.node, os.path.join(ctx.root, SERVER)], cwd=ctx.root,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         start_new_session=True)
    try:
        ready, _, _ = select.select([p.stdout], [], [], timeout)
        url = p.stdout.readline().decode().strip() if ready else ""
        if not url.startswith("http://127.0.0.1:"):
            raise method.WorkerError(f"{SERVER}: no URL in {timeout:g} s (got {url!r})")
        yield url
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(5)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stdout.close()


def specs(ctx: Any, url: str) -> dict[str, tuple[list[str], None]]:
    py = os.path.join(ctx.clients, "http_ping.py")
    js = os.path.join(ctx.clients, "http_ping.js")
    return {"py-mcpping": ([ctx.py, py, "mcpping", url], None),
            "py-sdk": ([ctx.py, py, "sdk", url], None),
            "py-raw": ([ctx.py, py, "raw", url], None),
            "node-mcpping": ([ctx.node, js, "mcpping", url], None),
            "ts-sdk": ([ctx.node, js, "sdk", url], None),
            "node-raw": ([ctx.node, js, "raw", url], None)}


def run(ctx: Any) -> dict[str, Any]:
    target = ctx.pick(0.1, 0.05)  # a ping here takes milliseconds: 50 ms holds few
    with server(ctx) as url:
        blocks, commands = method.measure(specs(ctx, url), {n: {"n": 20} for n in LABELS},
                                          ctx.rounds(40, 6), ctx.root, ctx.log, target_s=target)
    blocks = ctx.keep("blocks", blocks)
    return {"rounds": method.rounds(blocks), "target_s": target, "commands": commands,
            "series": {n: method.summary(b) for n, b in blocks.items()},
            "ratios": ping.ratios(blocks, RATIOS), "blocks": blocks}


LIMIT = 1.0  # no slower than the SDK's own client


def goals(res: dict[str, Any], rows: dict[str, Any]) -> list[dict[str, Any]]:
    return [tools_call.sdk_goal(res, "ping over Streamable HTTP",
                                f"≤ {LIMIT:g}× the SDK's own client in both languages, i.e. no "
                                "slower (judged on p50 wall time)", LIMIT, "ping")]


def render(res: dict[str, Any]) -> list[str]:
    s = res["series"]
    L = [f"One ping in flight over Streamable HTTP on loopback. {res['rounds']} rounds"
         f"{report.passes(res)} after a warm-up, blocks of about "
         f"{res['target_s'] * 1000:.0f} ms (block sizes: "
         + ", ".join(f"{k} {c['n']}" for k, c in res["commands"].items()) + "). Every series "
         "talks to the same server, one copy of the TS SDK's Streamable HTTP server "
         f"(`{SERVER}`, stateful, answering each POST with an SSE stream) started by the row "
         "for each pass, so every series meets the same server (its JIT and heap included); "
         "its CPU is not counted in any worker's. Latency is the wall time "
         "around one awaited ping; CPU and context switches are the client process's own. "
         "The floors initialize by hand, then POST each ping on one keep-alive connection "
         "with the session's headers and read the answer whole, parsing nothing. mcpping "
         "runs with its keepalive off; mcpping's Node session opens no GET listening stream "
         "(`listen: false`), Python's and both SDKs' hold theirs open, idle.", ""]
    L += report.series_table(LABELS, s, [
        ("p50_us", "p50 µs", 1), ("p99_us", "p99 µs", 1), ("cpu_us_per_op", "CPU µs/ping", 1),
        ("csw_per_op", "csw/ping", 2)])
    L += report.ratio_table(res["ratios"])
    return L
