"""Bounded memory with nothing lost (issue 8 item 10, issue 23).

The 1 GiB run of the issue is manual (docs/python.md, "Backpressure"):
  python tests/python/backpressure_host.py 1048576 1024 16777216 5
make test runs a 64 MiB flood against a 4 MiB cap with the loop blocked 2 s,
and 64 MiB floods against a 1 MiB cap with the loop free: nobody reading
(a Peer used only through request()), messages() and the SDK adapter read
slowly (tests/python/hosts/flood_unread.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import threading
import sys
from pathlib import Path

import pytest
from conftest import LOOPS, PY, peer

import mcpping

HOST = Path(__file__).resolve().parent / "backpressure_host.py"
UNREAD_HOST = Path(__file__).resolve().parent / "hosts" / "flood_unread.py"
#: What the bindings' bounded queues allow besides 3x max_pending_bytes:
#: interpreter and SDK heap growth, allocator slack (issue 23's soak states
#: RSS growth <= 3x the cap plus a fixed allowance).
ALLOWANCE = 8 << 20

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


@pytest.mark.parametrize("name,wanted", [
    ("max_pending_bytes", "0 (the default, 16 MiB) or an integer between 1 and 281474976710656 bytes"),
    ("max_line_bytes", "an integer between 1 and 281474976710656 bytes"),
])
async def test_sizes_are_validated_with_a_clear_error(name, wanted):
    # The C settings table's row and sentence, as Node says it.
    for bad in (-1, 1.5, 2**49):
        with pytest.raises(ValueError) as ei:
            await mcpping.connect(peer("flood"), **{name: bad})
        assert str(ei.value) == f"{name} must be {wanted}, not {bad!r}"
    with pytest.raises(TypeError, match=f"^{name} must be {re.escape(wanted)}, not str '1'"):
        await mcpping.connect(peer("flood"), **{name: "1"})


async def test_a_line_over_max_line_bytes_closes_with_a_clear_reason():
    async with mcpping.connect(peer("flood"), keepalive=None, max_line_bytes=4096) as p:
        p.send({"jsonrpc": "2.0", "id": 1, "method": "test/flood",
                "params": {"count": 1, "size": 8192}})
        info = await p.wait_closed()
    assert "longer than max_line_bytes (4096 bytes)" in info.reason


async def until(cond, turns: int = 3000) -> None:
    """Waits, bounded (30 s), for cond() to turn true; the caller asserts it."""
    for _ in range(turns):
        if cond():
            return
        await asyncio.sleep(0.01)


def run_unread(mode: str, loop: str, count: int, size: int, cap: int) -> dict:
    out = subprocess.run([PY, str(UNREAD_HOST), mode, loop, str(count), str(size), str(cap)],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_peer_used_only_through_request_keeps_no_flood_beyond_the_bound(loop):
    cap = 1 << 20
    count = 65536  # 64 MiB of notifications nobody iterates messages() for
    r = run_unread("requests", loop, count, 1024, cap)
    assert r["rss_growth"] < 3 * cap + ALLOWANCE, r
    assert r["answered"] >= 1 and r["state"] == "alive"
    # The newest messages, within half the cap, were kept; every older one
    # was dropped and counted; the last is the flood's end.
    assert r["dropped"] + r["kept"] == count + 1
    assert 0 < r["kept"] <= cap // 2 // 1000  # frames of about 1020 bytes
    assert r["kept_seqs_consecutive"]
    assert r["last"]["method"] == "test/flood_done" and r["last"]["params"]["count"] == count


@pytest.mark.parametrize("loop", LOOPS)
def test_messages_read_slowly_get_the_whole_flood_in_order_within_the_bound(loop):
    cap = 1 << 20
    r = run_unread("messages", loop, 16384, 4096, cap)  # 64 MiB
    assert r["rss_growth"] < 3 * cap + ALLOWANCE, r
    assert r["received"] == 16384 and r["in_order"] and r["done"] == 16384
    assert r["dropped"] == 0


@pytest.mark.parametrize("loop", LOOPS)
def test_an_sdk_session_read_slowly_gets_the_whole_flood_in_order_within_the_bound(loop):
    pytest.importorskip("mcp")
    cap = 1 << 20
    r = run_unread("sdk", loop, 16384, 4096, cap)  # 64 MiB through ClientSession
    assert r["rss_growth"] < 3 * cap + ALLOWANCE, r
    assert r["received"] == 16384 and r["in_order"] and r["done"] == 16384
    assert r["tools"] == 2  # and the session's requests are still answered


async def test_messages_nobody_iterates_are_dropped_oldest_first_with_a_counted_warning(caplog):
    cap = 64 * 1024  # messages() keeps 32 KiB
    async with mcpping.connect(peer("flood"), keepalive=None, max_pending_bytes=cap) as p:
        await p.request("test/flood", {"count": 200, "size": 1024})
        while not (await p.request("test/flood_status"))["result"]["done"]:
            pass
        await p.request("test/flood_status")  # after the flood's last line
        kept = []
        async for msg in p.messages():
            kept.append(msg)
            if msg["method"] == "test/flood_done":
                break
    assert p.dropped_messages + len(kept) == 201
    assert 0 < len(kept) <= 33
    seqs = [m["params"]["seq"] for m in kept[:-1]]
    assert seqs == list(range(200 - len(seqs), 200))  # the newest, in order
    # One warning per power of two crossed, each with the count so far.
    counts = [int(r.getMessage().split("dropped so far: ")[1].split()[0])
              for r in caplog.records if "messages dropped so far" in r.getMessage()]
    assert counts and counts == sorted(counts) and counts[-1] <= p.dropped_messages
    assert len(counts) == len({c.bit_length() for c in counts})


async def test_a_peer_whose_messages_reader_is_behind_still_closes():
    cap = 64 * 1024
    p = await mcpping.connect(peer("flood"), keepalive=None, max_pending_bytes=cap)
    stream = p.messages()
    await p.request("test/flood", {"count": 4096, "size": 1024})  # 4 MiB, 64 times the cap
    first = await stream.__anext__()
    assert first["params"]["seq"] == 0
    await until(lambda: not p.info()["reading"])
    assert not p.info()["reading"]  # the reader is behind: its server is paused
    info = await asyncio.wait_for(p.close(), 30)
    assert info.reason is not None and p._inbox.charged == 0
    seqs = [m["params"]["seq"] async for m in stream if m["method"] == "test/seq"]
    assert seqs == list(range(1, len(seqs) + 1))  # what was queued, in order, then the end
    assert p.dropped_messages == 0


async def test_a_reader_behind_pauses_its_own_server_and_no_other():
    # The frames waiting in messages() count against their own connection
    # only: a connection on another loop (thread) runs on meanwhile.
    cap = 64 * 1024
    p = await mcpping.connect(peer("flood"), keepalive=None, max_pending_bytes=cap)
    other: dict = {}

    async def on_other_loop() -> None:
        async with mcpping.connect(peer("flood"), keepalive=None, initialize=False) as q:
            other["answer"] = await q.request("test/flood_status")

    try:
        stream = p.messages()
        await p.request("test/flood", {"count": 2048, "size": 1024})  # 2 MiB, 32 times the cap
        seqs = [(await stream.__anext__())["params"]["seq"]]
        await until(lambda: not p.info()["reading"])
        # What was read before the pause may still be on its way to the
        # inbox: an answer on another connection of this loop, queued in
        # the runtime after it, is fed only once it is there. (Awaited in
        # a task of its own: a reader's own task awaiting a request stops
        # its queue counting, see messages().)

        async def behind_the_queue() -> None:
            async with mcpping.connect(peer("flood"), keepalive=None, initialize=False) as r:
                await r.request("test/flood_status")

        await asyncio.create_task(behind_the_queue())
        assert not p.info()["reading"]
        queued = p._inbox.size
        assert cap // 2 <= queued <= 2 * cap  # the runtime's cap bounds the queue
        thread = threading.Thread(target=lambda: asyncio.run(on_other_loop()))
        thread.start()
        await asyncio.get_running_loop().run_in_executor(None, thread.join, 60)
        assert other["answer"]["result"] == {"done": False}  # answered, A still behind
        assert p._inbox.size == queued and not p.info()["reading"]
        async for msg in stream:
            if msg["method"] == "test/flood_done":
                break
            seqs.append(msg["params"]["seq"])
        assert seqs == list(range(2048)) and p.dropped_messages == 0
        assert p._inbox.charged == 0
    finally:
        await p.close()


async def test_a_reader_that_awaits_a_request_in_its_loop_gets_the_answer():
    # The answer is behind the flood in the pipe: holding the runtime back
    # for this reader's full queue would wait for it forever.
    cap = 64 * 1024
    async with mcpping.connect(peer("flood"), keepalive=None, max_pending_bytes=cap) as p:
        stream = p.messages()
        await p.request("test/flood", {"count": 2048, "size": 1024})  # 2 MiB, 32 times the cap
        seqs = []
        answers = 0

        async def read() -> None:
            nonlocal answers
            async for msg in stream:
                if msg["method"] == "test/flood_done":
                    return
                seqs.append(msg["params"]["seq"])
                if len(seqs) % 256 == 1:
                    for _ in range(3):
                        await asyncio.sleep(0)  # let the queue fill up meanwhile
                    await p.request("test/flood_status", timeout=None)
                    answers += 1

        await asyncio.wait_for(read(), 60)
        assert seqs == list(range(2048)) and answers == 8
        assert p.dropped_messages == 0 and p._inbox.charged == 0


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
    # What B's loop had processed when it blocked: the drain that settles the
    # flood's answer may carry the flood's first frames too (in thread mode
    # the runtime reads on while that loop wakes), and runs them first.
    seen_before_block: list[int] = []
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
            seen_before_block.extend(seen_b)
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
                assert seen_b == seen_before_block  # nothing while blocked
                assert len(seen_b) < count
            return seen_a

        assert asyncio.run(loop_a()) == list(range(count))
    finally:
        unblock.set()
        assert b_done.wait(120)
        t.join()
    assert not errors, errors
    assert seen_b == list(range(count))
