"""Per-request deadlines and aborts, and live health reads (issue 8 items 3, 4)."""

from __future__ import annotations

import asyncio
import math

import pytest
from conftest import peer

import mcpping

HANG = {"name": "hang"}


async def cancelled_ids(p: mcpping.Peer) -> list:
    """The requestIds of every notifications/cancelled the server received."""
    resp = await p.request("test/cancelled")
    return resp["result"]["ids"]


async def test_hung_call_reads_unhealthy_live_and_abort_cancels_it():
    # Keepalive off: no item is queued while the call hangs, so before the
    # live snapshot this read healthy=True, in_flight=0 for ever.
    async with mcpping.connect(peer("flood"), keepalive=None, ping_timeout=0.3) as p:
        call = asyncio.ensure_future(p.request("tools/call", HANG, timeout=None))
        await p.ping()  # commands run in order: the call is on the wire
        assert p.info()["in_flight"] == 1
        assert p.healthy
        await asyncio.sleep(0.5)  # past the ping timeout; nothing happens meanwhile
        info = p.info()
        assert info["in_flight"] == 1
        assert info["healthy"] is False
        assert p.healthy is False
        assert p.state == "alive"

        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # connect()'s initialize was mcpping-1.
        assert await cancelled_ids(p) == ["mcpping-2"]
        assert p.info()["in_flight"] == 0
        assert p.healthy


async def test_request_timeout_cancels_on_the_wire_and_clears_the_ledger():
    frames: list[bytes] = []
    async with mcpping.connect(peer("flood"), keepalive=None, on_message=frames.append) as p:
        with pytest.raises(asyncio.TimeoutError) as info:
            await p.request("tools/call", HANG, timeout=0.2)
        # The engine's sentence (C's, as Node's RpcError says it).
        assert str(info.value) == "Request timed out (mcpping: no answer after 200 ms)"
        assert p.info()["in_flight"] == 0
        assert await cancelled_ids(p) == ["mcpping-2"]
        # The answer after the timeout made it healthy again.
        assert p.healthy
        ok = await p.request("tools/call", {"name": "sleep", "arguments": {"ms": 10}}, timeout=5)
        assert ok["result"] == {"slept": 10}
    # Neither the engine's error answer nor anything else leaked to the app.
    assert not [f for f in frames if b"mcpping-" in f]


async def test_a_request_with_no_timeout_of_its_own_times_out_at_request_timeout():
    # timeout=None leaves it to connect(request_timeout=): its TimeoutError
    # says the deadline that applied (it raised TypeError formatting None).
    async with mcpping.connect(peer("flood"), keepalive=None, request_timeout=0.2) as p:
        with pytest.raises(asyncio.TimeoutError) as info:
            await p.request("tools/call", HANG, timeout=None)
        assert str(info.value) == "Request timed out (mcpping: no answer after 200 ms)"
        assert p.info()["in_flight"] == 0


# A server that answers in mcpping's own words is still the server: the
# engine's answers are known by the kind the C core puts on them, not by text.
_MIMICS = [{"code": -32001, "message": "Request timed out (mcpping: no answer after 5 ms)"},
           {"code": -32003, "message": "Request in doubt (mcpping: the server failed while it was in flight; "
            "it may have run, and it is not replayed)", "data": {"mcpping": "in_doubt"}}]


@pytest.mark.parametrize("error", _MIMICS, ids=["timeout", "in_doubt"])
async def test_a_server_answer_in_mcppings_words_is_the_servers_answer(error):
    async with mcpping.connect(peer("echo"), keepalive=None) as p:
        resp = await p.request("test/error", {"error": error}, timeout=5)
        assert resp["error"] == error


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, 1e9])
async def test_request_timeout_out_of_range_is_a_clear_error(bad):
    async with mcpping.connect(peer("flood"), keepalive=None) as p:
        with pytest.raises(ValueError, match="timeout must be None \\(none of its own\\) or between"):
            await p.request("ping", timeout=bad)
        with pytest.raises(TypeError, match="timeout must be None"):
            await p.request("ping", timeout="1")  # type: ignore[arg-type]
        assert p.info()["in_flight"] == 0


