"""The mcpping command: output format, --json keys, exit status (docs/cli.md).

Every byte and status comes from the C application layer (csrc/src/app);
these run the real command against real peers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import HERE, PY, peer

# The console script of the Python running the tests (a venv's), not
# whichever mcpping comes first on PATH.
EXE = shutil.which("mcpping", path=os.path.dirname(sys.executable)) or shutil.which("mcpping")


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout)


def test_console_script_is_installed():
    assert EXE is not None


def test_demo_default_prints_ping8_style_output():
    r = run("-i", "0.05")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert re.fullmatch(r"MCPPING mcpping-demo \(stdio, protocol 2025-11-25\): "
                        r"method ping, timeout 5\.0 s, interval 0\.1 s", lines[0])
    replies = lines[1:6]
    for i, line in enumerate(replies, 1):
        assert re.fullmatch(rf"ping reply from mcpping-demo: seq={i} time=\d+\.\d{{3}} ms", line)
    assert lines[6] == ""
    assert lines[7] == "--- mcpping-demo mcpping statistics ---"
    assert re.fullmatch(r"5 sent, 5 received, 0% loss, time \d+ ms", lines[8])
    assert re.fullmatch(r"rtt min/avg/max/mdev = \d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3} ms",
                        lines[9])
    assert len(lines) == 10
    assert r.stderr == ""


def test_python_dash_m_runs_the_same_command():
    r = subprocess.run([PY, "-m", "mcpping", "-c", "1", "-q"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0
    assert r.stdout.splitlines()[0].startswith("MCPPING mcpping-demo")
    assert "pong from" not in r.stdout


def test_json_lines_and_summary_keys():
    r = run("--json", "-c", "3", "-i", "0", "--", *peer("echo"))
    assert r.returncode == 0, r.stderr
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert objs[0] == {"event": "connected", "peer": "echo", "transport": "stdio",
                       "protocol_version": "2025-11-25", "session_id": None, "method": "ping"}
    assert [o["event"] for o in objs[1:4]] == ["reply"] * 3
    assert [(o["seq"], o["method"]) for o in objs[1:4]] == [(1, "ping"), (2, "ping"), (3, "ping")]
    s = objs[-1]
    # DESIGN.md's summary object, exactly.
    assert list(s) == ["event", "sent", "received", "loss_pct", "rtt_ms"]
    assert (s["sent"], s["received"], s["loss_pct"]) == (3, 3, 0.0)
    assert list(s["rtt_ms"]) == ["min", "avg", "max", "mdev", "p50", "p99"]
    assert all(isinstance(v, float) for v in s["rtt_ms"].values())


def test_quiet_json_prints_only_connected_and_summary():
    r = run("--json", "-q", "-c", "2", "-i", "0")
    assert [json.loads(l)["event"] for l in r.stdout.splitlines()] == ["connected", "summary"]


def test_loss_exits_1_with_timeout_lines_and_one_reason():
    r = run("-c", "2", "-i", "0", "-W", "0.2", "--", *peer("drop_pings"))
    assert r.returncode == 1
    assert "ping timeout from drop_pings: seq=1 no answer after 200 ms" in r.stdout
    assert "2 sent, 0 received, 100% loss" in r.stdout
    assert "rtt min" not in r.stdout
    assert r.stderr == "mcpping: 2 of 2 replies missing\n"


def test_frozen_server_exits_1():
    # freeze.py answers initialize and its notification, then stops.
    r = run("-c", "1", "-W", "0.3", "--", *peer("freeze", "--after", "2"))
    assert r.returncode == 1, r.stderr
    assert "ping timeout from freeze: seq=1" in r.stdout
    assert r.stderr == "mcpping: 1 of 1 replies missing\n"


def test_ping_error_line_and_exit_1():
    r = run("--json", "-c", "1", "--", PY, str(HERE / "servers" / "bad_pongs.py"), "error")
    assert r.returncode == 1
    ev = json.loads(r.stdout.splitlines()[1])
    assert ev == {"event": "error", "seq": 1, "method": "ping", "code": -32603,
                  "message": "Internal error"}


def test_a_server_refusing_ping_is_alive_by_tools_list_under_auto():
    r = run("-c", "2", "-i", "0", "--", *peer("unsupported"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1] == "ping refused from unsupported: seq=1 code=-32601 Method not found"
    assert re.fullmatch(r"tools/list reply from unsupported: seq=1 time=\d+\.\d{3} ms", lines[2])
    assert "2 sent, 2 received, 0% loss" in r.stdout
    assert r.stderr == ""


def test_method_ping_on_a_server_refusing_ping_exits_4_with_one_line():
    r = run("--json", "--method", "ping", "-c", "3", "--", *peer("unsupported"))
    assert r.returncode == 4
    assert json.loads(r.stdout.splitlines()[1])["event"] == "unsupported"
    assert r.stderr == "mcpping: ping unsupported: code=-32601 Method not found\n"


def test_a_2026_07_28_server_is_alive_by_server_discover_and_never_pinged(tmp_path):
    log = tmp_path / "gov.jsonl"
    r = run("-c", "2", "-i", "0", "--log", str(log), "--", *peer("modern"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("MCPPING modern (stdio, protocol 2026-07-28): method server/discover, "
                        "timeout 5.0 s, interval 0.0 s")
    assert re.fullmatch(r"server/discover reply from modern: seq=1 time=\d+\.\d{3} ms", lines[1])
    assert "ping refused" not in r.stdout and "ping reply" not in r.stdout
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    # The engine notes once that the version has no ping; no ping has an id.
    assert [x["ping_id"] for x in recs if x["event"].startswith("ping")] == [None], recs
    r = run("--method", "ping", "--", *peer("modern"))
    assert r.returncode == 4
    assert r.stderr.startswith("mcpping: ping unsupported: protocol 2026-07-28 has no ping")


def test_missing_command_exits_3_with_one_line_naming_the_os_error():
    r = run("-c", "1", "--", "/nonexistent/server")
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr == ("mcpping: cannot start /nonexistent/server: no such file or directory "
                        "(ENOENT)\n")


def test_expect_tool_present_exits_0_missing_exits_4():
    r = run("-c", "1", "--expect-tool", "echo", "--expect-tool", "add")
    assert r.returncode == 0, r.stderr
    r = run("-c", "1", "--expect-tool", "echo", "--expect-tool", "nope")
    assert r.returncode == 4
    assert r.stderr == "mcpping: mcpping-demo does not list the tool 'nope' (--expect-tool)\n"


def test_env_reaches_the_server():
    # The server exits at once unless MCPPING_TEST_ENV is set: exit 3 without it.
    script = 'test "$MCPPING_TEST_ENV" = yes && exec "$0" "$1"'
    echo = peer("echo")
    assert run("-c", "1", "--", "sh", "-c", script, *echo).returncode == 3
    r = run("-c", "1", "--env", "MCPPING_TEST_ENV=yes", "--", "sh", "-c", script, *echo)
    assert r.returncode == 0, r.stderr


def test_a_connect_timeout_names_what_the_server_wrote_instead_of_json_rpc():
    """A server speaking LSP framing waited out --connect-timeout and said
    only that, as if it were silent."""
    r = run("--connect-timeout", "1", "-c", "1", "--", *peer("misframed", "--frame", "lsp"))
    assert r.returncode == 3
    assert r.stderr == ("mcpping: no connection and handshake within 1.0 s (--connect-timeout); "
                        'the server wrote a line that is not JSON-RPC: "Content-Length: 146", '
                        'then 146 bytes that no newline ends: "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":'
                        '\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\":\\"2..."\n')
    assert r.stdout == ""


@pytest.mark.parametrize("args", [["-x"], ["-c"], ["-c", "zero"], ["-W", "0"], ["--"],
                                  ["ftp://x"], ["-W", "4294968"], ["-W", "0.0001"],
                                  ["--method", "pong"], ["--connect-timeout", "-1"],
                                  ["-H", "nocolon", "http://h/"], ["--env", "X", "--", "x"],
                                  ["-H", "A: b", "--", "x"], ["--write"]])
def test_bad_usage_exits_2(args):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("mcpping: ") and r.stderr.count("\n") == 1
    assert r.stdout == ""


def test_a_ping_timeout_past_the_engine_limit_is_a_usage_error_naming_the_range():
    r = run("-W", "4294968")
    assert r.returncode == 2
    assert r.stderr == ("mcpping: -W must be between 0.001 and 2147483.647 seconds, "
                        "not 4294968.0\n")


def test_deadline_stops_an_endless_run():
    # The deadline covers the server's start-up too: 2 s leaves a loaded
    # machine time to start Python and still ping at least 3 times.
    t0 = time.monotonic()
    r = run("-w", "2", "-i", "0.1", "--", *peer("echo"))
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    sent = int(re.search(r"(\d+) sent", r.stdout).group(1))
    assert 3 <= sent <= 21
    assert 2 <= took < 6, took


def test_log_writes_governance_records(tmp_path):
    log = tmp_path / "gov.jsonl"
    r = run("-c", "2", "-i", "0", "--log", str(log))
    assert r.returncode == 0
    recs = [json.loads(l) for l in log.read_text().splitlines()]
    assert [x["event"] for x in recs].count("ping_ok") == 2


def test_http_target(http_server):
    r = run("--json", "-c", "3", "-i", "0", http_server)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert objs[0]["transport"] == "streamable-http" and objs[0]["peer"] == "sdk-server"
    assert objs[0]["session_id"]  # Mcp-Session-Id kept from initialize
    assert objs[-1]["received"] == 3


def test_http_connection_refused_exits_3():
    from conftest import free_port
    url = f"http://127.0.0.1:{free_port()}/mcp"
    r = run("-c", "1", url)
    assert r.returncode == 3
    assert r.stderr == f"mcpping: cannot connect to {url}: ECONNREFUSED\n"


def test_connect_timeout_bounds_a_handshake_that_never_ends():
    """Issue 24: -W did not cover the handshake (30 s against a frozen server)."""
    srv = subprocess.Popen(peer("http_fault", "--mode", "silent"), stdout=subprocess.PIPE, text=True)
    try:
        url = srv.stdout.readline().strip()
        t0 = time.monotonic()
        # The bound is the work: a 30 s handshake wait would hit this timeout.
        r = run("--connect-timeout", "1", "-c", "1", url, timeout=15)
        took = time.monotonic() - t0
    finally:
        srv.kill()
        srv.wait()
    assert r.returncode == 3
    assert r.stderr == "mcpping: no connection and handshake within 1.0 s (--connect-timeout)\n"
    assert took < 15


class _NoPing(BaseHTTPRequestHandler):
    """Answers initialize with JSON, and 404 with JSON-RPC -32601 (what
    "unsupported" looks like over HTTP) to every other request."""

    #: The body of the 404 (bare: no JSON-RPC error at all).
    not_found = json.dumps({"jsonrpc": "2.0", "id": None,
                            "error": {"code": -32601, "message": "Method not found"}}).encode()

    #: The X-Test header of every POST seen (to check -H).
    seen: list[str | None] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(self.headers.get("X-Test"))
        if body.get("method") == "initialize":
            data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "no-ping", "version": "0"}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif "id" in body:
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.not_found)))
            self.end_headers()
            self.wfile.write(self.not_found)
        else:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *a: object) -> None:
        pass


def test_http_404_refusing_ping_and_tools_list_exits_4_and_headers_are_sent():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _NoPing)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _NoPing.seen = []
    try:
        r = run("-c", "2", "-H", "X-Test: yes", f"http://127.0.0.1:{srv.server_address[1]}/mcp")
    finally:
        srv.shutdown()
    assert r.returncode == 4
    assert r.stderr == "mcpping: tools/list unsupported: code=-32601 Method not found\n"
    assert _NoPing.seen and set(_NoPing.seen) == {"yes"}


class _Bare404(_NoPing):
    not_found = b""


def test_http_bare_404_without_a_session_is_a_failed_ping_not_unsupported():
    """Issue 8 item 11: only a 404 carrying -32601 means unsupported."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Bare404)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        r = run("--json", "-c", "2", "-i", "0.05", f"http://127.0.0.1:{srv.server_address[1]}/mcp")
    finally:
        srv.shutdown()
    assert r.returncode == 1, r.stderr
    events = [json.loads(line)["event"] for line in r.stdout.splitlines()]
    assert events.count("error") == 2 and "unsupported" not in events


