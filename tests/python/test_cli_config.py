"""``mcpping --config``: every server of a client config pinged at once,
against real servers (docs/cli.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import PY, peer, process_alive
from test_cli import EXE

SECRET = "sekrit-7f3a9c"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
# Starts the demo server only if TOKEN reached it: proof the env is passed.
NEEDS_TOKEN = ("import hashlib, os, runpy, sys\n"
               f"if hashlib.sha256(os.environ.get('TOKEN', '').encode()).hexdigest() != '{DIGEST}':\n"
               "    sys.exit(4)\n"
               "runpy.run_module('mcpping.demo', run_name='__main__')\n")


def stdio(cmd: list[str], **extra: object) -> dict[str, object]:
    return {"command": cmd[0], "args": cmd[1:], **extra}


def run(*args: str, cwd: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=env)


def write(path, doc: object) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return str(path)


def rows(stdout: str) -> dict[str, list[str]]:
    """The table's rows by name, split on the column runs of two spaces."""
    lines = stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("NAME "))
    out = {}
    for line in lines[head + 1:]:
        if not line:
            break
        cells = re.split(r"\s{2,}", line, maxsplit=5)
        out[cells[0]] = cells
    return out


class _Recorder(BaseHTTPRequestHandler):
    """A loopback Streamable HTTP server answering with JSON; notes each
    request's Authorization header."""

    seen: list[str | None] = []

    def do_POST(self) -> None:
        _Recorder.seen.append(self.headers.get("Authorization"))
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in msg:
            self.send_response(202)
            self.end_headers()
            return
        if msg["method"] == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {},
                      "serverInfo": {"name": "recorder", "version": "1"}}
        else:
            result = {}
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self.send_response(405)
        self.end_headers()

    def log_message(self, *a: object) -> None:
        pass


@pytest.fixture
def recorder():
    _Recorder.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/mcp"
    finally:
        srv.shutdown()
        srv.server_close()


def test_every_kind_of_server_gets_one_aligned_row_and_failures_exit_1(tmp_path, http_server):
    path = write(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "demo": stdio([PY, "-m", "mcpping.demo"]),
        "time": stdio([PY, "-m", "mcp_server_time"]),
        "sdk-http": {"url": http_server},
        "frozen": stdio(peer("freeze", "--after", "1")),
        "refuses-ping": stdio(peer("unsupported")),
        "missing": {"command": "mcpping-no-such-program"},
        "dies-at-once": stdio(peer("dies", "--after", "0", "--stderr", "Error: no API key")),
        "dies-after": stdio(peer("dies", "--after", "2")),
        "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "off": {"command": "x", "disabled": True},
    }})
    r = run("--config", path, "-i", "0.1", "-W", "0.5", "-w", "10")
    assert r.returncode == 3, r.stderr  # some server did not start
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == f"config {path}: 10 servers"
    assert lines[1] == ("MCPPING 10 servers: 3 pings each, interval 0.1 s, timeout 0.5 s, "
                        "deadline 10.0 s")
    got = rows(r.stdout)
    assert list(got) == ["demo", "time", "sdk-http", "frozen", "refuses-ping", "missing",
                         "dies-at-once", "dies-after", "legacy", "off"]  # config order
    rtt = r"\d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3} ms"
    for name, transport in (("demo", "stdio"), ("time", "stdio"), ("sdk-http", "streamable-http")):
        assert got[name][1] == transport and got[name][4] == "ok", got[name]
        assert re.fullmatch(r"20\d\d-\d\d-\d\d", got[name][2]) and re.fullmatch(rtt, got[name][3])
    assert got["frozen"][3:] == ["-", "loss 100%", "-"]
    assert got["refuses-ping"][4] == "unsupported"
    assert got["missing"][2:] == ["-", "-", "spawn failed", "cannot start mcpping-no-such-program: "
                                  "no such file or directory (ENOENT)"]
    assert got["dies-at-once"][4:] == ["handshake failed", "server exited with status 3; "
                                       "stderr: Error: no API key"]
    assert got["dies-after"][4:] == ["closed", "server exited with status 3"]
    assert got["legacy"][1:] == ["sse", "-", "-", "skipped", "legacy HTTP+SSE transport"]
    assert got["off"][4:] == ["skipped", "disabled"]
    # Aligned: every row's columns start where the header's do.
    table = [l for l in lines if l.startswith("NAME ")] + [
        l for l in lines if l.split(" ")[0] in got]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", table[0])]
    for line in table[1:]:
        assert [line[s - 2:s] == "  " and line[s] != " " for s in starts] == [True] * 5, line
    assert lines[-2] == "--- mcpping config statistics ---"
    assert re.fullmatch(r"10 servers, 3 ok, 1 unsupported, 2 skipped, 4 failed, time \d+ ms",
                        lines[-1])


