"""Liveness after ping over Streamable HTTP (issue 9): SSE comment
keep-alives on an open stream are proof of life, so a server busy on one
long request that sends only comments is never convicted."""

from __future__ import annotations

import subprocess

import pytest

import mcpping
from mcpping.http import HttpPeer
from conftest import PEERS, PY, free_port, wait_port

KA = mcpping.KeepAlive(interval=0.5, timeout=0.5, failures=2, min_interval=0.1, jitter_pct=0,
                       on_stale="report")


@pytest.fixture
def sse_server(request):
    port = free_port()
    proc = subprocess.Popen([PY, str(PEERS / "http_sse.py"), str(port), *request.param],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


async def long_call(url: str) -> tuple[dict, list[str]]:
    peer = HttpPeer(url, ping_timeout=KA.timeout, keepalive=KA)
    names: list[str] = []
    peer.driver.on("*", lambda ev: names.append(ev.name))
    try:
        await peer.initialize(10)
        resp = await peer.request("tools/call", {"name": "slow", "arguments": {}}, timeout=15)
    finally:
        await peer.close()
    return resp, names


@pytest.mark.parametrize("sse_server", [()], indirect=True)
async def test_sse_comments_during_a_5_s_request_keep_the_server_alive(sse_server):
    resp, names = await long_call(sse_server)
    assert resp["result"]["content"][0]["text"] == "done"
    assert "suspect" not in names and "stale" not in names


@pytest.mark.parametrize("sse_server", [("--no-comments", "--seconds", "3")], indirect=True)
async def test_without_comments_the_same_silent_request_is_convicted(sse_server):
    # The control: what the comments prevent.
    resp, names = await long_call(sse_server)
    assert resp["result"]["content"][0]["text"] == "done"
    assert "suspect" in names and "stale" in names
