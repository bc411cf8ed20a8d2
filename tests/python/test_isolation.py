"""One failure never costs another item (issue 8 item 2).

Each test runs two real connections whose last items (messages, records and
the CLOSED item) wait in one drained batch: the loop is held while the I/O
thread closes both, then released. Connection A carries the trigger (a
raising callback, an unwritable record file, a reply with an unhashable id);
connection B is innocent. Every message of both, both closes, and A's
pending futures must arrive, and the trigger's error must reach the loop's
exception handler.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

import mcpping
from conftest import HERE, PY

BURST = [PY, str(HERE / "servers" / "burst.py")]
N = 40


def hold_loop_until_closed(*peers: mcpping.Peer, timeout: float = 10.0) -> None:
    """Blocks this loop (on purpose) until the I/O thread closed every peer.

    A peer's pid turns None under the lock that queues its CLOSED item, so
    once all are None, everything the servers sent waits in one drain.
    """
    deadline = time.monotonic() + timeout
    while any(p.pid is not None for p in peers):
        assert time.monotonic() < deadline, "servers did not exit"
        time.sleep(0.002)


def burst(p: mcpping.Peer, odd_id: bool = False) -> None:
    p.send({"jsonrpc": "2.0", "id": 1, "method": "test/burst",
            "params": {"n": N, "odd_id": odd_id}})


class Handler:
    """Collects what reaches the loop's exception handler."""

    def __init__(self) -> None:
        self.contexts: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, ctx: self.contexts.append(ctx))

    def exceptions(self) -> list[BaseException]:
        return [c["exception"] for c in self.contexts if "exception" in c]


async def seqs(p: mcpping.Peer) -> list[int]:
    return [m["params"]["i"] async for m in p.messages() if m.get("method") == "test/seq"]


async def closed(*peers: mcpping.Peer) -> None:
    await asyncio.wait_for(asyncio.gather(*(p.wait_closed() for p in peers)), 10)


async def test_a_raising_message_callback_costs_no_other_item():
    handler = Handler()
    got: list[int] = []

    def on_message(frame: bytes) -> None:
        i = json.loads(frame)["params"]["i"]
        got.append(i)
        if i % 10 == 3:
            raise RuntimeError(f"listener broke on {i}")

    def on_close(info: mcpping.CloseInfo) -> None:
        raise RuntimeError("on_close broke")

    a = await mcpping.connect(BURST, keepalive=None, on_message=on_message, on_close=on_close)
    b = await mcpping.connect(BURST, keepalive=None)
    a.on("closed", lambda ev: 1 / 0)
    burst(a)
    burst(b)
    hold_loop_until_closed(a, b)
    await closed(a, b)
    assert got == list(range(N))
    assert await seqs(b) == list(range(N))
    raised = handler.exceptions()
    assert sorted(str(e) for e in raised if isinstance(e, RuntimeError)) == sorted(
        [f"listener broke on {i}" for i in (3, 13, 23, 33)] + ["on_close broke"])
    assert any(isinstance(e, ZeroDivisionError) for e in raised)
    assert all(c.get("peer") is a for c in handler.contexts)


async def test_an_async_listener_that_raises_reaches_the_exception_handler():
    handler = Handler()
    failed = asyncio.Event()

    async def listener(ev: mcpping.Event) -> None:
        failed.set()
        raise ValueError("async listener broke")

    async with mcpping.connect(BURST, keepalive=None) as a:
        a.on("closed", listener)
    await asyncio.wait_for(failed.wait(), 5)
    await asyncio.sleep(0)  # the task's done callback runs one step later
    assert [str(e) for e in handler.exceptions()] == ["async listener broke"]
    assert "listener" in handler.contexts[0]["message"] and handler.contexts[0]["peer"] is a


class Escape(BaseException):
    """Not an Exception: user code leaving the way KeyboardInterrupt does."""


async def test_a_base_exception_from_a_callback_still_lets_every_item_through():
    handler = Handler()
    got: list[int] = []

    def on_message(frame: bytes) -> None:
        got.append(json.loads(frame)["params"]["i"])
        if len(got) == 1:
            raise Escape()

    a = await mcpping.connect(BURST, keepalive=None, on_message=on_message)
    b = await mcpping.connect(BURST, keepalive=None)
    burst(a)
    burst(b)
    hold_loop_until_closed(a, b)
    await closed(a, b)
    assert got == list(range(N))
    assert await seqs(b) == list(range(N))
    # asyncio reports a BaseException of a callback itself.
    assert [type(e) for e in handler.exceptions()] == [Escape]


async def test_an_unwritable_record_file_costs_no_other_item():
    handler = Handler()
    a = await mcpping.connect(BURST, keepalive=None, record="/dev/full")
    b = await mcpping.connect(BURST, keepalive=None)
    burst(a)
    burst(b)
    hold_loop_until_closed(a, b)
    await closed(a, b)
    assert await seqs(a) == list(range(N))
    assert await seqs(b) == list(range(N))
    assert a.state == b.state == "closed"
    raised = handler.exceptions()
    assert raised and all(isinstance(e, OSError) for e in raised)
    assert "record" in handler.contexts[0]["message"]


