"""The host matrix: mcpping inside the hosts agents really run in (issue 8).

Each host runs as its own process with a timeout, so a hang fails the test
instead of stalling the suite: plain asyncio, uvloop, a loop on a non-main
thread, two loops at once, a process forked after import, and a Jupyter
kernel driven by nbclient. Every host connects to a real server, pings,
sends a request, sees keepalive events and closes; afterwards the host has
exited by itself and no server it spawned is left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import HERE, PY, expected_mode, process_alive
from test_notebook import _ensure_kernel

HOSTS = HERE / "hosts"


def run_host(script: str, *args: str, timeout: float = 60) -> list[dict]:
    """Runs a host program in its own session; returns its JSON lines."""
    proc = subprocess.Popen([PY, str(HOSTS / script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=HOSTS)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{script} {' '.join(args)} hung (killed after {timeout} s)")
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def check_scenario(r: dict) -> None:
    assert r["rtt"] > 0
    assert r["echo"] == {"seq": 7}
    assert {"initialized", "ping", "pong", "closed"} <= set(r["events"])
    # close() stopped the server (SIGTERM), reaped it, and it is gone.
    assert r["term_signal"] == signal.SIGTERM or r["exit_status"] == 0
    assert not process_alive(r["pid"])


@pytest.mark.parametrize("host", ["asyncio", "uvloop", "thread"])
def test_one_host_loop(host):
    if host == "uvloop":
        pytest.importorskip("uvloop", reason="uvloop is in requirements-dev.txt")
    (r,) = run_host("scenario.py", host)
    check_scenario(r)
    assert r["thread"] is (host != "thread")
    # The one loop with a connection runs the runtime, on any thread.
    assert r["mode"][0] == expected_mode(), r["mode"]


def test_two_loops_on_two_threads_each_get_their_own_items():
    results = run_host("scenario.py", "two-loops")
    assert len(results) == 2
    assert sorted(r["thread"] for r in results) == [False, True]
    for r in results:
        check_scenario(r)


def test_a_child_forked_before_any_connection_works_and_exits():
    (r,) = run_host("fork.py", "fresh")
    assert r["children"] == [0]
    check_scenario(r)


def test_children_forked_while_connections_are_busy_work_and_spare_the_parent():
    (r,) = run_host("fork.py", "busy")
    # Every child ran its own connection and exited through atexit; none
    # deadlocked, none touched the parent's servers.
    assert r["children"] == [0] * 6
    assert r["servers_kept"] and r["healthy"] and r["rtt"] > 0
    for pid in r["pids"]:
        assert not process_alive(pid)


NOTEBOOK = [
    # Registered before mcpping's own atexit hook, so it runs after it: the
    # marker exists only if mcpping's shutdown returned and the kernel
    # exited by itself.
    """import atexit, os, sys
atexit.register(lambda: open(MARKER, "w").write("clean exit"))
import mcpping
print("kernel", os.getpid())""",
    """ka = mcpping.KeepAlive(interval=0.05, timeout=2, min_interval=0.01, jitter_pct=0)
peer = await mcpping.connect(ECHO, keepalive=ka)
left_open = await mcpping.connect(ECHO, keepalive=None)
print("servers", peer.pid, left_open.pid)""",
    """rtt = await peer.ping(timeout=5)
answer = await peer.request("echo", {"seq": 7}, timeout=5)
pong = await peer.events("pong").__anext__()
print("ping", rtt > 0, answer["result"] == {"seq": 7}, peer.healthy)""",
    """info = await peer.close()
print("closed", info.term_signal, info.exit_status)""",
]


def test_a_jupyter_kernel_connects_pings_closes_and_shuts_down_cleanly(tmp_path):
    _ensure_kernel()
    marker = tmp_path / "exited"
    echo = [PY, str(HERE.parent / "peers" / "echo.py")]
    setup = f"MARKER = {str(marker)!r}\nECHO = {echo!r}\n"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(setup + NOTEBOOK[0])] + [
        nbformat.v4.new_code_cell(src) for src in NOTEBOOK[1:]]
    NotebookClient(nb, timeout=60, kernel_name="python3", shutdown_kernel="graceful",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"], outputs
    text = "".join(o.get("text", "") for o in outputs)
    lines = {line.split()[0]: line.split()[1:] for line in text.splitlines()}
    assert lines["ping"] == ["True", "True", "True"]
    # close() ends stdin and sends SIGTERM in the same turn: echo.py dies of
    # the signal, or (a busy machine preempting our thread between the two)
    # exits by itself on the EOF first. Either is the server's own exit.
    term, status = lines["closed"]
    assert term == str(int(signal.SIGTERM)) or (term, status) == ("0", "0"), lines["closed"]
    # The kernel exited on its own (no kill after the shutdown wait), and
    # took the connection left open with it.
    assert marker.read_text() == "clean exit"
    assert not process_alive(int(lines["kernel"][0]))
    for pid in lines["servers"]:
        assert not process_alive(int(pid))


def test_a_jupyter_kernel_keeps_floods_it_reads_slowly_or_not_at_all_bounded(tmp_path):
    # issue 23: the floods of test_backpressure.py, run by a kernel's loop.
    _ensure_kernel()
    cap = 1 << 20
    setup = (f"import json, sys\nsys.path.insert(0, {str(HOSTS)!r})\nimport flood_unread\n"
             f"CAP = {cap}\n")
    cells = [
        setup + "r = await flood_unread.requests_only(65536, 1024, CAP)\n"
                "print('requests', json.dumps(r))",
        "r = await flood_unread.messages(16384, 4096, CAP)\nprint('messages', json.dumps(r))",
        "r = await flood_unread.sdk(16384, 4096, CAP)\nprint('sdk', json.dumps(r))",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    NotebookClient(nb, timeout=120, kernel_name="python3", shutdown_kernel="graceful",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"], outputs
    text = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    r = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
         for line in text.splitlines() if line.split(" ", 1)[0] in ("requests", "messages", "sdk")}
    bound = 3 * cap + (8 << 20)
    assert r["requests"]["rss_growth"] < bound, r
    assert r["requests"]["dropped"] + r["requests"]["kept"] == 65537
    assert r["requests"]["last"]["method"] == "test/flood_done"
    for mode in ("messages", "sdk"):
        assert r[mode]["rss_growth"] < bound, r
        assert r[mode]["received"] == 16384 and r[mode]["in_order"], r
