"""langchain-mcp-adapters (which pins mcp<2) over mcpping.instrument(), no
language model. Runs in build/venv-mcp1 (`make test-python-mcp1`), against
mcp-server-time on mcp 1.x: a legacy session, so keepalive pings; and
against the 2026.10.19 release on mcp 2.x (MCPP_MCP2_PYTHON, set by the
Makefile), which an mcp 1.x client also meets on the initialize handshake."""

from __future__ import annotations

import os

import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

import mcpping
from conftest import process_alive
from frameworks import BOUND, KA, TIME_SERVER, first, freeze_and_expect_failure

CONFIG = {"time": {**TIME_SERVER, "transport": "stdio"}}


@pytest.fixture
def records():
    out: list[dict] = []
    mcpping.instrument(keepalive=KA, record=out.append)
    try:
        yield out
    finally:
        mcpping.uninstrument()


async def test_get_tools_then_invoke_a_tool_through_mcpping(records):
    client = MultiServerMCPClient(CONFIG)
    tools = {t.name: t for t in await client.get_tools()}
    assert {"get_current_time", "convert_time"} <= set(tools)
    # Each call gets a session of its own: a new server, spawned by mcpping.
    out = await tools["get_current_time"].ainvoke({"timezone": "UTC"})
    assert '"timezone": "UTC"' in str(out)
    closed = [r for r in records if r["event"] == "closed"]
    assert len(closed) >= 2 and {r["peer"] for r in closed} == {"mcp-time"}
    assert mcpping.instrumented_peers() == []


async def test_a_held_session_keeps_alive_with_ping_and_a_frozen_server_fails_the_tool(records):
    client = MultiServerMCPClient(CONFIG)
    async with client.session("time") as session:
        tools = {t.name: t for t in await load_mcp_tools(session)}
        (peer,) = mcpping.instrumented_peers()
        assert peer.protocol_version and peer.protocol_version != "2026-07-28"
        await first(peer, "pong")
        out = await tools["convert_time"].ainvoke(
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
        assert "Asia/Tokyo" in str(out)
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            pid, lambda: tools["get_current_time"].ainvoke({"timezone": "UTC"}))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        assert (await peer.wait_closed()).stale and not process_alive(pid)
    ok = [r for r in records if r["event"] == "ping_ok"]
    assert ok and ok[0]["peer"] == "mcp-time" and ok[0]["protocol_version"] == peer.protocol_version
    assert any(r["event"] == "stale" for r in records)


async def test_an_mcp1_client_meets_the_mcp2_server_on_initialize_and_pings_it(records):
    python = os.environ.get("MCPP_MCP2_PYTHON")
    if not python:
        pytest.fail("MCPP_MCP2_PYTHON (the mcp 2.x interpreter) is not set: run `make test-python`")
    client = MultiServerMCPClient({"time": {"command": python, "args": ["-m", "mcp_server_time"],
                                            "transport": "stdio"}})
    async with client.session("time") as session:
        tools = {t.name: t for t in await load_mcp_tools(session)}
        (peer,) = mcpping.instrumented_peers()
        # mcp 1.x has no server/discover: the 2.x server answers initialize.
        assert peer.protocol_version and peer.protocol_version != "2026-07-28"
        assert not peer.info()["unsupported"]
        await first(peer, "pong")
        assert '"timezone": "UTC"' in str(await tools["get_current_time"].ainvoke({"timezone": "UTC"}))
    ok = [r for r in records if r["event"] == "ping_ok"]
    assert ok and ok[0]["peer"] == "mcp-time"
