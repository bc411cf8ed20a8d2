"""The real agent frameworks from PyPI, no language model: openai-agents over
mcpping.instrument(), fastmcp.Client and PydanticAI's MCPToolset over
mcpping.fastmcp.StdioTransport.

Each runs against mcp-server-time twice: the 2026.10.19 release on mcp 2.x,
where the framework settles on protocol 2026-07-28 (no ping: liveness from
traffic, the idle probe and the process), and the release on mcp 1.x (in
build/venv-mcp1), where it falls back to the initialize handshake and
keepalive pings. Both must turn a SIGSTOPped server into an error within
the keepalive bound.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

import mcpping
from conftest import process_alive
from frameworks import BOUND, KA, TIME_SERVER, first, freeze_and_expect_failure, legacy_time_server

UTC = {"timezone": "UTC"}


@pytest.fixture
def instrumented():
    records: list[dict] = []
    events: list[mcpping.Event] = []
    mcpping.instrument(keepalive=KA, record=records.append, on_event=events.append)
    try:
        yield records, events
    finally:
        mcpping.uninstrument()


def agents_server(params: dict):
    from agents.mcp import MCPServerStdio

    # No session timeout of the framework's own: only mcpping can end a frozen call.
    return MCPServerStdio(params=params, client_session_timeout_seconds=None, name="time")


async def test_openai_agents_on_2026_07_28_is_watched_without_ping(instrumented):
    records, events = instrumented
    async with agents_server(TIME_SERVER) as server:
        (peer,) = mcpping.instrumented_peers()
        assert peer.info()["protocol_version"] == "2026-07-28"
        tools = await server.list_tools()
        assert "get_current_time" in {t.name for t in tools}
        res = await server.call_tool("get_current_time", UTC)
        assert not res.is_error and '"timezone": "UTC"' in res.content[0].text
        assert peer.info()["pings_sent"] == 0  # no ping on this protocol
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            pid, lambda: server.call_tool("get_current_time", UTC))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        closed = await peer.wait_closed()
        assert closed.stale and not process_alive(pid)
    assert not [e for e in events if e.name == "ping"]
    stale = next(e for e in events if e.name == "stale")
    assert stale.proof in ("probe:server/discover", "process")
    assert any(r["event"] == "stale" and r["peer"] == "mcp-time" for r in records)


async def test_openai_agents_on_a_legacy_server_keeps_alive_with_ping(instrumented):
    records, events = instrumented
    async with agents_server(legacy_time_server()) as server:
        (peer,) = mcpping.instrumented_peers()
        assert peer.info()["protocol_version"] != "2026-07-28"
        tools = await server.list_tools()
        assert "convert_time" in {t.name for t in tools}
        res = await server.call_tool("get_current_time", UTC)
        assert not res.is_error
        await first(peer, "pong")
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            pid, lambda: server.call_tool("get_current_time", UTC))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        await peer.wait_closed()
        assert not process_alive(pid)
    ok = [r for r in records if r["event"] == "ping_ok"]
    assert ok and ok[0]["peer"] == "mcp-time" and ok[0]["direction"] == "outbound"
    assert ok[0]["protocol_version"] == peer.protocol_version


def fastmcp_transport(params: dict, records: list[dict], **kwargs):
    from mcpping.fastmcp import StdioTransport

    return StdioTransport(params["command"], params["args"], keepalive=KA,
                          record=records.append, **kwargs)


async def test_fastmcp_client_on_2026_07_28_lists_calls_and_fails_a_frozen_server_in_time():
    from fastmcp import Client

    records: list[dict] = []
    transport = fastmcp_transport(TIME_SERVER, records)
    async with Client(transport) as client:
        peer = transport.peer
        assert peer is not None and peer.info()["protocol_version"] == "2026-07-28"
        tools = await client.list_tools()
        assert {"get_current_time", "convert_time"} <= {t.name for t in tools}
        res = await client.call_tool("get_current_time", UTC)
        assert not res.is_error and res.structured_content["timezone"] == "UTC"
        await first(peer, "probe_ok")  # the idle probe, not a ping
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            pid, lambda: client.call_tool("get_current_time", UTC))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        assert (await peer.wait_closed()).stale and not process_alive(pid)
    # No ping went out; the record says why: this protocol has none.
    assert not {r["event"] for r in records} & {"ping_ok", "ping_timeout", "ping_error"}
    unsupported = [r for r in records if r["event"] == "ping_unsupported"]
    assert unsupported and unsupported[0]["protocol_version"] == "2026-07-28"


async def test_fastmcp_client_on_a_legacy_server_records_keepalive_pings():
    from fastmcp import Client

    records: list[dict] = []
    transport = fastmcp_transport(legacy_time_server(), records)
    async with Client(transport) as client:
        peer = transport.peer
        assert peer.protocol_version != "2026-07-28"
        res = await client.call_tool("convert_time", {"source_timezone": "UTC", "time": "12:00",
                                                      "target_timezone": "Europe/Paris"})
        assert not res.is_error
        await first(peer, "pong")
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(pid, client.list_tools)
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        await peer.wait_closed()
        assert not process_alive(pid)
    ok = [r for r in records if r["event"] == "ping_ok"]
    assert ok and ok[0]["peer"] == "mcp-time" and ok[0]["transport"] == "stdio"
    # fastmcp's keep_alive kept the dead session; its own check sees it closed
    # and the next client gets a fresh, watched server.
    try:
        async with Client(transport) as client:
            assert (await client.list_tools()) and transport.peer is not peer
            assert transport.peer.state == "alive" and transport.peer.pid != pid
    finally:
        await transport.close()


async def test_fastmcp_keep_alive_false_starts_a_server_per_session_keepalive_watches_each():
    from fastmcp import Client

    records: list[dict] = []
    transport = fastmcp_transport(legacy_time_server(), records, keep_alive=False)
    pids = []
    for _ in range(2):
        async with Client(transport) as client:
            await client.list_tools()
            pids.append(transport.peer.pid)
            await first(transport.peer, "pong")
        # fastmcp's keep_alive=False: the server is stopped with the session.
        assert transport.peer.closed and not process_alive(pids[-1])
    assert pids[0] != pids[1]


async def test_fastmcp_keep_alive_true_reuses_one_watched_server_across_sessions():
    from fastmcp import Client

    transport = fastmcp_transport(legacy_time_server(), [])
    try:
        async with Client(transport) as client:
            await client.list_tools()
            peer = transport.peer
        assert not peer.closed and process_alive(peer.pid)  # fastmcp kept it
        async with Client(transport) as client:
            await client.list_tools()
            assert transport.peer is peer
    finally:
        await transport.close()
    assert peer.closed


async def test_pydantic_ai_mcp_toolset_over_the_transport_fails_a_frozen_server_in_time():
    from pydantic_ai.mcp import MCPToolset

    records: list[dict] = []
    transport = fastmcp_transport(TIME_SERVER, records)
    toolset = MCPToolset(transport)
    async with toolset:
        assert {"get_current_time", "convert_time"} <= {t.name for t in await toolset.list_tools()}
        out = await toolset.direct_call_tool("get_current_time", UTC)
        assert out["timezone"] == "UTC"
        peer = transport.peer
        assert peer.protocol_version == "2026-07-28"
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            pid, lambda: toolset.direct_call_tool("get_current_time", UTC))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        assert (await peer.wait_closed()).stale and not process_alive(pid)
    assert any(r["event"] == "stale" and r["peer"] == "mcp-time" for r in records)


RECONNECT = mcpping.Reconnect(initial=0.02, max_delay=0.05, jitter=0.0, max_attempts=5)


async def killed_and_replaced(peer: mcpping.Peer, call) -> int:
    """SIGKILLs the server; the framework's next call is answered by a new one."""
    replaced = asyncio.get_running_loop().create_future()
    peer.on("reconnected", lambda ev: replaced.done() or replaced.set_result(ev))
    old = peer.pid
    os.kill(old, signal.SIGKILL)
    ev = await asyncio.wait_for(replaced, 10)
    assert ev.pid != old and not process_alive(old)
    res = await asyncio.wait_for(call(), 10)
    assert not res.is_error
    assert peer.pid == ev.pid and peer.state == "alive"
    return old


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])
async def test_openai_agents_session_survives_a_crashed_server_with_reconnect(legacy):
    mcpping.instrument(keepalive=KA, reconnect=RECONNECT)
    try:
        async with agents_server(legacy_time_server() if legacy else TIME_SERVER) as server:
            (peer,) = mcpping.instrumented_peers()
            assert (peer.protocol_version == "2026-07-28") is not legacy
            assert not (await server.call_tool("get_current_time", UTC)).is_error
            await killed_and_replaced(peer, lambda: server.call_tool("get_current_time", UTC))
    finally:
        mcpping.uninstrument()


async def test_fastmcp_client_survives_a_crashed_server_with_reconnect():
    from fastmcp import Client
    from mcpping.fastmcp import StdioTransport

    transport = StdioTransport(TIME_SERVER["command"], TIME_SERVER["args"], keepalive=KA,
                               reconnect=RECONNECT)
    async with Client(transport) as client:
        assert not (await client.call_tool("get_current_time", UTC)).is_error
        await killed_and_replaced(transport.peer, lambda: client.call_tool("get_current_time", UTC))
    await transport.close()


def test_fastmcp_transport_refuses_a_bool_for_mcppings_keepalive():
    from mcpping.fastmcp import StdioTransport

    with pytest.raises(TypeError, match="keep_alive=True/False"):
        StdioTransport("python", [], keepalive=True)  # type: ignore[arg-type]


async def test_plain_fastmcp_transports_are_left_alone():
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport as FastMCPStdio

    import mcpping.fastmcp  # noqa: F401  (installs the router)

    async with Client(FastMCPStdio(TIME_SERVER["command"], TIME_SERVER["args"])) as client:
        assert (await client.call_tool("get_current_time", UTC)).structured_content
        assert mcpping.instrumented_peers() == []