async def test_sdk_request_timeout_answers_the_session_and_cancels():
    from mcp import ClientSession, MCPError, StdioServerParameters

    from mcpping.sdk import stdio_peer

    params = StdioServerParameters(command=peer("flood")[0], args=peer("flood")[1:])
    # The deadline covers initialize too: room for a loaded machine.
    async with stdio_peer(params, keepalive=None, request_timeout=2.0) as (r, w, p):
        async with ClientSession(r, w) as session:
            await session.initialize()
            with pytest.raises(MCPError) as exc:
                await session.call_tool("hang", {})
            assert exc.value.code == -32001
            assert "timed out" in str(exc.value)
            assert p.info()["in_flight"] == 0
            tools = await session.list_tools()  # the session goes on
            assert [t.name for t in tools.tools] == ["hang", "sleep"]
            assert p.healthy


async def test_a_servers_request_is_refused_by_discard_and_handed_to_messages_otherwise():
    # on_message=discard (the commands) keeps nothing, so a request from the
    # server is answered -32601 at once, as Node's Peer answers one nobody
    # listens for; the server's test/ask_me returns the answer it got.
    async with mcpping.connect(peer("echo"), on_message=mcpping.peer.discard) as p:
        resp = await p.request("test/ask_me", {"method": "roots/list"}, timeout=10)
    assert resp["result"]["answer"] == {"jsonrpc": "2.0", "id": "ask-1",
                                        "error": {"code": -32601, "message": "Method not found"}}
    # Without it the request is the application's: messages() gets it, and
    # the server waits for the answer the application sends.
    async with mcpping.connect(peer("echo")) as p:
        asked = asyncio.ensure_future(p.request("test/ask_me", {"method": "sampling/createMessage"}, timeout=10))
        async for msg in p.messages():
            if msg.get("method") == "sampling/createMessage":
                p.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"served": True}})
                break
        resp = await asked
    assert resp["result"]["answer"] == {"jsonrpc": "2.0", "id": "ask-1", "result": {"served": True}}


async def test_the_shared_request_table_takes_only_its_own_answers_and_never_raises():
    """`_rpc.Requests`, under the stdio Peer and the HTTP client alike: an
    answer to one of ours settles it; a given-up id's late answer is taken
    (once); anything else, an answer too deeply nested for json (the HTTP
    client let that RecursionError out of its session loop) included, is
    not ours and raises nothing."""
    from mcpping import _rpc
    table = _rpc.Requests(asyncio.get_running_loop())
    rid, frame, fut = table.create("tools/list", None)
    assert frame == b'{"jsonrpc":"2.0","id":"%s","method":"tools/list"}' % rid.encode()
    deep = b'{"jsonrpc":"2.0","id":"%s","result":%s%s}' % (rid.encode(), b"[" * 100000, b"]" * 100000)
    assert table.answer(deep) is False and not fut.done()
    assert table.answer(b'{"jsonrpc":"2.0","id":"mcpping-999","result":{}}') is False
    assert table.answer(b'{"jsonrpc":"2.0","id":"%s","result":{}}' % rid.encode(), "timeout")
    assert fut.result() == ({"jsonrpc": "2.0", "id": rid, "result": {}}, "timeout")
    assert not table.pending
    table.give_up(rid)
    late = b'{"jsonrpc":"2.0","id":"%s","result":{}}' % rid.encode()
    assert table.answer(late) is True and table.answer(late) is False
    for _ in range(1025):  # bounded: the oldest given-up id is forgotten first
        table.give_up(table.create("ping", None)[0])
    assert table.answer(b'{"jsonrpc":"2.0","id":"mcpping-2","result":{}}') is False
    assert table.answer(b'{"jsonrpc":"2.0","id":"mcpping-1026","result":{}}') is True