def test_json_gives_one_object_per_server_and_a_summary(tmp_path):
    path = write(tmp_path / ".mcp.json", {"mcpServers": {
        "demo": stdio([PY, "-m", "mcpping.demo"]),
        "drops": stdio(peer("drop_pings", "--answer-every", "2")),
    }})
    r = run("--config", path, "--json", "-c", "4", "-i", "0", "-W", "0.3")
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert objs[0] == {"event": "config", "file": path, "servers": 2}
    demo, drops, summary = objs[1:]
    assert list(demo) == ["event", "name", "transport", "protocol_version", "status", "reason",
                          "sent", "received", "loss_pct", "rtt_ms", "non_json_lines", "file",
                          "json_path"]
    assert (demo["name"], demo["status"], demo["sent"], demo["received"], demo["loss_pct"]) == (
        "demo", "ok", 4, 4, 0.0)
    assert demo["json_path"] == "$.mcpServers.demo" and demo["protocol_version"] == "2025-11-25"
    assert demo["rtt_ms"]["min"] <= demo["rtt_ms"]["avg"] <= demo["rtt_ms"]["max"]
    assert (drops["status"], drops["sent"], drops["received"], drops["loss_pct"]) == (
        "loss", 4, 2, 50.0), drops
    assert summary["event"] == "summary"
    assert {k: summary[k] for k in ("servers", "ok", "unsupported", "skipped", "failed")} == {
        "servers": 2, "ok": 1, "unsupported": 0, "skipped": 0, "failed": 1}
    assert r.returncode == 1


