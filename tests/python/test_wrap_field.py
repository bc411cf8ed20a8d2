"""`mcpping wrap` as people deploy it (issue 24 item 5): the server's
stderr passes through; a command
that cannot start is reported with the OS error, to the client too; the
config entry's name (--name) is `server` in records."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import PY, peer

WRAP = [PY, "-m", "mcpping", "wrap"]
INITIALIZE = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
              b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')


def test_missing_command_is_answered_with_the_os_error_and_said_on_stderr():
    proc = subprocess.run([*WRAP, "--", "/nonexistent/mcp-server", "--port", "1"],
                          input=INITIALIZE, capture_output=True, timeout=30)
    assert proc.returncode == 2
    answer = json.loads(proc.stdout)
    assert answer["id"] == 0
    assert answer["error"]["message"] == "server could not start"
    reason = "cannot start /nonexistent/mcp-server: no such file or directory (ENOENT)"
    assert answer["error"]["data"] == {"mcpping": "cancelled", "reason": reason}
    assert proc.stderr.decode() == f"mcpping wrap: {reason}\n"


def test_the_servers_stderr_passes_through():
    proc = subprocess.run([*WRAP, "--", *peer("echo", "--stderr", "hello from the server")],
                          input=INITIALIZE, capture_output=True, timeout=30)
    assert proc.returncode == 0
    assert b"hello from the server\n" in proc.stderr
    assert json.loads(proc.stdout)["result"]["serverInfo"]["name"] == "echo"


@pytest.mark.parametrize("name", [None, "time-entry"])
def test_name_is_the_server_field_of_records_and_peer_stays_the_servers(tmp_path, name):
    log = tmp_path / "records.jsonl"
    named = ["--name", name] if name else []
    proc = subprocess.run([*WRAP, *named, "--log", str(log), "--", *peer("echo", "--name", "srv")],
                          input=INITIALIZE, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert records and records[-1]["event"] == "closed"
    assert {r["peer"] for r in records} == {"srv"}
    assert {r["server"] for r in records} == {name or "srv"}
