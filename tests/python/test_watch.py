"""``mcpping watch`` (issue 24 item 6) end to end: three real servers (the
mcp-server-time package from PyPI, @modelcontextprotocol/server-everything
from npm, an official-SDK MCPServer over HTTP) and one that freezes,
watched by the command, /metrics and /status read with a real HTTP client
(urllib), the frozen one convicted within its bound and restarted, no
secret of the config in any output, and nothing left behind after SIGTERM.
The bytes themselves are C's (tests/c/test_app_watch.c)."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import PEERS, PY, ROOT, serve_sdk_http

EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
ENV_SECRET = "watch-env-secret-7Q"
HEADER_SECRET = "watch-header-secret-4K"
URL_SECRET = "watch-url-secret-9Z"
SECRETS = (ENV_SECRET, HEADER_SECRET, URL_SECRET)
# Keepalive of the watch under test: ping after 0.5 s idle, 1 s each, two
# failures make a server stale.
INTERVAL, TIMEOUT, FAILURES = 0.5, 1.0, 2
# docs/python.md: a silent, idle server is stale within interval + timeout ×
# failures + timeout (the corroborating probe).
STALE_BOUND = INTERVAL + TIMEOUT * FAILURES + TIMEOUT
# Allowance for scheduling on a busy machine and the log line's trip through a pipe.
LINE_SLACK = 1.5
POLLS = 300  # /status reads while waiting for a state (each 0.1 s apart)


class Watch:
    """A running `mcpping watch`, its stderr lines as they come."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen([PY, "-m", "mcpping", "watch", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.err: list[str] = []
        self.out = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.base = ""

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode()
            self.err.append(line)
            self.lines.put((time.monotonic(), line))
        self.lines.put((time.monotonic(), ""))

    def line(self, pattern: str, timeout: float) -> tuple[float, str]:
        """The next stderr line matching pattern (its arrival time), within timeout."""
        end = time.monotonic() + timeout
        while True:
            try:
                at, line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} in {timeout} s: {self.err}")
            if line == "":
                raise AssertionError(f"watch ended before {pattern!r}: {self.err}")
            if re.search(pattern, line):
                return at, line

    def get(self, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
        req = urllib.request.Request(self.base + path, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def status(self) -> dict[str, Any]:
        code, _, body = self.get("/status")
        assert code == 200
        return {s["name"]: s for s in json.loads(body)["servers"]}

    def until(self, what: str, ok: Any) -> dict[str, Any]:
        """Polls /status until ok(servers) holds, at most POLLS times."""
        for _ in range(POLLS):
            servers = self.status()
            if ok(servers):
                return servers
            time.sleep(0.1)
        raise AssertionError(f"/status never showed {what}: {servers}; {self.err}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        # Not communicate(): it would read stderr too, racing the reader
        # thread for the last lines ("stopped" went missing that way).
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        assert self.proc.stdout is not None
        self.out = self.proc.stdout.read()  # watch writes nothing there: no pipe to fill
        self.proc.stdout.close()
        self._reader.join(30)
        assert not self._reader.is_alive(), "stderr still open after the watch exited"
        return self.proc.returncode


def metric(text: str, name: str, server: str, extra: str = "") -> float:
    """One sample of /metrics for the config entry `server`."""
    m = re.search(rf'^{name}{{server="{re.escape(server)}",[^}}]*{extra}[^}}]*}} (\S+)$', text, re.M)
    assert m, f"no {name} for {server} in /metrics"
    return float(m.group(1))


def gone(pid: int) -> bool:
    """True when no process of the group pid led is left."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def sdk_url() -> Any:
    yield from serve_sdk_http()


@pytest.mark.skipif(not EVERYTHING.exists() or not shutil.which("node"),
                    reason="needs node_modules (npm install)")
def test_watch_keeps_three_real_servers_and_restarts_the_frozen_one_within_its_bound(
        tmp_path: Path, sdk_url: str) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "time": {"command": PY, "args": ["-m", "mcp_server_time"],
                 "env": {"TIME_API_TOKEN": ENV_SECRET}},
        "everything": {"command": shutil.which("node"), "args": [str(EVERYTHING), "stdio"]},
        "sdk": {"type": "http", "url": f"{sdk_url}?key={URL_SECRET}",
                "headers": {"Authorization": f"Bearer {HEADER_SECRET}"}},
        # A server that names itself with its own secret: the peer label
        # would carry it into /metrics, /status and the log.
        "frozen": {"command": PY, "args": [str(PEERS / "freeze.py"), "--on-usr1", "--name",
                                           f"frozen-{ENV_SECRET}"],
                   "env": {"FROZEN_TOKEN": ENV_SECRET}},
    }}))
    w = Watch(["--config", str(config), "--listen", "127.0.0.1:0", "-i", str(INTERVAL),
               "-W", str(TIMEOUT), "--failures", str(FAILURES)])
    pids: list[int] = []
    try:
        _, first = w.line(r"watching 4 servers", 30)
        w.base = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", first).group(1)
        servers = w.until("every server alive",
                          lambda s: all(x["state"] == "alive" for x in s.values()))
        assert servers["sdk"]["transport"] == "streamable-http"
        assert servers["time"]["peer"] == "mcp-time"
        frozen_pid = servers["frozen"]["pid"]
        pids += [s["pid"] for s in servers.values() if s["pid"]]

        # Freeze it: alive, idle, answering nothing.
        os.kill(frozen_pid, signal.SIGUSR1)
        t0 = time.monotonic()
        at, line = w.line(r"^mcpping watch: frozen: stale ", STALE_BOUND + LINE_SLACK + 5)
        print(f"frozen: stale {at - t0:.2f} s after the freeze (bound {STALE_BOUND} s)")
        assert at - t0 <= STALE_BOUND + LINE_SLACK, (at - t0, line)
        w.line(r"^mcpping watch: frozen: restarting \(attempt 1\): the server went stale: "
               rf"{FAILURES} keepalive pings failed$", 30)
        w.line(r"^mcpping watch: frozen: restarted \(pid \d+\)", 30)
        servers = w.until("the restarted server answering",
                          lambda s: s["frozen"]["state"] == "alive" and s["frozen"]["pid"]
                          != frozen_pid and s["frozen"]["pongs_received"] > 0)
        pongs = servers["frozen"]["pongs_received"]
        w.until("a pong from the restarted server",
                lambda s: s["frozen"]["pongs_received"] > pongs)
        pids.append(w.status()["frozen"]["pid"])

        code, headers, text = w.get("/metrics")
        assert code == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
        metrics = text.decode()
        assert 'peer="frozen-***"' in metrics
        assert metric(metrics, "mcpping_stale_total", "frozen") >= 1
        assert metric(metrics, "mcpping_reconnects_total", "frozen") >= 1
        for name in ("time", "everything", "sdk"):
            assert metric(metrics, "mcpping_peer_state", name, 'state="alive"') == 1
            assert metric(metrics, "mcpping_stale_total", name) == 0
            assert metric(metrics, "mcpping_reconnects_total", name) == 0
            assert metric(metrics, "mcpping_pongs_received_total", name) >= 1
            assert metric(metrics, "mcpping_ping_rtt_seconds_count", name) >= 1
        assert code == 200
        assert w.get("/nothing")[0] == 404
        assert w.get("/metrics", method="POST")[0] == 405
        status_body = w.get("/status")[2].decode()
    finally:
        status = w.stop()
    assert status == 0, w.err
    assert w.err[-1] == "mcpping watch: stopped\n"
    for pid in pids:
        assert gone(pid), f"server group {pid} outlived the watch"
    everything = "".join(w.err) + w.out.decode() + metrics + status_body
    for secret in SECRETS:
        assert secret not in everything


def test_watch_refuses_a_non_loopback_listen_and_a_busy_port(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"mcpServers": {"a": {"command": "true"}}}))
    r = subprocess.run([PY, "-m", "mcpping", "watch", "--config", str(config), "--listen",
                        "0.0.0.0:9464"], capture_output=True, timeout=30)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr == (b"mcpping: --listen 0.0.0.0 is not a loopback address: /metrics and "
                        b"/status would be open to the network (add --listen-any to mean it)\n")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([PY, "-m", "mcpping", "watch", "--config", str(config), "--listen",
                            f"127.0.0.1:{port}"], capture_output=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr == f"mcpping watch: cannot listen on 127.0.0.1:{port}: EADDRINUSE\n".encode()


def test_watch_help_is_the_c_usage() -> None:
    r = subprocess.run([PY, "-m", "mcpping", "watch", "--help"], capture_output=True, timeout=30)
    assert r.returncode == 0
    assert r.stdout.startswith(b"usage: mcpping watch --config FILE|auto")


def test_watch_says_how_a_server_that_cannot_open_died_and_its_last_words(tmp_path: Path) -> None:
    """Its exit and stderr, redacted, in its log line; the last line in /status."""
    config = tmp_path / "c.json"
    talk = 'echo starting >&2; echo "Error: key $TOKEN refused" >&2; exit 1'
    config.write_text(json.dumps({"mcpServers": {"db": {
        "command": "sh", "args": ["-c", talk], "env": {"TOKEN": ENV_SECRET}}}}))
    w = Watch(["--config", str(config), "--listen", "127.0.0.1:0"])
    try:
        _, first = w.line(r"watching 1 server;", 30)
        w.base = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", first).group(1)
        # The exit reason quotes the stderr itself (so no "(last stderr: ...)").
        w.line(r"^mcpping watch: db: cannot open: the server ended before answering initialize: "
               r"server exited with status 1: starting Error: key \*\*\* refused; "
               r"retrying in 1 s$", 30)
        status = json.loads(w.get("/status")[2])
        assert status["servers"][0]["last_stderr"] == "Error: key *** refused"
    finally:
        code = w.stop()
    assert code == 0
    assert ENV_SECRET not in "".join(w.err)


def test_watch_names_what_a_server_wrote_instead_of_its_initialize_answer(tmp_path: Path) -> None:
    """A server answering without a newline waited out the connect timeout
    (10 s) and its log line said only "no initialize result"."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"mcpServers": {"unended": {
        "command": PY, "args": [str(PEERS / "misframed.py"), "--frame", "unended"]}}}))
    w = Watch(["--config", str(config), "--listen", "127.0.0.1:0"])
    try:
        w.line(r"^mcpping watch: unended: cannot open: no initialize result; the server wrote "
               r'\d+ bytes that no newline ends: "\{\\"jsonrpc\\":\\"2\.0\\",.*\.\.\."; '
               r"retrying in 1 s$", 40)
    finally:
        code = w.stop()
    assert code == 0