def test_ok_and_unsupported_only_exits_0(tmp_path):
    path = write(tmp_path / "c.json", {"mcpServers": {
        "demo": stdio([PY, "-m", "mcpping.demo"]), "no-ping": stdio(peer("unsupported")),
        # Refuses initialize: reached through server/discover, a healthy
        # 2026-07-28 server, not a failed handshake.
        "modern": stdio(peer("modern"))}})
    r = run("--config", path, "-c", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    got = rows(r.stdout)
    assert got["no-ping"][4] == "unsupported"
    assert (got["modern"][2], got["modern"][4]) == ("2026-07-28", "unsupported")


def test_servers_are_checked_at_once_each_within_its_deadline(tmp_path):
    marker = f"mcpping-silent-{os.getpid()}-{time.monotonic_ns()}"
    silent = [PY, "-c", "import time; time.sleep(60)", marker]  # reads nothing, answers nothing
    mute = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    servers: dict[str, object] = {f"silent{i}": stdio(silent) for i in range(3)}
    servers["silent-http"] = {"url": f"http://127.0.0.1:{mute.getsockname()[1]}/mcp"}
    path = write(tmp_path / "c.json", {"mcpServers": servers})
    t0 = time.monotonic()
    with mute:
        r = run("--config", path, "--json", "-w", "1.5")
    took = time.monotonic() - t0
    objs = [json.loads(l) for l in r.stdout.splitlines()][1:-1]
    assert [(o["status"], o["reason"]) for o in objs] == [("timeout", "no initialize result")] * 4
    assert r.returncode == 3  # no handshake: not up
    # Four 1.5 s deadlines in parallel, not one after another (6 s).
    assert took < 4.5, took
    assert _running(marker) == [], "a timed-out server outlived the command"


def _running(marker: str) -> list[int]:
    """Live processes whose command line holds marker."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read() and process_alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_secrets_in_env_and_headers_reach_the_servers_and_nothing_else(tmp_path, recorder):
    log = tmp_path / "records.jsonl"
    path = write(tmp_path / "c.json", {"mcpServers": {
        "needs-token": {"command": PY, "args": ["-c", NEEDS_TOKEN], "env": {"TOKEN": SECRET}},
        "web": {"type": "http", "url": recorder, "headers": {"Authorization": f"Bearer {SECRET}"}},
    }})
    for mode in ([], ["--json"]):
        r = run("--config", path, "-c", "2", "-i", "0", "--log", str(log), *mode)
        assert r.returncode == 0, r.stdout + r.stderr
        assert SECRET not in r.stdout + r.stderr
    assert set(_Recorder.seen) == {f"Bearer {SECRET}"}  # on every POST
    records = [json.loads(l) for l in log.read_text().splitlines()]
    assert {(rec["peer"], rec["event"]) for rec in records} >= {
        ("mcpping-demo", "ping_ok"), ("recorder", "ping_ok")}
    assert SECRET not in log.read_text()
    # A wrong token is refused by the server: the env really decides.
    bad = write(tmp_path / "bad.json", {"mcpServers": {
        "needs-token": {"command": PY, "args": ["-c", NEEDS_TOKEN], "env": {"TOKEN": "wrong"}}}})
    r = run("--config", bad)
    assert rows(r.stdout)["needs-token"][4:6] == ["handshake failed", "server exited with status 4"]


def test_a_server_that_says_its_secret_on_stderr_shows_stars(tmp_path):
    """The last stderr line of a server that would not talk is quoted, with
    the entry's env values masked (as `watch` masks them)."""
    leaky = "import os, sys; sys.stderr.write('token=' + os.environ['TOKEN'] + '\\n'); sys.exit(1)"
    path = write(tmp_path / "c.json", {"mcpServers": {
        "leaky": {"command": PY, "args": ["-c", leaky], "env": {"TOKEN": SECRET, "DEBUG": "1"}}}})
    for mode in ([], ["--json"]):
        r = run("--config", path, "-c", "1", *mode)
        assert r.returncode == 3, r.stdout + r.stderr
        assert SECRET not in r.stdout + r.stderr
        assert "server exited with status 1; stderr: token=***" in r.stdout


def test_bad_config_exits_2_naming_the_file_and_json_path(tmp_path):
    path = write(tmp_path / ".vscode" / "mcp.json", {"servers": {
        "ok": {"type": "stdio", "command": "x"},
        "bad": {"type": "stdio", "command": "x", "args": ["--port", 8080]}}})
    r = run("--config", path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == f"mcpping: {path}: $.servers.bad.args[1]: must be a string, got number\n"
    r = run("--config", str(tmp_path / "none.json"))
    assert (r.returncode, r.stderr) == (2, f"mcpping: {tmp_path / 'none.json'}: cannot read: "
                                           "No such file or directory\n")
    (tmp_path / "broken.json").write_text('{"mcpServers": {"a": {"command": "x"},}')
    r = run("--config", str(tmp_path / "broken.json"))
    assert (r.returncode, r.stderr) == (2, f"mcpping: {tmp_path / 'broken.json'}: "
                                           "invalid JSON at line 1 column 40\n")


def test_auto_reads_the_usual_places_and_says_which(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    demo = stdio([PY, "-m", "mcpping.demo"])
    files = [
        write(project / ".mcp.json", {"mcpServers": {"project-demo": demo}}),
        write(project / ".cursor" / "mcp.json", {"mcpServers": {"cursor-demo": demo}}),
        write(home / ".config" / "Claude" / "claude_desktop_config.json",
              {"mcpServers": {"desktop-demo": demo}}),
        # Claude Code's user file: servers of this project ("local" scope) only.
        write(home / ".claude.json", {"numStartups": 12, "projects": {
            str(project): {"mcpServers": {"local-demo": demo}},
            str(tmp_path / "elsewhere"): {"mcpServers": {"other": demo}}}}),
    ]
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    r = run("--config", "auto", "-c", "1", cwd=str(project), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[:4] == [
        f"config {files[0]}: 1 server", f"config {files[1]}: 1 server",
        f"config {files[2]}: 1 server", f"config {files[3]}: 1 server"]
    assert list(rows(r.stdout)) == ["project-demo", "cursor-demo", "desktop-demo", "local-demo"]
    r = run("--config", files[3], "--json", "-c", "1", cwd=str(project), env=env)
    assert json.loads(r.stdout.splitlines()[1])["json_path"] == (
        f'$.projects[{json.dumps(str(project))}].mcpServers["local-demo"]')
    empty = tmp_path / "empty"
    empty.mkdir()
    env["HOME"] = str(empty)
    r = run("--config", "auto", cwd=str(empty), env=env)
    assert r.returncode == 2
    assert r.stderr.startswith(f"mcpping: --config auto: no client config found in {empty}/.mcp.json, ")


def test_vscode_variables_are_filled_and_inputs_are_not_guessed(tmp_path):
    (tmp_path / "srv.py").write_text("import runpy\nrunpy.run_module('mcpping.demo', run_name='__main__')\n")
    path = write(tmp_path / ".vscode" / "mcp.json", {"servers": {
        "here": {"type": "stdio", "command": PY, "args": ["${workspaceFolder}/srv.py"]},
        "asks": {"type": "stdio", "command": PY, "args": ["srv.py"], "env": {"K": "${input:key}"}},
    }})
    r = run("--config", path, "-c", "1")
    got = rows(r.stdout)
    assert got["here"][4] == "ok"
    assert got["asks"][4:] == ["not started", "$.servers.asks.env.K: ${input:key} is asked of the user by the editor"]
    assert r.returncode == 3


@pytest.mark.parametrize("args, message", [
    (["--config"], "--config needs a value"),
    (["--config", "c.json", "--no-init"], "--config runs each server's handshake: drop --no-init"),
    (["--config", "c.json", "--", "srv"], "give one target: -- COMMAND, URL, --config, or --demo"),
])
def test_config_usage_errors_exit_2(args, message):
    r = run(*args)
    assert (r.returncode, r.stderr) == (2, f"mcpping: {message}\n")


def test_docs_sample_has_the_layout_and_keys_the_command_prints(tmp_path):
    """docs/cli.md's --config sample: the table is aligned as printed, the
    summary line and the JSON keys are the command's."""
    from conftest import ROOT
    doc = (ROOT / "docs" / "cli.md").read_text()
    section = doc[doc.index("## `--config`"):]
    sample = section[section.index("```\n") + 4:]
    sample = sample[:sample.index("```")]
    lines = sample.splitlines()[1:]  # after the $ line
    table = [l for l in lines if l.startswith("NAME ")] + [
        l for l in lines if re.match(r"\S+\s{2,}(stdio|streamable-http|sse)\s", l)]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", table[0])]
    for line in table:
        assert all(line[s - 2:s] == "  " and line[s] != " " for s in starts), line
    assert re.fullmatch(r"\d+ servers, \d+ ok, \d+ unsupported, \d+ skipped, \d+ failed, "
                        r"time \d+ ms", lines[-1])
    path = write(tmp_path / "c.json", {"mcpServers": {"demo": stdio([PY, "-m", "mcpping.demo"])}})
    printed = [json.loads(l) for l in run("--config", path, "--json", "-c", "1").stdout.splitlines()]
    documented = [json.loads(l) for l in section.splitlines() if l.startswith('{"event":')]
    keys = {o["event"]: list(o) for o in printed}
    assert {o["event"] for o in documented} == set(keys)
    for o in documented:
        assert list(o) == keys[o["event"]], o["event"]


def test_reason_column_says_timeout_enoent_last_stderr_and_warns_of_stdout_noise(tmp_path):
    """Issue 24: why a server failed is on its row, and a server that writes
    lines that are not JSON-RPC on stdout (which break clients) is counted
    and warned about; one whose handshake timed out on them names them."""
    path = write(tmp_path / "c.json", {"mcpServers": {
        "frozen": stdio([PY, "-c", "import time; time.sleep(30)"]),  # never answers
        "missing": {"command": "/nonexistent/mcp-server"},
        "dies": stdio(peer("dies", "--after", "0", "--stderr", "fatal: port in use")),
        "noisy": stdio(peer("garbage")),
        "lsp": stdio(peer("misframed", "--frame", "lsp")),
    }})
    r = run("--config", path, "-c", "1", "-w", "3")
    assert r.returncode == 3, r.stdout + r.stderr
    got = rows(r.stdout)
    assert got["frozen"][4:] == ["timeout", "no initialize result"]
    assert got["missing"][4] == "spawn failed" and "(ENOENT)" in got["missing"][5]
    assert got["dies"][4:] == ["handshake failed",
                               "server exited with status 3; stderr: fatal: port in use"]
    assert got["noisy"][4:] == ["ok", "-"]
    assert got["lsp"][4:] == ["timeout", 'no initialize result; the server wrote a line that is '
                                         'not JSON-RPC: "Content-Length: 146", then 146 bytes that '
                                         'no newline ends: "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":'
                                         '\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\":'
                                         '\\"2..."']
    warning = [l for l in r.stdout.splitlines() if l.startswith("warning: noisy ")]
    # garbage.py: a line that is not JSON, one that is not UTF-8, and three
    # JSON objects that are no JSON-RPC message ({"a":1}): clients refuse all.
    assert warning == ["warning: noisy printed 5 lines on stdout that are not JSON-RPC "
                       "(a client may fail on them)"], r.stdout