async def test_a_reply_with_an_unhashable_id_costs_no_other_item():
    handler = Handler()
    a = await mcpping.connect(BURST, keepalive=None)
    b = await mcpping.connect(BURST, keepalive=None)
    # A pending request makes A look up reply ids; the server never answers it.
    pending = asyncio.ensure_future(a.request("test/burst", {"n": N, "odd_id": True}))
    await asyncio.sleep(0)  # one step: the request is sent and registered
    burst(b)
    hold_loop_until_closed(a, b)
    await closed(a, b)
    with pytest.raises(mcpping.PeerClosed):
        await asyncio.wait_for(pending, 5)
    got = [m async for m in a.messages()]
    assert [m["params"]["i"] for m in got if m.get("method") == "test/seq"] == list(range(N))
    # The odd reply is not ours: it reaches the application unaltered.
    odd = [m for m in got if "method" not in m]
    assert len(odd) == 1 and odd[0]["result"] == {}
    assert isinstance(odd[0]["id"], list) and odd[0]["id"][0].startswith("mcpping-")
    assert await seqs(b) == list(range(N))
    assert handler.contexts == []  # a hostile frame is the peer's problem, not an error of ours


async def test_an_initialize_answer_that_is_not_utf8_still_completes_the_handshake():
    records: list[dict[str, Any]] = []
    cmd = [PY, str(HERE / "servers" / "bad_utf8.py")]
    async with mcpping.connect(cmd, keepalive=None, init_timeout=5, record=records.append) as p:
        assert p.name == "bad\ufffd\ufffdname"
        assert await p.ping(timeout=2) > 0
    assert records[-1]["event"] == "closed"


async def test_a_frame_nested_past_the_recursion_limit_reaches_the_application():
    handler = Handler()
    a = await mcpping.connect(BURST, keepalive=None)
    b = await mcpping.connect(BURST, keepalive=None)
    pending = asyncio.ensure_future(a.request("test/burst", {"n": N, "deep": True}))
    await asyncio.sleep(0)  # one step: the request is sent and registered
    burst(b)
    hold_loop_until_closed(a, b)
    await closed(a, b)
    with pytest.raises(mcpping.PeerClosed):
        await asyncio.wait_for(pending, 5)
    got = [m async for m in a.messages()]
    assert [m["params"]["i"] for m in got if m.get("method") == "test/seq"] == list(range(N))
    deep = [m for m in got if "_unparsed" in m]
    # Too deep for Python's json: handed over as text, byte for byte.
    assert len(deep) == 1 and deep[0]["_unparsed"].startswith('{"jsonrpc":"2.0","method":"test/deep"')
    assert len(deep[0]["_unparsed"]) == 200_000 + len('{"jsonrpc":"2.0","method":"test/deep","params":{"v":},"mcpping-":1}')
    assert await seqs(b) == list(range(N))
    assert handler.contexts == []


async def test_guard_keeps_the_session_when_a_listener_raises_and_records_cannot_be_written():
    """In guard the engine calls back from inside recv(): an error there must
    not end the pumps (and with them the session)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    handler = Handler()
    server = StdioServerParameters(command=PY, args=["-m", "mcpping.demo"])
    async with stdio_client(server) as (r, w):
        async with mcpping.guard(r, w, keepalive=None, transport="stdio",
                                 record="/dev/full") as (gr, gw, g):
            g.on("pong", lambda ev: 1 / 0)
            async with ClientSession(gr, gw) as session:
                await session.initialize()
                for _ in range(3):
                    assert await g.ping(timeout=5) > 0
                tools = await session.list_tools()
                assert [t.name for t in tools.tools] == ["echo", "add"]
    kinds = [type(e) for e in handler.exceptions()]
    assert kinds.count(ZeroDivisionError) == 3
    assert OSError in kinds


async def test_a_failing_metrics_tap_costs_no_listener_iterator_or_close(monkeypatch):
    from mcpping import events as events_module

    class BrokenTap:
        def opened(self, hub):
            pass

        def event(self, hub, ev):
            raise RuntimeError("metrics backend down")

        def closed(self, hub):
            raise RuntimeError("metrics backend still down")

    handler = Handler()
    monkeypatch.setattr(events_module, "tap", BrokenTap())
    seen: list[str] = []
    p = await mcpping.connect(BURST, keepalive=None, on_event=lambda ev: seen.append(ev.name))
    stream = p.events()
    assert await p.ping(timeout=5) > 0
    await asyncio.wait_for(p.close(), 10)
    names = [ev.name async for ev in stream]  # ends: the iterator was finished
    assert names[-1] == "closed" and seen[-1] == "closed" and "pong" in seen
    messages = {c["message"] for c in handler.contexts}
    assert messages == {"mcpping: the metrics tap raised"}
    assert "metrics backend still down" in {str(e) for e in handler.exceptions()}


async def test_a_server_whose_stderr_is_not_utf8_still_closes_cleanly():
    """Its stderr reaches the stderr target (and may be quoted in the close
    reason): bytes that are not UTF-8 are replaced, never a lost CLOSED."""
    chunks: list[str] = []
    code = "import sys; sys.stderr.buffer.write(b'bad \\xff\\xfe tail\\n'); sys.stderr.flush()"
    p = await mcpping.connect([PY, "-c", code], keepalive=None, initialize=False,
                              stderr=chunks.append)
    info = await asyncio.wait_for(p.wait_closed(), 10)
    assert isinstance(info.reason, str) and info.exit_status == 0
    assert "".join(chunks) == "bad \ufffd\ufffd tail\n"