def test_watch_reopens_an_http_server_that_went_away_with_backoff(tmp_path: Path) -> None:
    from conftest import free_port, sdk_server, wait_port

    port = free_port()

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(sdk_server("http", str(port)), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait_port(port, proc)
        return proc

    server = start()
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"servers": {"api": {
        "type": "http", "url": f"http://127.0.0.1:{port}/mcp?key={URL_SECRET}"}}}))
    w = Watch(["--config", str(config), "--listen", "127.0.0.1:0", "-i", str(INTERVAL),
               "-W", str(TIMEOUT), "--failures", str(FAILURES)])
    try:
        _, first = w.line(r"watching 1 server;", 30)
        w.base = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", first).group(1)
        w.line(r"^mcpping watch: api: up \(sdk-server, streamable-http", 30)
        server.terminate()
        server.wait(10)
        # Refused, or reset when a keepalive ping was on the wire as it shut down.
        w.line(r"^mcpping watch: api: closed: cannot connect: (ECONNREFUSED|ECONNRESET); "
               r"retrying in 1 s$", 30)
        server = start()
        w.line(r"^mcpping watch: api: up \(sdk-server, streamable-http", 60)
        metrics = w.get("/metrics")[2].decode()
        assert metric(metrics, "mcpping_reconnects_total", "api") == 1
        assert metric(metrics, "mcpping_peer_state", "api", 'state="alive"') == 1
    finally:
        status = w.stop()
        server.terminate()
        server.wait(10)
    assert status == 0
    assert URL_SECRET not in "".join(w.err)


