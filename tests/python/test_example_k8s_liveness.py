"""examples/k8s_liveness/deployment.yaml: its probe commands, run as the kubelet
would, judge a real Streamable HTTP server right: healthy, frozen, gone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import PY, ROOT, free_port, sdk_server, wait_port

MANIFEST = (ROOT / "examples" / "k8s_liveness" / "deployment.yaml").read_text()


def probes() -> dict[str, tuple[list[str], int]]:
    """Each probe of the manifest: its exec command and timeoutSeconds."""
    out = {}
    for m in re.finditer(r"(\w+Probe):\n\s+exec:\n\s+command: (\[.*\])\n(?:\s+\w+: \d+\n)*?"
                         r"\s+timeoutSeconds: (\d+)", MANIFEST):
        out[m.group(1)] = (json.loads(m.group(2)), int(m.group(3)))
    return out


def run_probe(name: str, url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs the probe against url with this interpreter's mcpping, bounded as the kubelet does."""
    command, timeout = probes()[name]
    assert command[0] == "mcpping" and command[-1] == "http://127.0.0.1:8000/mcp"
    argv = [PY, "-m", "mcpping", *command[1:-1], url]
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 5)
    return r, time.monotonic() - t0


@pytest.fixture
def server():
    port = free_port()
    proc = subprocess.Popen(sdk_server("http", str(port)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_port(port, proc)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait()


def test_the_manifest_has_both_probes_bounded_under_their_timeouts():
    found = probes()
    assert set(found) == {"livenessProbe", "readinessProbe"}
    for command, timeout in found.values():
        deadline = float(command[command.index("-w") + 1])
        assert deadline < timeout  # the probe ends on its own before the kubelet kills it


@pytest.mark.parametrize("probe", ["livenessProbe", "readinessProbe"])
def test_probe_passes_on_a_healthy_server(server, probe):
    _, url = server
    r, _ = run_probe(probe, url)
    assert r.returncode == 0, r.stderr
    assert "1 sent, 1 received, 0% loss" in r.stdout


def test_liveness_probe_fails_in_time_on_a_frozen_server(server):
    proc, url = server
    assert run_probe("livenessProbe", url)[0].returncode == 0
    # SIGSTOP: the port still accepts (the kernel's backlog), nothing answers.
    os.killpg(proc.pid, signal.SIGSTOP)
    r, took = run_probe("livenessProbe", url)
    # Each probe opens a new session, so a frozen server fails at initialize,
    # bounded by -w (the connect timeout's bound too): exit 3.
    assert r.returncode == 3 and "(--connect-timeout)" in r.stderr, (r.returncode, r.stderr)
    assert took < probes()["livenessProbe"][1]
    os.killpg(proc.pid, signal.SIGCONT)
    assert run_probe("livenessProbe", url)[0].returncode == 0  # and it recovers


def test_liveness_probe_fails_with_3_when_nothing_listens(server):
    proc, url = server
    proc.kill()
    proc.wait()
    r, _ = run_probe("livenessProbe", url)
    assert r.returncode == 3
    assert "cannot connect" in r.stderr
