"""Liveness after ping (issue 9): sessions on protocol 2026-07-28 and
servers that refuse ping, through the SDK adapter and real processes.

The bound every conviction must meet: interval + timeout x failures + 1 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp
import pytest
from mcp import StdioServerParameters

import mcpping
from mcpping.sdk import stdio_peer
from conftest import PEERS, PY, process_alive

KA = mcpping.KeepAlive(interval=0.5, timeout=0.5, failures=2, min_interval=0.1, jitter_pct=0)
BOUND = KA.interval + KA.timeout * KA.failures + 1.0
TIME_SERVER = StdioServerParameters(command=PY, args=["-m", "mcp_server_time"])


def fault_peer(name: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=PY, args=[str(PEERS / f"{name}.py"), *args])


class Watched:
    """mcpping.sdk's stdio transport as an mcp.Client Transport, keeping the Peer."""

    def __init__(self, server: StdioServerParameters, **options: Any) -> None:
        self.server = server
        self.options = {"keepalive": KA, **options}
        self.events: list[mcpping.Event] = []
        self.peer: mcpping.Peer | None = None

    def __call__(self) -> Any:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[tuple[Any, Any]]:
        async with stdio_peer(self.server, on_event=self.events.append, **self.options) as (r, w, p):
            self.peer = p
            yield r, w

    def names(self) -> list[str]:
        return [e.name for e in self.events]


