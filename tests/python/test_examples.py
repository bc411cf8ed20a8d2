"""The examples in examples/ run as a user would run them, and do what they say."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from conftest import PEERS, PY, ROOT, process_alive

EXAMPLES = ROOT / "examples"


def run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Runs an example in its own process group; on a hang, kills the group and fails."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{cmd} did not finish in {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def group_gone(pgid: int) -> bool:
    """True when no live (non-zombie) process is left in the group."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(rest[2]) == pgid and rest[0] not in ("Z", "X"):
            return False
    return True


def test_python_sdk_client():
    r = run([PY, str(EXAMPLES / "python_sdk_client.py")])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "connected to mcpping-demo (protocol 2025-11-25)"
    assert "tools: echo, add" in lines
    assert "add(2, 3) = 5" in lines and "echo('hello') = hello" in lines
    keepalive = [l for l in lines if re.fullmatch(r"pong \(keepalive\) seq=\d+ rtt=\d+\.\d{3} ms", l)]
    assert len(keepalive) >= 2
    assert lines[-1] == "done"
    assert "stale" not in r.stdout


def test_python_watchdog_kills_a_frozen_server(tmp_path):
    log = tmp_path / "watch.jsonl"
    r = run([PY, str(EXAMPLES / "python_watchdog.py"), "--log", str(log), "--freeze-after", "0.5"])
    assert r.returncode == 0, r.stdout + r.stderr
    pid = int(re.search(r"^watching mcpping-demo pid=(\d+)$", r.stdout, re.M).group(1))
    lines = r.stdout.splitlines()
    states = [l.split(":")[0] for l in lines if l.startswith(("suspect:", "stale:", "recovered:"))]
    assert states == ["suspect", "stale"]
    suspect_at = next(i for i, l in enumerate(lines) if l.startswith("suspect:"))
    assert lines.index(f"freezing pid={pid} (SIGSTOP)") < suspect_at
    assert re.search(r"^closed: the server went stale", r.stdout, re.M)
    assert f"process group {pid} is gone" in lines
    assert not process_alive(pid) and group_gone(pid)
    records = [json.loads(l) for l in log.read_text().splitlines()]
    events = [x["event"] for x in records]
    assert events[0] == "ping_ok"  # keepalive ran before the freeze
    assert "suspect" in events and events.index("suspect") < events.index("stale")
    assert events[-1] == "closed"
    assert all(x["peer"] == "mcpping-demo" and x["transport"] == "stdio" for x in records)


def test_python_watchdog_leaves_a_healthy_server_alone(tmp_path):
    log = tmp_path / "watch.jsonl"
    r = run([PY, str(EXAMPLES / "python_watchdog.py"), "--log", str(log), "--duration", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    pid = int(re.search(r"pid=(\d+)", r.stdout).group(1))
    assert r.stdout.splitlines()[-1] == "still alive after 1 s"
    assert "suspect" not in r.stdout and "stale" not in r.stdout
    assert group_gone(pid)  # closed by the example on the way out
    events = [json.loads(l)["event"] for l in log.read_text().splitlines()]
    assert "ping_ok" in events and "stale" not in events and events[-1] == "closed"


def test_python_watchdog_exits_1_when_the_server_exits_by_itself(tmp_path):
    # dies.py answers initialize, then exits: a death, not a stale verdict.
    r = run([PY, str(EXAMPLES / "python_watchdog.py"), "--log", str(tmp_path / "w.jsonl"),
             "--", PY, str(PEERS / "dies.py"), "--after", "2"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "stale" not in r.stdout and re.search(r"^closed: ", r.stdout, re.M)


def test_python_watchdog_reports_a_server_that_cannot_start(tmp_path):
    r = run([PY, str(EXAMPLES / "python_watchdog.py"), "--log", str(tmp_path / "w.jsonl"),
             "--", "/nonexistent/server"])
    assert r.returncode == 2 and "watchdog: " in r.stderr


def test_python_guard_http_server():
    r = run([PY, str(EXAMPLES / "python_guard_http_server.py")])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "connected to guarded-http-demo over Streamable HTTP"
    assert "echo = through the guard" in lines
    assert any(re.fullmatch(r"manual ping rtt=\d+\.\d{3} ms", l) for l in lines)
    assert any(re.fullmatch(r"keepalive pong rtt=\d+\.\d{3} ms state=alive", l) for l in lines)
    assert re.search(r"^stats: \d+ pings, \d+ pongs, 0\.0% loss", r.stdout, re.M)
    assert lines[-1] == "server stopped"


@pytest.fixture(scope="module")
def c_ping() -> str:
    """Builds the C example through its Makefile rule, as the README says."""
    r = subprocess.run(["make", "-s", "build/example-c-ping"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(ROOT / "build" / "example-c-ping")


def test_c_ping_pings_the_demo(c_ping):
    r = run([c_ping, "3", PY, "-m", "mcpping.demo"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [l.split(" time=")[0] for l in lines[:3]] == ["pong seq=1", "pong seq=2", "pong seq=3"]
    assert all(re.fullmatch(r"pong seq=\d time=\d+\.\d{3} ms", l) for l in lines[:3])
    assert lines[3:] == ["closed: closed by the application", "3 pings sent, 3 pongs received"]


def test_c_ping_fails_when_ping_is_unsupported(c_ping):
    r = run([c_ping, "3", PY, str(PEERS / "unsupported.py")])
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == "unsupported seq=1"
    assert r.stdout.splitlines()[-1] == "1 pings sent, 0 pongs received"


def test_c_ping_usage(c_ping):
    r = run([c_ping])
    assert r.returncode == 2 and "usage:" in r.stderr
