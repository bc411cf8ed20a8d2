"""Keepalive: pings on idle, stale detection and kill/reap, unsupported peers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest

import mcpping
from conftest import peer, process_alive, sdk_server

FAST = dict(min_interval=0.01, jitter_pct=0)


def test_interval_below_the_floor_is_refused_where_it_is_written():
    with pytest.raises(ValueError, match=r"^KeepAlive.interval must be 0 \(off\) or between 1 \(min_interval\) and "):
        mcpping.KeepAlive(interval=0.5)
    assert mcpping.KeepAlive(interval=0).interval == 0  # keepalive off


async def test_clamped_interval_is_raised_to_the_floor():
    ka = mcpping.KeepAlive(interval=0.01, timeout=1, min_interval=0.2, clamp=True, jitter_pct=0)
    async with mcpping.connect(peer("echo"), keepalive=ka) as p:
        pong = await asyncio.wait_for(p.events("pong").__anext__(), 5)
        assert not pong.manual
        # The engine pings every 0.2 s, not every 0.01 s.
        assert p.stats.count <= 2


async def test_keepalive_pings_an_idle_server():
    ka = mcpping.KeepAlive(interval=0.05, timeout=1, failures=3, **FAST)
    async with mcpping.connect(peer("echo"), keepalive=ka) as p:
        it = p.events("pong")
        for _ in range(3):
            ev = await asyncio.wait_for(it.__anext__(), 5)
            assert not ev.manual and ev.rtt is not None and ev.rtt > 0
        assert p.stats.received >= 3 and p.state == "alive"


async def test_frozen_server_goes_stale_in_time_and_its_group_is_killed():
    # The timeout covers the SDK server's ~1 s start-up (imports) before it answers.
    interval, timeout, failures = 0.3, 2.0, 1
    ka = mcpping.KeepAlive(interval=interval, timeout=timeout, failures=failures, **FAST)
    p = await mcpping.connect(sdk_server(), keepalive=ka, stderr="ignore")
    try:
        resp = await p.request("tools/call", {"name": "pid", "arguments": {}}, timeout=10)
        pid = int(resp["result"]["content"][0]["text"])
        stale = p.events("stale")
        os.kill(pid, signal.SIGSTOP)
        frozen_at = time.monotonic()
        ev = await asyncio.wait_for(stale.__anext__(), 10)
        took = time.monotonic() - frozen_at
        # Detection bound: interval + timeout x failures, plus a small margin.
        assert took <= interval + timeout * failures + 0.3, took
        assert ev.state == "stale" and ev.failure_count == failures
        info = await asyncio.wait_for(p.wait_closed(), 10)
        assert info.stale and info.term_signal in (signal.SIGTERM, signal.SIGKILL)
        assert not process_alive(pid)
        assert p.state == "closed"
    finally:
        await p.close()


async def test_close_kills_and_reaps_grandchildren_too():
    ka = mcpping.KeepAlive(interval=0.1, timeout=0.2, failures=1, **FAST)
    async with mcpping.connect(peer("echo"), keepalive=ka) as p:
        child = (await p.request("test/spawn_child", timeout=5))["result"]["pid"]
        assert process_alive(child)
        await p.close()
        # Reaped with the whole process group.
        deadline = time.monotonic() + 5
        while process_alive(child) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not process_alive(child)


async def test_unsupported_peer_is_never_convicted():
    ka = mcpping.KeepAlive(interval=0.05, timeout=0.5, failures=1, **FAST)
    got = asyncio.get_running_loop().create_future()
    on_event = lambda ev: ev.name == "unsupported" and not got.done() and got.set_result(ev)  # noqa: E731
    async with mcpping.connect(peer("unsupported"), keepalive=ka, on_event=on_event) as p:
        ev = await asyncio.wait_for(got, 5)
        assert ev.code == -32601
        # It stops pinging: the server saw exactly one ping, and stays alive.
        again = await p.request("echo", {"k": 1}, timeout=2)
        assert again["result"] == {"k": 1}
        pings = (await p.request("test/pings", timeout=2))["result"]["pings"]
        assert pings == 1
        assert p.state == "alive" and not p.closed


async def test_report_only_keeps_a_stale_connection(tmp_path):
    log = tmp_path / "gov.jsonl"
    ka = mcpping.KeepAlive(interval=0.05, timeout=0.1, failures=2, on_stale="report", **FAST)
    stale = asyncio.get_running_loop().create_future()
    on_event = lambda ev: ev.name == "stale" and not stale.done() and stale.set_result(ev)  # noqa: E731
    # A server silent after the handshake: one that still answers other
    # requests (drop_pings) is ping-deaf now, watched by probe, never stale.
    async with mcpping.connect(peer("freeze", "--after", "2"), keepalive=ka, record=log,
                               on_event=on_event) as p:
        await asyncio.wait_for(stale, 5)
        assert not p.closed and p.state == "stale"
    recs = [json.loads(l) for l in log.read_text().splitlines()]
    kinds = [r["event"] for r in recs]
    assert "ping_timeout" in kinds and "suspect" in kinds and "stale" in kinds
    stale = next(r for r in recs if r["event"] == "stale")
    assert stale["failure_count"] >= 2 and stale["in_flight"]["count"] == 0


async def test_stale_reports_in_flight_tool_calls_as_in_doubt_and_never_replays():
    ka = mcpping.KeepAlive(interval=0.05, timeout=0.1, failures=2, **FAST)
    closed = asyncio.get_running_loop().create_future()
    on_event = lambda ev: ev.name == "closed" and not closed.done() and closed.set_result(ev)  # noqa: E731
    async with mcpping.connect(peer("freeze"), keepalive=ka, on_event=on_event) as p:
        await p.request("test/freeze", timeout=5)  # answered, then the server freezes
        call = asyncio.ensure_future(
            p.request("tools/call", {"name": "x", "arguments": {}}, timeout=30))
        ev = await asyncio.wait_for(closed, 10)
        assert ev.in_flight == 1 and ev.disposition == "in_doubt"
        try:
            await call
        except mcpping.PeerClosed:
            pass
        else:
            raise AssertionError("a stuck tool call must fail, not be replayed")
        assert (await p.wait_closed()).stale


async def test_ping_deaf_server_is_reported_once_and_watched_by_probe(tmp_path):
    # drop_pings answers everything but ping: the probe that corroborates
    # the failed pings is answered, so it is ping-deaf, never stale.
    log = tmp_path / "gov.jsonl"
    ka = mcpping.KeepAlive(interval=0.05, timeout=0.3, failures=2, **FAST)
    deaf = asyncio.get_running_loop().create_future()
    seen = []

    def on_event(ev):
        seen.append(ev.name)
        if ev.name == "ping_deaf" and not deaf.done():
            deaf.set_result(ev)

    async with mcpping.connect(peer("drop_pings"), keepalive=ka, record=log,
                               on_event=on_event) as p:
        ev = await asyncio.wait_for(deaf, 10)
        assert ev.proof == "probe:tools/list"

        async def three_probes_answered():  # watched by probe from now on
            n = 0
            async for _ in p.events("probe_ok"):
                n += 1
                if n == 3:
                    return

        await asyncio.wait_for(three_probes_answered(), 10)
        assert not p.closed and p.state == "alive"
    assert "stale" not in seen and seen.count("ping_deaf") == 1
    assert "ping" not in seen[seen.index("ping_deaf"):]
    recs = [json.loads(l) for l in log.read_text().splitlines()]
    rec = next(r for r in recs if r["event"] == "ping_deaf")
    assert rec["proof"] == "probe:tools/list"


async def test_a_silent_2026_server_with_a_call_in_flight_and_no_cpu_is_stale_in_bound():
    # Issue 25 on protocol 2026-07-28 (no ping: keepalive probes with
    # server/discover): modern.py's busy tool stops reading and sleeps (no
    # CPU, no progress asked for). A call in flight excuses nothing when
    # the CPU stands still: stale within interval + timeout * failures plus
    # one probe timeout, and the proof says the CPU was idle.
    ka = mcpping.KeepAlive(interval=0.2, timeout=0.3, failures=2, on_stale="report", **FAST)
    bound = 0.2 + 0.3 * 2 + 0.3
    stale = asyncio.get_running_loop().create_future()

    def on_event(ev):
        if ev.name == "stale" and not stale.done():
            stale.set_result(ev)

    async with mcpping.connect(peer("modern"), keepalive=ka, on_event=on_event) as p:
        assert p.protocol_version == "2026-07-28"
        call = asyncio.ensure_future(p.request(
            "tools/call", {"name": "busy", "arguments": {"seconds": 30}}, timeout=60))
        t0 = time.monotonic()
        ev = await asyncio.wait_for(stale, 10)
        elapsed = time.monotonic() - t0
        call.cancel()
        assert elapsed <= bound + 1.0, f"stale after {elapsed:.2f} s, bound {bound:.2f} s"
        assert "cpu idle" in (ev.proof or ""), ev.proof


async def _fed_pongs(p, n):
    """Waits (bounded) until the C-kept stats count n more pongs: nothing
    crosses for them, so there is no event to await."""
    start = p.stats.received
    for _ in range(1000):
        if p.stats.received >= start + n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{p.stats.received - start} of {n} keepalive pongs in 10 s")


async def test_keepalive_pongs_nobody_listens_to_stay_in_c_and_a_listener_gets_every_one():
    from mcpping import events
    from mcpping.peer import _EVENT

    # Metrics count every pong (another test module may have turned them
    # on for the session): off here, so that nobody listens.
    tap = events.tap
    events.set_tap(None)
    try:
        await _pongs_stay_in_c_until_someone_listens(_EVENT)
        if tap is not None:
            # Metrics are counted in C (issue 21): turned on, the pongs
            # still stay there.
            ka = mcpping.KeepAlive(interval=0.02, timeout=1, failures=3, **FAST)
            async with mcpping.connect(peer("echo"), keepalive=ka) as p:
                assert not p._ping_events_on
                events.set_tap(tap)
                assert not p._ping_events_on
    finally:
        events.set_tap(tap)


async def _pongs_stay_in_c_until_someone_listens(_EVENT):
    ka = mcpping.KeepAlive(interval=0.02, timeout=1, failures=3, **FAST)
    async with mcpping.connect(peer("echo"), keepalive=ka) as p:
        crossed = []
        feed = p._feed

        def counting(batch, charge=0):
            crossed.extend(it[2].name for it in batch
                           if it[1] == _EVENT and it[2].name in ("ping", "pong"))
            feed(batch, charge)

        p._feed = counting
        await _fed_pongs(p, 10)
        # Counted in C (Stats), yet no ping or pong item reached Python.
        assert crossed == []
        assert p.stats.count >= p.stats.received >= 10 and p.stats.avg > 0

        # A listener comes: every ping and pong from now on crosses, in
        # order (each ping's PING before its PONG), and counts once.
        seen = []
        p.on("pong", seen.append)
        it = p.events("ping", "pong")
        got = [await asyncio.wait_for(it.__anext__(), 5) for _ in range(20)]
        while got[0].name == "pong":  # its ping went out before the listener came
            got.pop(0)
        for ping, pong in zip(got[::2], got[1::2]):
            assert (ping.name, pong.name) == ("ping", "pong")
            assert ping.ping_seq == pong.ping_seq and not pong.manual
        seqs = [e.ping_seq for e in got[::2]]
        assert seqs == sorted(set(seqs))
        assert [e.ping_seq for e in seen[:len(got) // 2]] == \
            [e.ping_seq for e in got[1::2]][:len(seen)]
        assert crossed.count("pong") >= len(got) // 2
        # A manual ping still settles, listener or not.
        assert await p.ping() > 0