def test_watch_counts_the_probes_of_a_server_without_ping(tmp_path: Path) -> None:
    # A 2026-07-28 server has no ping: keepalive probes it, and /metrics
    # counts each answered probe under mcpping_probes_total{result="ok"}.
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"mcpServers": {"modern": {
        "command": PY, "args": [str(PEERS / "modern.py")]}}}))
    w = Watch(["--config", str(config), "--listen", "127.0.0.1:0", "-i", str(INTERVAL),
               "-W", str(TIMEOUT), "--failures", str(FAILURES)])
    try:
        _, first = w.line(r"watching 1 server;", 30)
        w.base = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", first).group(1)
        w.line(r"^mcpping watch: modern: up \(modern, stdio", 30)
        # No pong comes on 2026-07-28, so an RTT in /status is a probe's
        # answer, fed to the counters by the same event.
        w.until("modern's first probe answered",
                lambda s: s["modern"]["last_rtt_ms"] is not None)
        metrics = w.get("/metrics")[2].decode()
        assert metric(metrics, "mcpping_probes_total", "modern", 'result="ok"') >= 1
        assert metric(metrics, "mcpping_probes_total", "modern", 'result="timeout"') == 0
        assert metric(metrics, "mcpping_pings_sent_total", "modern") == 0
    finally:
        status = w.stop()
    assert status == 0
