"""Bounded memory with nothing lost (issue 8 item 10).

The 1 GiB run of the issue is manual (docs/python.md, "Backpressure"):
  python tests/python/backpressure_host.py 1048576 1024 16777216 5
make test runs a 64 MiB flood against a 4 MiB cap with the loop blocked 2 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
import sys
from pathlib import Path

import pytest
from conftest import peer

import mcpping

HOST = Path(__file__).resolve().parent / "backpressure_host.py"


def run_host(count: int, size: int, cap: int, block_s: float) -> dict:
    out = subprocess.run([sys.executable, str(HOST), str(count), str(size), str(cap), str(block_s)],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def test_flood_while_the_loop_is_blocked_stays_bounded_and_loses_nothing():
    cap = 4 << 20
    r = run_host(65536, 1024, cap, 2.0)  # 64 MiB, 16 times the cap
    assert r["frames"] == 65536
    assert r["in_order"]
    assert r["hash_ok"]
    assert r["convicted"] == []
    assert r["rss_growth"] < 2 * cap, r


async def test_full_outbound_queue_waits_in_order_then_drains():
    cap = 64 * 1024
    answers: list[int] = []

    def on_message(frame: bytes) -> None:
        msg = json.loads(frame)
        if isinstance(msg.get("id"), int):
            answers.append(msg["id"])

    async with mcpping.connect(peer("flood"), keepalive=None, on_message=on_message,
                               max_pending_bytes=cap) as p:
        os.kill(p.pid, signal.SIGSTOP)  # it reads nothing: pipe, then queue fill
        pad = "y" * 4000
        n = 200
        try:
            for i in range(n):
                p.send({"jsonrpc": "2.0", "id": i, "method": "ping", "params": {"pad": pad}})
            assert len(p._outbox) > 0  # refused by the runtime, kept here in order
        finally:
            os.kill(p.pid, signal.SIGCONT)
        await p.drain()
        assert not p._outbox
        await p.ping()
        while len(answers) < n:
            await p.request("test/cancelled")  # a round trip: answers arrive in order
        assert answers == list(range(n))


@pytest.mark.parametrize("name", ["max_pending_bytes", "max_line_bytes"])
async def test_sizes_are_validated_with_a_clear_error(name):
    with pytest.raises(ValueError, match=f"{name} must be an integer between 1 and"):
        await mcpping.connect(peer("flood"), **{name: 0})
    with pytest.raises(TypeError, match=f"{name} must be an integer"):
        await mcpping.connect(peer("flood"), **{name: 1.5})


async def test_a_line_over_max_line_bytes_closes_with_a_clear_reason():
    async with mcpping.connect(peer("flood"), keepalive=None, max_line_bytes=4096) as p:
        p.send({"jsonrpc": "2.0", "id": 1, "method": "test/flood",
                "params": {"count": 1, "size": 8192}})
        info = await p.wait_closed()
    assert "longer than max_line_bytes (4096 bytes)" in info.reason


def test_a_drain_on_one_loop_never_resumes_a_connection_whose_loop_is_blocked():
    """Issue 23: with two asyncio loops in one process, a drain on one reset
    the other's count, so a blocked loop's connection read on and its items
    piled up in that loop's queue. Each connection's bytes now count until
    its own loop has processed them."""
    from mcpping import _native

    cap = 256 * 1024
    count, size = 4000, 1000  # 4 MB for each loop, 16 times the cap
    seen_b: list[int] = []
    ids: dict[str, int] = {}
    ready, unblock, b_done = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def on_message_b(frame: bytes) -> None:
        msg = json.loads(frame)
        if msg.get("method") == "test/seq":
            seen_b.append(msg["params"]["seq"])

    async def loop_b() -> None:
        async with mcpping.connect(peer("flood"), keepalive=None, on_message=on_message_b,
                                   max_pending_bytes=cap) as p:
            ids["b"] = p._id
            await p.request("test/flood", {"count": count, "size": size})
            ready.set()
            unblock.wait(120)  # this loop is blocked: it processes nothing
            while len(seen_b) < count:
                await asyncio.sleep(0.01)

    def thread_b() -> None:
        try:
            asyncio.run(loop_b())
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            b_done.set()

    t = threading.Thread(target=thread_b)
    t.start()
    try:
        assert ready.wait(60)

        def reading_b() -> bool:
            return bool(_native.info(ids["b"])["reading"])

        async def loop_a() -> list[int]:
            seen_a: list[int] = []
            done = asyncio.Event()

            def on_message_a(frame: bytes) -> None:
                msg = json.loads(frame)
                if msg.get("method") == "test/seq":
                    seen_a.append(msg["params"]["seq"])
                elif msg.get("method") == "test/flood_done":
                    done.set()

            async with mcpping.connect(peer("flood"), keepalive=None, on_message=on_message_a,
                                       max_pending_bytes=cap) as p:
                for _ in range(1500):  # B stops at its cap, drained or not
                    if not reading_b():
                        break
                    await asyncio.sleep(0.01)
                assert not reading_b()
                await p.request("test/flood", {"count": count, "size": size})
                await asyncio.wait_for(done.wait(), 120)  # many pauses and resumes of A's own
                # This loop drained B's items too, but B's loop holds them unprocessed.
                assert not reading_b()
                assert seen_b == []
            return seen_a

        assert asyncio.run(loop_a()) == list(range(count))
    finally:
        unblock.set()
        assert b_done.wait(120)
        t.join()
    assert not errors, errors
    assert seen_b == list(range(count))