class _Modern(BaseHTTPRequestHandler):
    """A Streamable HTTP server on 2026-07-28 only: refuses initialize and
    ping with -32601, answers server/discover; no sessions."""

    methods: list[str] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.methods.append(body.get("method"))
        if "id" not in body:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if body.get("method") == "server/discover":
            msg = {"jsonrpc": "2.0", "id": body["id"], "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-http",
                                                                 "version": "0"}}}}
        else:
            msg = {"jsonrpc": "2.0", "id": body["id"],
                   "error": {"code": -32601, "message": "Method not found"}}
        data = json.dumps(msg).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a: object) -> None:
        pass


def test_http_2026_07_28_server_is_alive_by_server_discover_and_never_pinged():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Modern)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _Modern.methods = []
    try:
        r = run("-c", "2", "-i", "0", f"http://127.0.0.1:{srv.server_address[1]}/mcp")
    finally:
        srv.shutdown()
    assert r.returncode == 0, r.stderr
    assert "method server/discover" in r.stdout.splitlines()[0]
    assert "ping" not in _Modern.methods


def test_ctrl_c_stops_prints_the_summary_and_exits_by_the_answers_so_far():
    import signal as _signal
    p = subprocess.Popen([EXE, "-i", "0.05", "--", *peer("echo")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        replies = 0
        while replies < 2:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            replies += line.startswith("ping reply from echo")
        p.send_signal(_signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        p.kill()
    m = re.search(r"--- echo mcpping statistics ---\n(\d+) sent, (\d+) received, ", out)
    assert m, out
    assert int(m.group(2)) >= 2
    # A check cut short by Ctrl-C is neither sent nor lost.
    assert p.returncode == (0 if m.group(1) == m.group(2) else 1), err
