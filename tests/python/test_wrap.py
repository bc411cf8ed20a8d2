"""`mcpping wrap` (issue 13) under the official Python SDK's ClientSession and
real servers: bytes unchanged both ways, a stopped server answered for and
restarted, and no server outliving its client."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import PEERS, PY, ROOT, peer, process_alive, sdk_server

WRAP = [PY, "-m", "mcpping", "wrap"]
TIME_SERVER = [str(Path(PY).with_name("mcp-server-time"))]


def params(argv: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=argv[0], args=argv[1:])


def tee(prefix: Path, argv: list[str]) -> list[str]:
    return [PY, str(PEERS / "tee.py"), str(prefix), "--", *argv]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def ours(line: bytes) -> bool:
    """A line of mcpping's own keepalive (our ids), which only the server sees."""
    return b'"mcpp-' in line


EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


async def time_calls(session: ClientSession) -> str:
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == {"get_current_time", "convert_time"}
    res = await session.call_tool("convert_time", {
        "source_timezone": "Etc/UTC", "time": "12:00", "target_timezone": "Etc/GMT-9"})
    assert not res.is_error
    assert json.loads(res.content[0].text)["target"]["datetime"].endswith("21:00:00+09:00")
    return res.content[0].text


async def everything_calls(session: ClientSession) -> str:
    tools = await session.list_tools()
    assert "echo" in {t.name for t in tools.tools}
    res = await session.call_tool("echo", {"message": "through the wrap"})
    assert res.content[0].text == "Echo: through the wrap"
    return res.content[0].text


SERVERS = {
    "mcp-server-time": (lambda: TIME_SERVER, time_calls),
    "server-everything": (lambda: [shutil.which("node") or "node", str(EVERYTHING), "stdio"],
                          everything_calls),
}


async def session_run(argv: list[str], calls: Callable[[ClientSession], Awaitable[str]]) -> str:
    async with stdio_client(params(argv)) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            return await calls(session)


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_official_client_through_wrap_sees_the_bytes_of_a_direct_run(tmp_path, server):
    argv, calls = SERVERS[server][0](), SERVERS[server][1]
    direct = tmp_path / "direct"
    client, srv = tmp_path / "client", tmp_path / "server"
    plain = await session_run(tee(direct, argv), calls)
    wrapped = await session_run(tee(client, [*WRAP, "--", *tee(srv, argv)]), calls)
    assert wrapped == plain
    # What the client sent is what the server got, and the reverse, byte
    # for byte and in order (our own keepalive lines aside)...
    assert lines(client.with_suffix(".up")) == [
        x for x in lines(srv.with_suffix(".up")) if not ours(x)]
    assert lines(client.with_suffix(".down")) == lines(srv.with_suffix(".down"))
    # ...and the same bytes as without the wrap.
    assert lines(client.with_suffix(".up")) == lines(direct.with_suffix(".up"))
    assert lines(client.with_suffix(".down")) == lines(direct.with_suffix(".down"))
    assert len(lines(client.with_suffix(".up"))) >= 4


async def test_stopped_server_fails_the_call_then_the_next_call_works_on_a_new_server(tmp_path):
    log = tmp_path / "records.jsonl"
    interval, timeout, failures = 1.0, 1.0, 2
    argv = [*WRAP, "--interval", "1", "--timeout", "1", "--failures", "2", "--log", str(log),
            "--", *sdk_server()]
    async with stdio_client(params(argv)) as (r, w):
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
            assert took <= interval + timeout * failures + 1.0, took
            # The next call reaches a new server, with no new handshake by us.
            second = int((await session.call_tool("pid", {})).content[0].text)
            assert second != first
            assert (await session.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert any(r["event"] == "stale" for r in records)
    assert [r["reconnect_attempt"] for r in records if r["event"] == "reconnect"] == [1]
    assert not process_alive(first)


def test_no_restart_answers_the_request_and_exits_with_the_reason(tmp_path):
    proc = subprocess.Popen([*WRAP, "--no-restart", "--", *peer("dies", "--after", "1")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}\n')
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert proc.wait(20) == 1
    err = proc.stderr.read()
    proc.stdin.close()
    assert answer["id"] == 7
    assert answer["error"]["message"] == "server exited"
    assert answer["error"]["code"] == -32003
    assert answer["error"]["data"]["mcpping"] == "in_doubt"
    assert b"server exited with status 3" in err and b"not restarting (--no-restart)" in err


def test_server_pings_reach_the_client_and_are_not_answered_for_it():
    proc = subprocess.Popen([*WRAP, "--", *peer("echo")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"test/ping_me","params":{"count":1}}\n')
    proc.stdin.flush()
    seen = [json.loads(proc.stdout.readline()) for _ in range(2)]
    ping = next(m for m in seen if m.get("method") == "ping")
    # We answer it, as the client; the server then says whose answer it got.
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ping["id"],
                                 "result": {"from": "client"}}).encode() + b"\n")
    proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    proc.stdin.close()
    rest = [json.loads(x) for x in proc.stdout.read().splitlines()]
    assert proc.wait(10) == 0
    assert {"jsonrpc": "2.0", "id": 2, "result": {}} in rest


