"""A host that forks after importing mcpping (tests/python/test_hosts.py).

    python fork.py fresh   fork before any connection exists
    python fork.py busy    fork N times while connections ping every 10 ms,
                           from the loop thread and from a worker thread

Each child runs the host scenario on a loop of its own and exits through
the atexit functions (mcpping's shutdown among them). The parent checks every child's exit
status, that its own servers lived through the children, and that its own
connections still answer; then prints one JSON line.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import sys
import threading

import mcpping
from scenario import ECHO, scenario

FORKS = 6
#: The parent's connections, which a child inherits as Python objects only.
inherited: list[mcpping.Peer] = []


def child() -> None:
    """Runs in a forked child: a fresh loop, a full scenario, a normal exit."""
    try:
        # The parent's connections are not the child's: plainly closed here.
        for p in inherited:
            assert p.pid is None, "a child sees the parent's server"
            try:
                p.notify("notifications/x")
                raise AssertionError("a child wrote to the parent's server")
            except mcpping.PeerClosed as e:
                assert str(e) == "the connection is closed", e
        # The parent's host loop is not the child's: thread mode until a
        # loop of its own connects.
        mode, why = mcpping.runtime_mode()
        assert mode == "thread", why
        asyncio.set_event_loop(None)
        loop = asyncio.new_event_loop()
        for p in inherited:
            try:
                loop.run_until_complete(p.ping(timeout=1))
                raise AssertionError("a child pinged the parent's server")
            except mcpping.PeerClosed:
                pass
        result = loop.run_until_complete(scenario())
        expected = "thread" if os.environ.get("MCPPING_HOST_MODE") == "0" else "host"
        code = 0 if (result["rtt"] > 0 and result["echo"] == {"seq": 7}
                     and result["mode"][0] == expected) else 3
    except BaseException as e:
        print("child failed:", repr(e), file=sys.stderr, flush=True)
        code = 4
    sys.stdout.flush()
    # What a normal exit runs (mcpping's shutdown included), then leave
    # without unwinding into the parent's stack.
    atexit._run_exitfuncs()
    os._exit(code)


def fork_one() -> int:
    pid = os.fork()
    if pid == 0:
        child()
    return pid


def reap(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _running(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def fresh() -> dict:
    code = reap(fork_one())
    return {"children": [code], **await scenario()}


async def busy() -> dict:
    ka = mcpping.KeepAlive(interval=0.01, timeout=2, min_interval=0.01, jitter_pct=0)
    peers = [await mcpping.connect(ECHO, keepalive=ka) for _ in range(3)]
    pids = [p.pid for p in peers]
    inherited.extend(peers)
    codes: list[int] = []
    for i in range(FORKS):
        if i % 2:
            # From a worker thread, while the loop thread pings.
            box: list[int] = []
            t = threading.Thread(target=lambda: box.append(fork_one()))
            t.start()
            await asyncio.gather(*(p.ping(timeout=5) for p in peers))
            t.join()
            pid = box[0]
        else:
            pings = asyncio.gather(*(p.ping(timeout=5) for p in peers))
            pid = fork_one()
            await pings
        codes.append(await asyncio.get_running_loop().run_in_executor(None, reap, pid))
    alive = [p.pid == pid and _running(pid) for p, pid in zip(peers, pids)]
    rtts = [await p.ping(timeout=5) for p in peers]
    healthy = all(p.healthy for p in peers)
    for p in peers:
        await p.close()
    return {"children": codes, "servers_kept": all(alive), "healthy": healthy,
            "rtt": min(rtts), "pids": pids}


if __name__ == "__main__":
    mode = sys.argv[1]
    print(json.dumps(asyncio.run(fresh() if mode == "fresh" else busy())), flush=True)
