"""The mcpping command: output format, --json keys, exit status (docs/cli.md)."""

from __future__ import annotations

import io
import json
import math
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
from mcpping import Stats
from mcpping._report import Reporter

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
                        r"timeout 5\.0 s, interval 0\.1 s", lines[0])
    pongs = lines[1:6]
    for i, line in enumerate(pongs, 1):
        assert re.fullmatch(rf"pong from mcpping-demo: seq={i} time=\d+\.\d{{3}} ms", line)
    assert lines[6] == ""
    assert lines[7] == "--- mcpping-demo mcpping statistics ---"
    assert re.fullmatch(r"5 pings sent, 5 pongs received, 0% loss, time \d+ ms", lines[8])
    assert re.fullmatch(r"rtt min/avg/max/mdev = \d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3} ms",
                        lines[9])
    assert len(lines) == 10


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
                       "protocol_version": "2025-11-25", "session_id": None}
    assert [o["event"] for o in objs[1:4]] == ["pong"] * 3
    assert [o["seq"] for o in objs[1:4]] == [1, 2, 3]
    s = objs[-1]
    assert list(s) == ["event", "sent", "received", "loss_pct", "time_ms", "rtt_ms"]
    assert (s["sent"], s["received"], s["loss_pct"]) == (3, 3, 0.0)
    assert list(s["rtt_ms"]) == ["min", "avg", "max", "mdev", "p50", "p99"]
    assert all(isinstance(v, float) for v in s["rtt_ms"].values())


def test_quiet_json_prints_only_connected_and_summary():
    r = run("--json", "-q", "-c", "2", "-i", "0")
    assert [json.loads(l)["event"] for l in r.stdout.splitlines()] == ["connected", "summary"]


def test_loss_exits_1_with_timeout_lines():
    r = run("-c", "2", "-i", "0", "-W", "0.2", "--", *peer("drop_pings"))
    assert r.returncode == 1
    assert "timeout from drop_pings: seq=1 no answer after 200 ms" in r.stdout
    assert "2 pings sent, 0 pongs received, 100% loss" in r.stdout
    assert "rtt min" not in r.stdout


def test_ping_error_line_and_exit_1():
    r = run("--json", "-c", "1", "--", PY, str(HERE / "servers" / "bad_pongs.py"), "error")
    assert r.returncode == 1
    ev = json.loads(r.stdout.splitlines()[1])
    assert ev == {"event": "ping_error", "seq": 1, "code": -32603, "message": "Internal error"}


def test_unsupported_exits_2_with_one_line_reason():
    r = run("--json", "-c", "3", "--", *peer("unsupported"))
    assert r.returncode == 2
    assert json.loads(r.stdout.splitlines()[1])["event"] == "unsupported"
    assert r.stderr.startswith("mcpping: ping unsupported") and r.stderr.count("\n") == 1


def test_spawn_failure_exits_2():
    r = run("-c", "1", "--", "/nonexistent/server")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("mcpping: cannot start") and r.stderr.count("\n") == 1


@pytest.mark.parametrize("args", [["-x"], ["-c"], ["-c", "zero"], ["-W", "0"], ["--"],
                                  ["ftp://x"], ["-W", "4294968"], ["-W", "0.0001"]])
def test_bad_usage_exits_2(args):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("mcpping: ") and r.stderr.count("\n") == 1


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
    sent = int(re.search(r"(\d+) pings sent", r.stdout).group(1))
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


def test_http_connection_refused_exits_2():
    from conftest import free_port
    r = run("-c", "1", f"http://127.0.0.1:{free_port()}/mcp")
    assert r.returncode == 2
    assert r.stderr.startswith("mcpping: cannot connect to")


class _NoPing(BaseHTTPRequestHandler):
    """Answers initialize with JSON, and 404 to everything else."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
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
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *a: object) -> None:
        pass


def test_http_404_is_unsupported_exit_2():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _NoPing)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        r = run("-c", "2", f"http://127.0.0.1:{srv.server_address[1]}/mcp")
    finally:
        srv.shutdown()
    assert r.returncode == 2
    assert r.stderr.startswith("mcpping: ping unsupported")


# The summary's statistics, unit level: the Reporter keeps them in a bounded
# Stats, not a list of every RTT (docs/cli.md).

def _summary(rtts_ms: list[float], sent: int | None = None) -> tuple[Reporter, dict]:
    out = io.StringIO()
    rep = Reporter(json_mode=True, quiet=True, out=out)
    for i, rtt in enumerate(rtts_ms, 1):
        rep.pong(i, rtt)
    n = len(rtts_ms) if sent is None else sent
    rep.summary(n, len(rtts_ms), 1000.0)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1  # -q: the pongs printed nothing
    return rep, json.loads(lines[0])


def test_report_keeps_a_bounded_stats_p50_p99_over_the_last_10000():
    rtts = [float(i) for i in range(1, 20_001)]  # 1 .. 20000 ms
    rep, s = _summary(rtts)
    assert isinstance(rep.stats, Stats)
    assert len(rep.stats.rtts) == 10_000  # only the window is kept
    assert not any(isinstance(v, list) and len(v) > 10_000 for v in vars(rep).values())
    r = s["rtt_ms"]
    # p50/p99 over the last 10,000 (10001..20000); the whole run would give 10000/19800.
    assert r["p50"] == 15_000.0
    assert r["p99"] == 19_900.0
    # min/avg/max/mdev over the whole run; the window alone would give min 10001.
    assert r["min"] == 1.0
    assert r["max"] == 20_000.0
    assert r["avg"] == 10_000.5
    assert r["mdev"] == round(math.sqrt((20_000 ** 2 - 1) / 12), 3)
    assert (s["sent"], s["received"]) == (20_000, 20_000)


def test_report_mdev_is_the_population_standard_deviation():
    _, s = _summary([1.0, 3.0])
    assert s["rtt_ms"]["mdev"] == 1.0  # the sample deviation would be 1.414
    assert s["rtt_ms"]["avg"] == 2.0


def test_report_loss_is_unanswered_of_sent_from_the_counts():
    # 3 pongs of 4 sent, one still unanswered at the end: Stats.loss would say 0.
    rep, s = _summary([1.0, 2.0, 3.0], sent=4)
    assert rep.stats.loss == 0.0
    assert s["loss_pct"] == 25.0


def test_report_without_pongs_has_null_figures_and_no_rtt_line():
    out = io.StringIO()
    rep = Reporter(json_mode=False, quiet=False, out=out)
    rep.summary(2, 0, 10.0)
    assert out.getvalue().splitlines()[-1] == "2 pings sent, 0 pongs received, 100% loss, time 10 ms"
    _, s = _summary([], sent=2)
    assert s["rtt_ms"] == {k: None for k in ("min", "avg", "max", "mdev", "p50", "p99")}
