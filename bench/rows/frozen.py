"""Time to notice a frozen (SIGSTOPped) server, mcpping against the SDKs."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

import report

KEY = "frozen"
TITLE = "Time to notice a frozen peer"
KEEPALIVE = "interval 1 s, timeout 1 s, failures 2"
LABELS = {"py-api": ("mcpping Python API", "py", "api", KEEPALIVE),
          "node-api": ("mcpping Node API", "node", "api", KEEPALIVE),
          "py-sdk": ("Python SDK", "py", "sdk", "defaults"),
          "ts-sdk": ("TS SDK", "node", "sdk", "defaults")}


def _alive_responder(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0]) == b"responder"
    except OSError:
        return False


def run(ctx: Any) -> dict[str, Any]:
    # Long enough for the TS SDK's 60 s request timeout; the Python SDK never notices.
    limit = ctx.pick(70.0, 15.0)
    ctx.log(f"SIGSTOP the server; waiting up to {limit:g} s (the four clients run at once)")
    tmp = tempfile.mkdtemp(prefix="mcpping-bench-")
    procs: dict[str, subprocess.Popen] = {}
    pidfiles = {}
    try:
        for name, (_, lang, mode, _) in LABELS.items():
            pidfiles[name] = os.path.join(tmp, f"{name}.pid")
            script = os.path.join(ctx.clients, f"frozen.{'py' if lang == 'py' else 'js'}")
            argv = [ctx.py if lang == "py" else ctx.node, script, mode,
                    ctx.programs["responder"], pidfiles[name], str(limit)]
            procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, start_new_session=True, cwd=ctx.root)
        series: dict[str, Any] = {}
        deadline = time.monotonic() + limit + 60
        for name, p in procs.items():
            try:
                so, se = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
                series[name] = json.loads(so.strip().splitlines()[-1]) if p.returncode == 0 \
                    else {"noticed_s": None, "how": f"client failed: {se.strip()[-300:]}"}
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                series[name] = {"noticed_s": None, "how": "client hung; killed"}
            except (ValueError, IndexError):
                series[name] = {"noticed_s": None, "how": "client printed no result"}
        figures = {f"{n} noticed": {"label": f"{LABELS[n][0]}: frozen peer noticed after (s)",
                                    "value": series[n].get("noticed_s")}
                   for n in ("py-api", "node-api")}
        return {"limit_s": limit, "series": series, "figures": figures}
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # Whatever happened, no stopped server survives the row.
        for f in pidfiles.values():
            try:
                with open(f) as fh:
                    pid = int(fh.read().strip())
            except (OSError, ValueError):
                continue
            if _alive_responder(pid):
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
        shutil.rmtree(tmp, ignore_errors=True)


def render(res: dict[str, Any]) -> list[str]:
    L = ["After the handshake the server gets SIGSTOP (its pipes stay open: nothing closes, "
         f"nothing errors). mcpping runs keepalive ({KEEPALIVE}) and is timed to its `stale` "
         "event; the official SDKs run with their defaults and one ping in flight from the "
         "moment of the freeze, and are timed to whatever surfaces first (the ping failing, an "
         f"error or close callback). Waited up to {res['limit_s']:g} s; the four clients run at "
         "the same time. The server is always SIGCONTed and killed afterwards.", ""]
    rows = []
    for n, e in res["series"].items():
        t = e.get("noticed_s")
        rows.append([LABELS[n][0], LABELS[n][3],
                     f"{t:.2f} s" if t is not None else f"never (> {res['limit_s']:g} s)",
                     f"{e['suspect_s']:.2f} s" if e.get("suspect_s") is not None else "",
                     e.get("how", "")])
    L += report.table(["client", "settings", "noticed after", "suspect after", "how"], rows,
                      right_from=9)
    return L
