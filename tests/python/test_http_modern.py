"""A Streamable HTTP server on protocol 2026-07-28 only (issue 22): the C
handshake opens it (initialize refused, server/discover), no ping ever
reaches it, the engine watches it by probe, a frozen one goes stale, and a
handshake timeout says the same sentence over HTTP and over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import pytest

import mcpping
import mcpping.http
from conftest import PEERS, PY, free_port, wait_port

KA = mcpping.KeepAlive(interval=0.3, timeout=0.5, failures=2, min_interval=0.1, jitter_pct=0,
                       on_stale="report")


@pytest.fixture
def modern(tmp_path):
    port = free_port()
    log = tmp_path / "methods.log"
    proc = subprocess.Popen([PY, str(PEERS / "http_modern.py"), str(port), "--log", str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", log, proc
    finally:
        proc.kill()
        proc.wait()


async def test_http_2026_server_opens_is_never_pinged_and_is_probed(modern):
    url, log, _ = modern
    async with mcpping.http.connect(url, keepalive=KA) as peer:
        assert peer.protocol_version == "2026-07-28" and peer.modern
        assert peer.name == "http-modern" and peer.session_id is None
        probed: asyncio.Future = asyncio.get_running_loop().create_future()
        peer.on("probe_ok", lambda ev: probed.done() or probed.set_result(ev))
        ev = await asyncio.wait_for(probed, 20)
        assert ev.proof == "probe:server/discover"
        # tools/list comes as SSE with a comment first: the C parser reads it.
        tools = await peer.request("tools/list")
        assert tools["result"]["tools"][0]["name"] == "echo"
        # Every request carries the 2026-07-28 _meta envelope.
        call = await peer.request("tools/call", {"name": "echo", "arguments": {}})
        meta = json.loads(call["result"]["content"][0]["text"])
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        # A manual ping is refused in C's words (as Node's), never sent.
        with pytest.raises(mcpping.PingUnsupported, match="^ping unsupported$"):
            await peer.ping()
        assert peer.info()["pings_sent"] == 0
    methods = log.read_text().split()
    assert methods[:2] == ["initialize", "server/discover"]
    assert "ping" not in methods and "notifications/initialized" not in methods


async def test_frozen_http_2026_server_goes_stale_by_probe(modern):
    url, log, proc = modern
    async with mcpping.http.connect(url, keepalive=KA) as peer:
        stale: asyncio.Future = asyncio.get_running_loop().create_future()
        peer.on("stale", lambda ev: stale.done() or stale.set_result(ev))
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            ev = await asyncio.wait_for(stale, 20)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert ev.proof == "probe:server/discover"
    assert "ping" not in log.read_text().split()


async def test_handshake_timeout_says_the_same_sentence_over_http_and_stdio(modern):
    url, _, proc = modern
    os.kill(proc.pid, signal.SIGSTOP)  # accepts connections, answers nothing
    try:
        with pytest.raises(mcpping.HandshakeError) as http_err:
            await mcpping.http.connect(url, init_timeout=0.5)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(mcpping.HandshakeError) as stdio_err:
        await mcpping.connect(silent, init_timeout=0.5, kill_grace=0.1)
    assert str(http_err.value) == str(stdio_err.value) == "no initialize result after 0.5 s"
    assert http_err.value.kind == stdio_err.value.kind == "timed_out"
