"""A uvloop host that also runs asyncio subprocesses (issue 8, item 1).

uvloop bundles its own libuv, which takes SIGCHLD over: before mcpping
watched its servers through pidfds, the server stayed <defunct>, close()
never returned and the interpreter hung at exit. Prints one JSON line.
"""
import asyncio
import json
import sys
from pathlib import Path

import uvloop

import mcpping

ECHO = str(Path(__file__).resolve().parents[2] / "peers" / "echo.py")


def state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


async def main() -> dict:
    peer = await mcpping.connect([sys.executable, ECHO])
    pid = peer.pid
    # The host's own children, through uvloop's child watching.
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", "print('hi')",
                                                 stdout=asyncio.subprocess.PIPE)
    out, _ = await child.communicate()
    rtt = await peer.ping()
    info = await asyncio.wait_for(peer.close(), 10)
    return {"pid": pid, "rtt": rtt, "child_out": out.decode().strip(),
            "child_rc": child.returncode, "server_state": state(pid),
            "term_signal": info.term_signal}


print(json.dumps(uvloop.run(main())), flush=True)