def test_client_killed_by_sigkill_takes_a_stubborn_server_with_it(tmp_path):
    pidfile = tmp_path / "server.pid"
    # The client: a process that launches the wrap with pipes and waits.
    client = subprocess.Popen([PY, "-c", (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
        "time.sleep(1000)\n"), *WRAP, "--", *peer("stubborn", "--pidfile", str(pidfile))])
    deadline = time.monotonic() + 20
    while not pidfile.exists():
        assert time.monotonic() < deadline, "the server never started"
        time.sleep(0.02)  # a foreign process's readiness: nothing to await
    server = int(pidfile.read_text())
    client.kill()
    client.wait()
    killed = time.monotonic()
    while process_alive(server) and time.monotonic() - killed < 5:
        time.sleep(0.02)
    gone = time.monotonic() - killed
    assert not process_alive(server)
    assert gone <= 2.0, gone


def test_metrics_use_the_library_names(tmp_path):
    from mcpping.metrics import METRICS
    proc = subprocess.Popen([*WRAP, "--metrics", "127.0.0.1:0", "--name", "echo-peer", "--",
                             *peer("echo")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stderr and proc.stdin
    line = proc.stderr.readline().decode()
    assert line.startswith("mcpping wrap: metrics on http://127.0.0.1:"), line
    url = line.split(" on ", 1)[1].strip()
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    proc.stdin.close()
    assert proc.wait(10) == 0
    names = {x.split()[2] for x in text.splitlines() if x.startswith("# TYPE")}
    assert names == set(METRICS)
    # The server label is the config entry's name (--name), in front.
    assert 'mcpping_peer_state{server="echo-peer",peer="echo-peer",transport="stdio",' \
        'state="alive"} 1' in text


def test_metrics_server_label_stays_the_config_name_as_the_peer_label_learns_the_servers():
    proc = subprocess.Popen([*WRAP, "--metrics", "127.0.0.1:0", "--name", "my-entry", "--",
                             *peer("echo", "--name", "echo-info")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr
    url = proc.stderr.readline().decode().split(" on ", 1)[1].strip()
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":'
                     b'"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "echo-info"
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    want = ('mcpping_peer_state{server="my-entry",peer="echo-info",transport="stdio",'
            'state="alive"} 1\n')
    # The wrap learns the name once the handshake ends (our initialized
    # notification): a scrape or two behind what we wrote.
    for _ in range(50):
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        if want in text:
            break
    proc.stdin.close()
    assert proc.wait(10) == 0
    assert want in text, text


@pytest.mark.parametrize("args, message", [
    (["--interval", "x", "--", "true"], "--interval needs a number"),
    (["--timeout", "0", "--", "true"], "--timeout must be between"),
    (["--failures", "0", "--", "true"], "--failures must be an integer between 1 and 1000"),
    (["--bogus", "--", "true"], "unknown option"),
    ([], "a server command is required"),
    (["--", "/nonexistent/server"], "cannot start /nonexistent/server"),
    (["--metrics", "10.1.2.3:9", "--", "true"], "only a loopback address"),
])
def test_bad_command_lines_exit_2_with_one_line(args, message):
    r = subprocess.run([*WRAP, *args], capture_output=True, stdin=subprocess.DEVNULL, timeout=20)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("mcpping wrap: ") and message in err, err


def test_restart_replays_the_handshake_swallows_its_answer_and_asks_for_refresh(tmp_path):
    proc = subprocess.Popen([*WRAP, "--", *peer("dies", "--after", "3", "--list-changed")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr

    def send(line: bytes) -> None:
        assert proc.stdin
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    def read() -> dict:
        assert proc.stdout
        return json.loads(proc.stdout.readline())

    send(b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":'
         b'"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}')
    assert read()["result"]["serverInfo"]["name"] == "dies"
    send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    # The third message kills the server, unanswered: the wrap answers it.
    send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}')
    gone = read()
    assert gone["id"] == 5 and gone["error"]["message"] == "server exited; restarted"
    # Sent while the server is down: it waits for the new server, which
    # gets the client's handshake first. The client sees no second
    # initialize answer, only the refresh notifications its capabilities allow.
    send(b'{"jsonrpc":"2.0","id":6,"method":"tools/list"}')
    seen = [read() for _ in range(3)]
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in seen
    assert {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"} in seen
    assert {"jsonrpc": "2.0", "id": 6, "result": {"tools": []}} in seen
    proc.stdin.close()
    rest = proc.stdout.read()
    assert b"resources/list_changed" not in rest and b'"init"' not in rest
    assert proc.wait(10) == 0
    assert b"server exited with status 3; restarting in" in proc.stderr.read()


def test_docs_show_the_help_and_config_snippets_that_parse():
    from mcpping import config
    from mcpping.wrap import USAGE, WrapOptions, parse_wrap_args
    from test_docs import fenced_blocks
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text[text.index("## `mcpping wrap`"):]
    blocks = fenced_blocks(section)
    assert blocks[0][2] == USAGE
    snippets = [body for _, info, body in blocks if info == "json"]
    assert len(snippets) == 4  # Claude Desktop, Cursor, VS Code, Claude Code
    for body in snippets:
        servers = config.parse(body, "docs/cli.md").servers
        assert servers and all(s.command == "mcpping" and s.args[0] == "wrap" for s in servers)
        for s in servers:
            assert isinstance(parse_wrap_args(list(s.args[1:])), WrapOptions)


def test_client_killed_while_a_leftover_holds_our_stdin_still_takes_the_server(tmp_path):
    """No EOF comes (the client's other child keeps the pipe open): the wrap
    sees its parent go instead."""
    pidfile = tmp_path / "server.pid"
    client = subprocess.Popen([PY, "-c", (
        "import os, subprocess, sys, time\n"
        "r, w = os.pipe()\n"
        "subprocess.Popen(sys.argv[1:], stdin=r, stdout=subprocess.PIPE)\n"
        "h = subprocess.Popen(['sleep', '1000'], pass_fds=[w], start_new_session=True,\n"
        "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(h.pid, flush=True)\n"
        "time.sleep(1000)\n"), *WRAP, "--", *peer("stubborn", "--pidfile", str(pidfile))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert client.stdout and client.stderr
    holder = int(client.stdout.readline())
    try:
        deadline = time.monotonic() + 20
        while not pidfile.exists():
            assert time.monotonic() < deadline, "the server never started"
            time.sleep(0.02)  # a foreign process's readiness: nothing to await
        server = int(pidfile.read_text())
        client.kill()
        client.wait()
        killed = time.monotonic()
        while process_alive(server) and time.monotonic() - killed < 5:
            time.sleep(0.02)
        gone = time.monotonic() - killed
        assert not process_alive(server)
        assert gone <= 2.0, gone
        assert process_alive(holder)  # our stdin's write end is still open
    finally:
        os.kill(holder, signal.SIGKILL)
    assert b"mcpping wrap: the client (pid %d) is gone" % client.pid in client.stderr.read()


def test_a_session_without_ping_is_watched_by_process_proofs_and_restarted(tmp_path):
    """Protocol 2026-07-28 (no ping, no initialize): the wrap sends no ping,
    convicts a stopped server by its process state, and the next call works."""
    log = tmp_path / "records.jsonl"
    proc = subprocess.Popen([*WRAP, "--interval", "1", "--timeout", "1", "--failures", "2",
                             "--log", str(log), "--", *peer("modern")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout

    def call(line: bytes) -> dict:
        assert proc.stdin and proc.stdout
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    meta = b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}'
    found = call(b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{' + meta + b'}}')
    assert found["result"]["supportedVersions"] == ["2026-07-28"]
    pid_call = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"pid",' + meta + b'}}'
    stopped = json.loads(call(pid_call % 2)["result"]["content"][0]["text"])
    os.kill(stopped, signal.SIGSTOP)
    try:
        started = time.monotonic()
        gone = call(pid_call % 3)
        took = time.monotonic() - started
    finally:
        if process_alive(stopped):
            os.kill(stopped, signal.SIGCONT)
    assert gone["id"] == 3 and gone["error"]["message"] == "server stopped responding; restarted"
    assert took <= 1 + 1 * 2 + 1.0, took
    second = call(pid_call % 4)
    assert "result" in second
    proc.stdin.close()
    assert proc.wait(10) == 0
    records = [json.loads(x) for x in log.read_text().splitlines()]
    stale = [r for r in records if r["event"] == "stale"]
    assert stale and stale[0]["protocol_version"] == "2026-07-28"
    assert stale[0]["proof"] == "process"
    # No ping on a session whose protocol has none: "unsupported" is
    # recorded (for each server), no ping was sent.
    pings = [r for r in records if r["event"].startswith("ping")]
    assert pings and all(r["event"] == "ping_unsupported" and r["ping_id"] is None
                         for r in pings)
    assert not process_alive(stopped)
