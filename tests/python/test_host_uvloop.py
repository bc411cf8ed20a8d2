"""mcpping under uvloop next to asyncio subprocesses: no zombie server, close()
returns, the interpreter exits (issue 8, item 1). The host runs in its own
process with a timeout, so a hang fails instead of stalling the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from conftest import HERE, PY

pytest.importorskip("uvloop", reason="uvloop is in requirements-dev.txt")


def test_uvloop_host_with_subprocesses_reaps_and_exits():
    proc = subprocess.Popen([PY, str(HERE / "hosts" / "uvloop_subprocess.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the uvloop host hung (close() or interpreter exit)")
    assert proc.returncode == 0, err
    r = json.loads(out)
    assert r["rtt"] > 0
    assert r["child_out"] == "hi" and r["child_rc"] == 0
    # Reaped by mcpping itself, not left <defunct>.
    assert r["server_state"] == "gone"
    assert r["term_signal"] == signal.SIGTERM
