"""`mcpping wrap` as people deploy it (issue 24 items 2 and 5): with its
defaults a call in flight to a frozen server fails fast and the next one
reaches a restarted server; the server's stderr passes through; a command
that cannot start is reported with the OS error, to the client too; the
config entry's name (--name) is `server` in records."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
import pytest

from conftest import PY, peer, process_alive, sdk_server

WRAP = [PY, "-m", "mcpping", "wrap"]
INITIALIZE = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
              b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')


async def test_with_the_defaults_a_call_to_a_stopped_server_fails_fast_and_the_next_works(tmp_path):
    """Before issue 24 this took the interval + timeout x 1.5 (17.5 s); a call
    in flight now has the process looked at halfway to the ping timeout, so
    the bound is 3 s plus restart time. The assertion leaves room for load."""
    log = tmp_path / "records.jsonl"
    argv = [*WRAP, "--log", str(log), "--", *sdk_server()]
    async with stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            first = int((await session.call_tool("pid", {})).content[0].text)
            os.kill(first, signal.SIGSTOP)
            try:
                started = time.monotonic()
                with pytest.raises(MCPError) as failed:
                    await session.call_tool("echo", {"text": "never answered"})
                took = time.monotonic() - started
            finally:
                if process_alive(first):
                    os.kill(first, signal.SIGCONT)
            assert "server stopped responding; restarted" in str(failed.value)
            assert took < 10.0, took
            second = int((await session.call_tool("pid", {})).content[0].text)
            assert second != first
    records = [json.loads(x) for x in log.read_text().splitlines()]
    stale = [r for r in records if r["event"] == "stale"]
    assert stale and stale[0]["proof"] == "process"
    assert not [r for r in records if r["event"] == "ping_timeout"]


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
