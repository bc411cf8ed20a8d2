"""peer.ping(): RTT on success and each error type, against real processes."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import mcpping
from conftest import DEMO, HERE, PY, peer, process_alive

BAD = lambda mode: [PY, str(HERE / "servers" / "bad_pongs.py"), mode]  # noqa: E731
STALL = [PY, str(HERE / "servers" / "stall.py")]


async def test_ping_returns_rtt_in_seconds_and_counts_stats():
    async with mcpping.connect(DEMO, keepalive=None) as p:
        assert p.name == "mcpping-demo"
        assert p.protocol_version == "2025-11-25"
        rtts = [await p.ping(timeout=2) for _ in range(20)]
        assert all(0 < r < 1 for r in rtts)
        st = p.stats
        assert (st.count, st.received, st.lost) == (20, 20, 0)
        assert st.loss == 0.0
        assert st.min <= st.p50 <= st.p99 <= st.max
        assert "<table" in st._repr_html_()
        assert p.state == "alive"
        assert p.info()["pongs_received"] == 20


async def test_a_pong_nobody_listens_to_settles_its_ping_without_an_event(monkeypatch):
    # Issue 21: the drained event stays native; an Event is built only for
    # a listener (then with the same RTT the ping returns).
    built: list[mcpping.Event] = []
    real = mcpping.Event.from_native.__func__

    def counting(cls, d):
        ev = real(cls, d)
        built.append(ev)
        return ev

    monkeypatch.setattr(mcpping.Event, "from_native", classmethod(counting))
    # A metrics tap (left by an earlier test's exporter) would want them all.
    monkeypatch.setattr(mcpping.events, "tap", None)
    async with mcpping.connect(DEMO, keepalive=None) as p:
        built.clear()
        rtts = [await p.ping(timeout=2) for _ in range(5)]
        assert all(0 < r < 1 for r in rtts)
        # (The handshake's "initialized" may still come through here.)
        assert [e.name for e in built if e.name in ("ping", "pong")] == []
        assert (p.stats.count, p.stats.received) == (5, 5)
        assert p.stats.rtts[-5:] == pytest.approx(rtts)
        heard: list[mcpping.Event] = []
        p.on("pong", heard.append)
        rtt = await p.ping(timeout=2)
        assert [e.name for e in built if e.name in ("ping", "pong")] == ["pong"]
        assert [(e.name, e.manual, e.rtt) for e in heard] == [("pong", True, rtt)]
        assert p.stats.count == 6


async def test_ping_before_handshake_is_answered():
    async with mcpping.connect(peer("echo"), keepalive=None, initialize=False) as p:
        assert p.protocol_version is None
        assert await p.ping(timeout=2) > 0


async def test_ping_timeout_when_server_drops_pings():
    async with mcpping.connect(peer("drop_pings"), keepalive=None) as p:
        with pytest.raises(mcpping.PingTimeout) as ei:
            await p.ping(timeout=0.2)
        assert ei.value.timeout == pytest.approx(0.2)
        assert p.stats.lost == 1


async def test_cancelled_ping_reports_nothing():
    events: list[mcpping.Event] = []
    async with mcpping.connect(peer("drop_pings"), keepalive=None,
                               on_event=events.append) as p:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(p.ping(timeout=0.3), 0.05)
        # Sent later with the same timeout, it times out first: the
        # cancelled ping is no longer timed by the engine.
        with pytest.raises(mcpping.PingTimeout):
            await p.ping(timeout=0.3)
        timeouts = [e for e in events if e.name == "timeout"]
        assert len(timeouts) == 1
        assert timeouts[0].ping_seq == max(e.ping_seq for e in events if e.name == "ping")


async def test_pid_is_the_live_server_until_close():
    p = await mcpping.connect(peer("echo"), keepalive=None, initialize=False)
    pid = p.pid
    assert isinstance(pid, int) and process_alive(pid)
    await p.close()
    assert p.pid is None
    assert not process_alive(pid)


async def test_ping_error_carries_code_and_message():
    async with mcpping.connect(BAD("error"), keepalive=None) as p:
        with pytest.raises(mcpping.PingError) as ei:
            await p.ping(timeout=2)
        assert ei.value.code == -32603
        assert ei.value.message == "Internal error"


async def test_ping_invalid_when_result_is_not_an_object():
    async with mcpping.connect(BAD("invalid"), keepalive=None) as p:
        with pytest.raises(mcpping.PingInvalid):
            await p.ping(timeout=2)


async def test_ping_unsupported_keeps_the_connection():
    async with mcpping.connect(peer("unsupported"), keepalive=None) as p:
        with pytest.raises(mcpping.PingUnsupported) as ei:
            await p.ping(timeout=2)
        assert ei.value.code == -32601
        # The connection is kept: application traffic still flows.
        resp = await p.request("echo", {"x": 1}, timeout=2)
        assert resp["result"] == {"x": 1}
        assert not p.closed


async def test_peer_closed_when_server_exits():
    async with mcpping.connect(peer("dies", "--after", "1", "--code", "3"), keepalive=None) as p:
        info = await asyncio.wait_for(p.wait_closed(), 10)
        assert info.exit_status == 3
        assert p.state == "closed"
        with pytest.raises(mcpping.PeerClosed):
            await p.ping(timeout=1)


async def test_spawn_failure_raises_spawn_error():
    with pytest.raises(mcpping.SpawnError) as ei:
        await mcpping.connect(["/nonexistent/mcp-server"])
    assert isinstance(ei.value, OSError)


async def test_events_and_callbacks_see_ping_and_pong():
    async with mcpping.connect(DEMO, keepalive=None) as p:
        seen: list[str] = []
        off = p.on("pong", lambda ev: seen.append(ev.name))
        it = p.events("ping", "pong")
        rtt = await p.ping()
        names = [ (await it.__anext__()).name for _ in range(2)]
        assert names == ["ping", "pong"]
        assert seen == ["pong"]
        off()
        await p.ping()
        assert seen == ["pong"]
        with pytest.raises(ValueError):
            p.on("no-such-event", print)
        assert rtt > 0


async def test_governance_records_to_file_callback_and_logger(tmp_path, caplog):
    path = tmp_path / "records.jsonl"
    got: list[dict] = []
    async with mcpping.connect(DEMO, keepalive=None, record=path) as p:
        await p.ping()
    async with mcpping.connect(DEMO, keepalive=None, record=got.append) as p:
        await p.ping()
    with caplog.at_level("DEBUG", logger="mcpping"):
        async with mcpping.connect(DEMO, keepalive=None) as p:
            await p.ping()
    # Routine records log at DEBUG, the rest at INFO.
    levels = {json.loads(r.getMessage())["event"]: r.levelname for r in caplog.records}
    assert levels["ping_ok"] == "DEBUG" and levels["closed"] == "INFO"
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    for recs in (lines, got, [json.loads(r.getMessage()) for r in caplog.records]):
        ok = [r for r in recs if r["event"] == "ping_ok"]
        assert len(ok) == 1, recs
        r = ok[0]
        assert r["direction"] == "outbound" and r["transport"] == "stdio"
        assert r["peer"] == "mcpping-demo"
        assert r["latency_ms"] is not None and r["ts"].endswith("Z")
        assert any(x["event"] == "closed" for x in recs)
    # No arguments or environment leak into records.
    assert "-m" not in path.read_text()


async def test_no_records_cross_while_nothing_takes_them(monkeypatch, caplog):
    # No file, no callback and the logger not enabled: the runtime queues no
    # record items for the connection. Enabled later, records follow.
    written: list[str] = []
    real = mcpping.records.RecordSink.write
    monkeypatch.setattr(mcpping.records.RecordSink, "write",
                        lambda self, line: (written.append(line), real(self, line)))
    with caplog.at_level("WARNING", logger="mcpping"):
        async with mcpping.connect(DEMO, keepalive=None) as p:
            for _ in range(3):
                await p.ping()
            assert written == []
            with caplog.at_level("DEBUG", logger="mcpping"):
                await p.ping()
                assert [json.loads(l)["event"] for l in written] == ["ping_ok"]
                assert [json.loads(r.getMessage())["event"] for r in caplog.records] == ["ping_ok"]
            await p.ping()
            assert len(written) == 1
    # A file takes every record, whatever the logger's level.
    with caplog.at_level("WARNING", logger="mcpping"):
        got: list[dict] = []
        async with mcpping.connect(DEMO, keepalive=None, record=got.append) as p:
            await p.ping()
        assert [r["event"] for r in got if r["event"] == "ping_ok"] == ["ping_ok"]


async def test_messages_are_forwarded_in_order():
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        for i in range(200):
            p.send({"jsonrpc": "2.0", "id": i, "method": "echo", "params": {"i": i}})
        got = []
        async for msg in p.messages():
            got.append(msg["result"]["i"])
            if len(got) == 200:
                break
        assert got == list(range(200))


async def test_healthy_needs_answers_to_application_requests_not_just_pongs():
    """Liveness laundering: pongs keep coming, a request stalls: not healthy."""
    async with mcpping.connect(STALL, keepalive=None, ping_timeout=0.2) as p:
        assert p.healthy
        p.send({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                "params": {"name": "slow", "arguments": {}}})
        start = time.monotonic()
        # Keep pinging past the ping timeout: every ping succeeds...
        while time.monotonic() - start < 0.5:
            assert await p.ping() > 0
        # ...yet the stalled request means the connection is not healthy.
        assert p.state == "alive" and not p.healthy
        assert p.info()["in_flight"] == 1


async def test_a_ping_abandoned_at_close_is_peer_closed_and_not_lost():
    """Issue 8 item 8: closing under a ping in flight is not a timeout."""
    events: list[mcpping.Event] = []
    p = await mcpping.connect(peer("drop_pings"), keepalive=None, on_event=events.append)
    pending = asyncio.ensure_future(p.ping(timeout=30))
    await asyncio.sleep(0)  # one step: the ping is queued to the I/O thread
    # Commands run in order: once this answer is back, the ping is out.
    assert "result" in await p.request("tools/list", timeout=5)
    await asyncio.wait_for(p.close(), 10)
    with pytest.raises(mcpping.PeerClosed):
        await asyncio.wait_for(pending, 5)
    assert (p.stats.count, p.stats.received, p.stats.lost) == (1, 0, 0)
    abandoned = [e for e in events if e.name == "timeout"]
    assert len(abandoned) == 1 and abandoned[0].code == mcpping._native.MCPP_ERR_CLOSED
    assert abandoned[0].outcome == "closed"  # the C core's verdict


async def test_an_events_iterator_nobody_holds_keeps_no_events():
    async with mcpping.connect(DEMO, keepalive=None) as p:

        async def first_pong() -> None:
            async for ev in p.events("pong"):
                break  # the iterator is garbage from here: nobody can read it

        task = asyncio.create_task(first_pong())
        await asyncio.sleep(0)  # subscribed
        await p.ping()
        await task
        for _ in range(50):
            await p.ping()
        # Nothing collects the 50 pongs for an iterator nobody can read.
        assert p._events._queues == []