async def freeze_and_expect_failure(peer: mcpping.Peer, call: Any) -> float:
    """SIGSTOPs the server, runs `call`, returns how long until it failed."""
    os.kill(peer.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    with pytest.raises(Exception) as info:
        await asyncio.wait_for(call(), BOUND + 5)
    assert not isinstance(info.value, asyncio.TimeoutError), "the frozen server was never convicted"
    return time.monotonic() - t0


async def test_mcp_client_auto_mode_against_mcp_server_time_is_watched_on_2026_07_28():
    w = Watched(TIME_SERVER)
    async with mcp.Client(w(), mode="auto") as client:
        assert client.session.protocol_version == "2026-07-28"
        peer = w.peer
        assert peer is not None
        info = peer.info()
        assert info["protocol_version"] == "2026-07-28"
        assert info["peer_name"] == "mcp-time"
        assert (peer.protocol_version, peer.name) == ("2026-07-28", "mcp-time")
        # No ping on this session: keepalive switched to the idle probe at once.
        assert info["unsupported"] and info["pings_sent"] == 0
        res = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not res.is_error
        pid = peer.pid
        elapsed = await freeze_and_expect_failure(
            peer, lambda: client.call_tool("get_current_time", {"timezone": "UTC"}))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        closed = await asyncio.wait_for(peer.wait_closed(), 5)
        assert closed.stale
        assert not process_alive(pid), "the stopped server was not reaped"
    assert w.names().count("ping") == 0
    stale = next(e for e in w.events if e.name == "stale")
    # Decided by the missing probe answer, or by the process seen stopped.
    assert stale.proof in ("probe:server/discover", "process")


async def test_idle_2026_session_is_probed_with_server_discover_not_pinged():
    w = Watched(TIME_SERVER)
    async with mcp.Client(w(), mode="auto") as client:
        assert client.session.protocol_version == "2026-07-28"
        answered: asyncio.Future[mcpping.Event] = asyncio.get_running_loop().create_future()
        # The probe events have names listeners can subscribe to.
        w.peer.on("probe_ok", lambda ev: answered.done() or answered.set_result(ev))
        ev = await asyncio.wait_for(answered, BOUND)
        assert ev.proof == "probe:server/discover" and ev.rtt is not None
        # The probe's answer was the engine's: the session saw nothing of it.
        res = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not res.is_error
        info = w.peer.info()
        assert info["probes_answered"] >= 1 and info["pings_sent"] == 0
        assert info["freshest_proof"] in ("probe", "traffic")
    assert w.peer.state == "closed"


async def test_openai_agents_mcp_server_stdio_over_the_adapter_is_convicted_when_frozen():
    try:
        from agents.mcp import MCPServerStdio
    except ImportError:  # pragma: no cover - requirements-dev.txt installs it
        pytest.skip("openai-agents is not installed (pip install -r requirements-dev.txt)")
    w = Watched(TIME_SERVER)

    class WatchedStdio(MCPServerStdio):
        def create_streams(self) -> Any:
            return w()

    server = WatchedStdio(params={"command": PY, "args": ["-m", "mcp_server_time"]},
                          client_session_timeout_seconds=None, name="time")
    async with server:
        assert w.peer.info()["protocol_version"] == "2026-07-28"
        res = await server.call_tool("get_current_time", {"timezone": "UTC"})
        assert not res.is_error
        pid = w.peer.pid
        elapsed = await freeze_and_expect_failure(
            w.peer, lambda: server.call_tool("get_current_time", {"timezone": "UTC"}))
        assert elapsed <= BOUND, f"convicted after {elapsed:.2f} s, bound {BOUND:.2f} s"
        await asyncio.wait_for(w.peer.wait_closed(), 5)
        assert not process_alive(pid)


@pytest.mark.parametrize("name,mode,probe", [
    ("modern", "auto", "probe:server/discover"),
    ("unsupported", "legacy", "probe:tools/list"),
])
async def test_a_frozen_server_without_ping_is_stale_within_the_bound(name, mode, probe):
    w = Watched(fault_peer(name))
    async with mcp.Client(w(), mode=mode) as client:
        peer = w.peer
        expected = "2026-07-28" if name == "modern" else client.session.protocol_version
        info = peer.info()
        assert (info["protocol_version"], info["peer_name"]) == (expected, name)
        # The first idle probe proves the path before the freeze.
        async for ev in peer.events("probe_ok"):
            assert ev.proof == probe
            break
        # By now the handshake's events reached the Peer too.
        assert (peer.protocol_version, peer.name) == (expected, name)
        pid = peer.pid
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        closed = await asyncio.wait_for(peer.wait_closed(), BOUND + 5)
        elapsed = time.monotonic() - t0
        assert closed.stale
        # The reason names what failed: the probes, not pings.
        assert ("idle probes" in closed.reason or "process" in closed.reason), closed.reason
        assert elapsed <= BOUND, f"stale after {elapsed:.2f} s, bound {BOUND:.2f} s"
        assert not process_alive(pid)
        with pytest.raises(Exception):
            await asyncio.wait_for(client.list_tools(), 5)
    stale = next(e for e in w.events if e.name == "stale")
    assert stale.proof in (probe, "process")
    assert "ping" not in w.names() or name == "unsupported"


async def test_a_legacy_server_frozen_is_suspect_from_its_process_before_the_ping_times_out():
    # Pings answered (echo.py); a long ping timeout so only the process check can be early.
    ka = mcpping.KeepAlive(interval=0.3, timeout=4.0, failures=2, min_interval=0.1, jitter_pct=0)
    w = Watched(fault_peer("echo"), keepalive=ka)
    async with mcp.Client(w(), mode="legacy") as client:
        peer = w.peer
        async for ev in peer.events("pong"):
            break
        # The process is read halfway through the unanswered ping's timeout
        # (not before every ping): suspect at 2 s, the ping would time out at 4.
        os.kill(peer.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        try:
            async for ev in peer.events("suspect", "timeout"):
                elapsed = time.monotonic() - t0
                assert ev.name == "suspect", "the ping timed out before the process check"
                assert ev.proof == "process"
                break
            assert elapsed < ka.timeout
        finally:
            os.kill(peer.pid, signal.SIGCONT)
        # Running again: it recovers and serves.
        assert (await client.list_tools()) is not None


async def test_a_server_busy_on_one_long_call_with_progress_is_never_convicted():
    w = Watched(fault_peer("modern"))
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with mcp.Client(w(), mode="auto") as client:
        t0 = time.monotonic()
        # Progress less often than the keepalive interval: probes go out.
        res = await client.call_tool("busy", {"seconds": 3, "every": 0.7},
                                     progress_callback=on_progress)
        assert time.monotonic() - t0 >= 3
        assert res.content[0].text == "busy 3 s"
        assert len(progress) >= 4
        assert w.peer.state == "alive"
    names = w.names()
    # Probes went out while the server was busy and went unanswered...
    assert "probe_timeout" in names
    # ...but the progress traffic after each proved it alive.
    assert "suspect" not in names and "stale" not in names


async def test_probe_option_names_the_method_or_turns_probing_off():
    w = Watched(fault_peer("unsupported"), probe="echo")
    async with mcp.Client(w(), mode="legacy"):
        async for ev in w.peer.events("probe_ok"):
            assert ev.proof == "probe:echo"
            break
    off = Watched(fault_peer("unsupported"), probe=None)
    async with mcp.Client(off(), mode="legacy") as client:
        async for ev in off.peer.events("unsupported"):
            break
        # Three intervals with nothing but the process to watch.
        for _ in range(3):
            await asyncio.sleep(KA.interval)  # time passing is the subject here
        assert off.peer.info()["probes_sent"] == 0
        assert (await client.list_tools()) is not None
    for bad in ("x" * 129, "tools\nlist"):
        with pytest.raises(ValueError, match="probe must be"):
            mcpping.connect(["true"], probe=bad)
    with pytest.raises(TypeError, match="probe must be"):
        mcpping.connect(["true"], probe=3)  # type: ignore[arg-type]


async def test_guard_learns_a_2026_session_from_the_traffic_and_convicts_a_frozen_server():
    from mcp.client.stdio import stdio_client as sdk_stdio_client

    guards: list[mcpping.Guard] = []
    events: list[mcpping.Event] = []

    @asynccontextmanager
    async def guarded() -> AsyncIterator[tuple[Any, Any]]:
        async with sdk_stdio_client(fault_peer("modern")) as (r, w):
            async with mcpping.guard(r, w, keepalive=KA, transport="stdio") as (gr, gw, g):
                g.on("*", events.append)
                guards.append(g)
                yield gr, gw

    async with mcp.Client(guarded(), mode="auto") as client:
        g = guards[0]
        info = g.info()
        assert (info["protocol_version"], info["peer_name"]) == ("2026-07-28", "modern")
        assert info["unsupported"] and info["probe_method"] == "server/discover"
        async for ev in g.events("probe_ok"):
            assert ev.proof == "probe:server/discover"
            break
        pid = int((await client.call_tool("pid", {})).content[0].text)
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            with pytest.raises(Exception) as failed:
                await asyncio.wait_for(client.call_tool("echo", {"x": 1}), BOUND + 5)
            elapsed = time.monotonic() - t0
            assert not isinstance(failed.value, asyncio.TimeoutError)
            assert elapsed <= BOUND, f"failed after {elapsed:.2f} s, bound {BOUND:.2f} s"
            assert g.state in ("stale", "closed")
        finally:
            os.kill(pid, signal.SIGCONT)  # the SDK's transport reaps its own child
    stale = next(e for e in events if e.name == "stale")
    assert stale.proof == "probe:server/discover"
    assert not [e for e in events if e.name == "ping"]


async def test_connect_reaches_a_2026_only_server_through_server_discover_and_watches_it():
    # modern.py refuses initialize (-32601): connect() asks server/discover.
    command = [PY, str(PEERS / "modern.py")]
    events: list[mcpping.Event] = []
    async with mcpping.connect(command, keepalive=KA, on_event=events.append) as peer:
        assert (peer.protocol_version, peer.name) == ("2026-07-28", "modern")
        info = peer.info()
        assert (info["protocol_version"], info["peer_name"]) == ("2026-07-28", "modern")
        async for ev in peer.events("probe_ok"):
            assert ev.proof == "probe:server/discover"
            break
        assert info["pings_sent"] == 0
        pid = peer.pid
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        closed = await asyncio.wait_for(peer.wait_closed(), BOUND + 5)
        elapsed = time.monotonic() - t0
        assert closed.stale and elapsed <= BOUND, (closed, elapsed)
        assert not process_alive(pid)


async def test_a_stdio_request_on_a_2026_session_carries_the_envelope_merged_with_its_own_meta():
    own = {"progressToken": "tok-1", "com.example/trace": {"span": [1, 2.5, "ü"], "on": True}}
    async with mcpping.connect([PY, str(PEERS / "modern.py")], keepalive=None) as peer:
        resp = await peer.request("tools/call", {"name": "meta", "arguments": {}, "_meta": own})
    seen = json.loads(resp["result"]["content"][0]["text"])
    assert seen["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert seen["io.modelcontextprotocol/clientInfo"]["name"] == "mcpping"
    assert seen["io.modelcontextprotocol/clientCapabilities"] == {}
    assert sorted(set(seen) - set(own)) == [
        "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/protocolVersion"]
    # The application's keys arrive as it wrote them, in its order.
    kept = {k: seen[k] for k in own}
    assert json.dumps(kept) == json.dumps(own)


async def test_a_stdio_request_on_a_2026_session_reaches_the_server_with_its_numbers_as_written():
    # The envelope is spliced in, not re-printed: a re-print through a double
    # turns the integer into 1.2345678901234567e+19, 1.0 into 1 and -0.0 into 0.
    arguments = {"n": 12345678901234567890, "f": 1.0, "z": -0.0}
    async with mcpping.connect([PY, str(PEERS / "modern.py")], keepalive=None) as peer:
        resp = await peer.request("tools/call", {"name": "echo", "arguments": arguments})
    assert resp["result"]["content"][0]["text"] == repr(arguments)


async def test_connect_names_both_refusals_when_no_version_is_shared():
    command = [PY, str(PEERS / "modern.py"), "--versions", "2027-01-01"]
    with pytest.raises(mcpping.HandshakeError) as info:
        async with mcpping.connect(command, keepalive=None):
            pass
    assert str(info.value) == (
        'initialize failed: -32601 Method not found; server/discover lists protocol versions '
        '["2027-01-01"], and mcpping speaks 2025-11-25 and 2026-07-28')
