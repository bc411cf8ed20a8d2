"""Reconnect against real server processes: what was in flight is failed,
never replayed; the official SDK session survives a crash with no code
change; a fleet comes back at the budget's rate; max_attempts ends it;
a stopped server is convicted and replaced; records are numbered."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest
from mcp import ClientSession, StdioServerParameters

import mcpping
from mcpping.sdk import stdio_client
from conftest import HERE, PY, field, peer, process_alive

FAST = mcpping.Reconnect(initial=0.02, max_delay=0.05, jitter=0.0, max_attempts=5)


def recorder(tmp_path, *extra: str) -> list[str]:
    return peer("recorder", "--log", str(tmp_path / "log.jsonl"), *extra)


def logged(tmp_path) -> list[dict]:
    with open(tmp_path / "log.jsonl") as f:
        return [json.loads(line) for line in f]


class Watch:
    """Collects events with the time they arrived, and awaits them."""

    def __init__(self) -> None:
        self.events: list[tuple[float, mcpping.Event]] = []
        self._changed = asyncio.Event()

    def __call__(self, ev: mcpping.Event) -> None:
        self.events.append((time.monotonic(), ev))
        self._changed.set()

    def named(self, name: str) -> list[mcpping.Event]:
        return [ev for _, ev in self.events if ev.name == name]

    async def wait(self, name: str, count: int = 1, timeout: float = 20) -> list[mcpping.Event]:
        async def until() -> None:
            while len(self.named(name)) < count:
                self._changed.clear()
                await self._changed.wait()
        await asyncio.wait_for(until(), timeout)
        return self.named(name)


async def test_a_call_in_flight_at_the_crash_fails_in_doubt_and_never_reaches_the_new_server(tmp_path):
    watch = Watch()
    async with mcpping.connect(recorder(tmp_path), reconnect=FAST, keepalive=None,
                               on_event=watch) as p:
        old = p.pid
        hang = asyncio.ensure_future(p.request("tools/call", {"name": "hang", "arguments": {}}))
        # Sent after it (tasks start in order) and answered: the server
        # holds the hanging call now.
        await asyncio.ensure_future(p.request("tools/list"))
        os.kill(old, signal.SIGKILL)
        with pytest.raises(mcpping.RequestInDoubt) as info:
            await hang
        assert info.value.disposition == "in_doubt"
        assert info.value.method == "tools/call"
        (ing,) = await watch.wait("reconnecting")
        assert ing.attempt == 1 and ing.in_flight == 1 and ing.disposition == "in_doubt"
        assert "signal 9" in ing.message
        assert ing.delay is not None and ing.delay < 1
        (ed,) = await watch.wait("reconnected")
        assert ed.pid == p.pid != old
        assert not p.closed and p.name == "recorder"
        resp = await p.request("tools/call", {"name": "echo", "arguments": {}})
        assert resp["result"]["content"][0]["text"] == str(p.pid)
    log = logged(tmp_path)
    hangs = [e for e in log if e["msg"].get("params", {}).get("name") == "hang"]
    assert [e["pid"] for e in hangs] == [old]  # once, to the first server only
    new = [e["msg"] for e in log if e["pid"] == ed.pid]
    assert new[0]["method"] == "initialize" and new[0]["id"] == "mcpp-reconnect-1"
    assert new[0]["params"]["clientInfo"]["name"] == "mcpping"  # the app's own, replayed
    assert new[1]["method"] == "notifications/initialized"
    assert not any(m.get("method") == "initialize" for m in new[1:])
    assert not watch.named("closed")[:-1]  # closed only at the very end


async def test_a_request_sent_during_a_long_backoff_raises_timeout_error_on_its_own_clock(tmp_path):
    # The next server comes 8 s after the crash; the request's 1 s runs from
    # when it was sent, so TimeoutError comes first (an ordering, not a speed).
    backoff = 8.0
    watch = Watch()
    slow = mcpping.Reconnect(initial=backoff, max_delay=backoff, jitter=0.0)
    async with mcpping.connect(recorder(tmp_path), reconnect=slow, keepalive=None,
                               on_event=watch) as p:
        os.kill(p.pid, signal.SIGKILL)
        await watch.wait("reconnecting")
        sent = time.monotonic()
        with pytest.raises(TimeoutError):
            await p.request("tools/list", timeout=1)
        waited = time.monotonic() - sent
        assert 1 <= waited < backoff
        assert not watch.named("reconnected")
        (ev,) = await watch.wait("request_timeout")
        assert ev.message == "tools/list"
        # Awaited, not abandoned: the slot the retry budget gave it is used,
        # and the held frame is seen to go to no server, old or new.
        (ed,) = await watch.wait("reconnected", timeout=backoff + 20)
        resp = await p.request("tools/call", {"name": "echo", "arguments": {}}, timeout=10)
        assert resp["result"]["content"][0]["text"] == str(ed.pid)
    assert not [e for e in logged(tmp_path) if e["msg"].get("method") == "tools/list"]


async def test_official_client_session_keeps_working_across_a_crash():
    params = StdioServerParameters(command=PY, args=[str(HERE / "servers" / "sdk_server.py")])
    watch = Watch()
    async with stdio_client(params, reconnect=FAST, on_event=watch) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            assert field(init, "server_info").name == "sdk-server"
            assert {t.name for t in (await session.list_tools()).tools} >= {"echo", "pid"}
            first = int((await session.call_tool("pid", {})).content[0].text)
            os.kill(first, signal.SIGKILL)
            (ed,) = await watch.wait("reconnected")
            # The same session, no code change: the new server answers.
            assert {t.name for t in (await session.list_tools()).tools} >= {"echo", "pid"}
            second = int((await session.call_tool("pid", {})).content[0].text)
            assert second == ed.pid != first
            assert (await session.call_tool("echo", {"text": "after"})).content[0].text == "after"
    assert not process_alive(first) and not process_alive(second)


async def test_a_fleet_killed_at_once_reconnects_at_the_budgets_rate(tmp_path):
    n, burst, rate = 8, 2, 4.0
    mcpping.set_retry_budget(burst=burst, per_second=rate)
    try:
        watches = [Watch() for _ in range(n)]
        peers = [await mcpping.connect(recorder(tmp_path), keepalive=None, on_event=w,
                                       reconnect=mcpping.Reconnect(initial=0.001, jitter=0.0))
                 for w in watches]
        killed_at = time.monotonic()
        for p in peers:
            os.kill(p.pid, signal.SIGKILL)
        for w in watches:
            await w.wait("reconnected", timeout=30)
        # The budget's slots: `burst` at once, then one every 1/rate s,
        # counted from the failures (seen within a moment of each other).
        slots = [max(0, k - burst + 1) / rate for k in range(n)]
        delays = sorted(w.named("reconnecting")[0].delay for w in watches)
        for slot, d in zip(slots, delays):
            assert slot - 0.25 <= d <= slot + 0.5, delays
        starts = sorted(t + ev.delay for w in watches for t, ev in w.events
                        if ev.name == "reconnecting")
        for slot, t in zip(slots, starts):
            assert t - killed_at >= slot - 0.02, starts
        back = sorted(t for w in watches for t, ev in w.events if ev.name == "reconnected")
        for slot, t in zip(slots, back):
            assert t - killed_at >= slot - 0.02, back
        # In any window of one second at most burst + rate came back.
        for t in back:
            assert sum(1 for u in back if t <= u < t + 1.0) <= burst + rate
        for p in peers:
            await p.close()
    finally:
        mcpping.set_retry_budget()


async def test_max_attempts_spent_closes_with_a_reason_that_says_so(tmp_path):
    watch = Watch()
    p = await mcpping.connect(recorder(tmp_path, "--once", str(tmp_path / "once")),
                              keepalive=None, on_event=watch,
                              reconnect=mcpping.Reconnect(initial=0.01, max_delay=0.02,
                                                          max_attempts=3))
    os.kill(p.pid, signal.SIGKILL)
    info = await asyncio.wait_for(p.wait_closed(), 20)
    assert info.reason.startswith("gave up reconnecting after 3 attempts: server exited with status 4")
    assert [ev.attempt for ev in watch.named("reconnecting")] == [1, 2, 3]
    assert not watch.named("reconnected")
    assert watch.named("closed")[-1].message == info.reason
    assert p.pid is None


async def test_a_stopped_server_goes_stale_and_is_replaced(tmp_path):
    watch = Watch()
    ka = mcpping.KeepAlive(interval=0.1, timeout=0.3, failures=2, min_interval=0.01, jitter_pct=0)
    async with mcpping.connect(recorder(tmp_path), keepalive=ka, kill_grace=0.2,
                               reconnect=FAST, on_event=watch) as p:
        old = p.pid
        os.kill(old, signal.SIGSTOP)
        (stale,) = await watch.wait("stale")
        assert stale.proof == "process"
        (ing,) = await watch.wait("reconnecting")
        assert ing.message.startswith("the server went stale")
        (ed,) = await watch.wait("reconnected")
        assert ed.pid != old and not process_alive(old)
        assert (await p.ping()) >= 0
        assert p.state == "alive"


async def test_a_2026_session_reached_through_discover_reconnects_without_replaying_initialize():
    # connect() sent initialize, modern.py refused it, server/discover made the
    # session: the refused initialize is no handshake to replay on the new server.
    watch = Watch()
    async with mcpping.connect(peer("modern"), reconnect=FAST, keepalive=None,
                               on_event=watch) as p:
        assert p.protocol_version == "2026-07-28"
        old = p.pid
        os.kill(old, signal.SIGKILL)
        (done,) = await watch.wait("reconnected")
        assert watch.named("reconnecting")[-1].attempt == 1
        assert p.pid not in (None, old)
        answer = await p.request("tools/call", {"name": "pid", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, timeout=5)
        assert answer["result"]["content"][0]["text"] == str(p.pid)


async def test_records_carry_reconnect_attempt(tmp_path):
    records: list[dict] = []
    watch = Watch()
    ka = mcpping.KeepAlive(interval=0.05, timeout=1, min_interval=0.01, jitter_pct=0)
    async with mcpping.connect(recorder(tmp_path), keepalive=ka, record=records.append,
                               reconnect=FAST, on_event=watch) as p:
        await watch.wait("pong")
        before = len(records)
        assert all(r["reconnect_attempt"] is None for r in records)
        call = asyncio.ensure_future(p.request("tools/call", {"name": "hang", "arguments": {}}))
        await asyncio.ensure_future(p.request("tools/list"))
        os.kill(p.pid, signal.SIGKILL)
        with pytest.raises(mcpping.RequestInDoubt):
            await call
        await watch.wait("reconnected")
        pongs = len(watch.named("pong"))
        await watch.wait("pong", pongs + 1)
    after = records[before:]
    (rec,) = [r for r in after if r["event"] == "reconnect"]
    assert rec["reconnect_attempt"] == 1
    assert rec["in_flight"] == {"count": 1, "disposition": "in_doubt"}
    assert "signal" not in json.dumps(rec)  # no reasons or payloads in records
    later = after[after.index(rec) + 1:]
    assert any(r["event"] == "ping_ok" for r in later)
    assert all(r["reconnect_attempt"] == 1 for r in later)


async def test_without_reconnect_a_crash_closes(tmp_path):
    async with mcpping.connect(recorder(tmp_path), keepalive=None) as p:
        os.kill(p.pid, signal.SIGKILL)
        info = await asyncio.wait_for(p.wait_closed(), 10)
        assert "signal 9" in info.reason


@pytest.mark.parametrize("kwargs, error", [
    ({"initial": 0}, ValueError), ({"max_delay": 0.5}, ValueError),
    ({"multiplier": 0.5}, ValueError), ({"multiplier": True}, TypeError),
    ({"jitter": 1.5}, ValueError), ({"jitter": float("nan")}, ValueError),
    ({"max_attempts": 0}, ValueError), ({"max_attempts": 2.5}, ValueError),
])
def test_reconnect_refuses_bad_values_by_name(kwargs, error):
    with pytest.raises(error, match="Reconnect." + next(iter(kwargs))):
        mcpping.Reconnect(**kwargs)


async def test_reconnect_option_and_budget_are_checked():
    with pytest.raises(TypeError, match="reconnect must be a mcpping.Reconnect"):
        mcpping.connect(["true"], reconnect={"initial": 1})
    # C's rows (retry_budget.*) and sentences, as Node says them.
    with pytest.raises(ValueError, match="^burst must be an integer between 1 and 1000000, not 0$"):
        mcpping.set_retry_budget(burst=0)
    with pytest.raises(ValueError, match="^per_second must be a number between 0.001 and 1000000, not 0$"):
        mcpping.set_retry_budget(per_second=0)
