"""mcpping.guard: the engine as middleware, in the server and client roles."""

from __future__ import annotations

import math
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client as sdk_stdio_client

import mcpping
from conftest import HERE, PY


async def test_server_role_drops_a_client_that_stops_answering():
    interval, timeout, failures = 0.05, 0.1, 2
    ka = mcpping.KeepAlive(interval=interval, timeout=timeout, failures=failures,
                           min_interval=0.01, jitter_pct=0)
    # The transport: what the client sends us, and what we send the client.
    c2s_send, c2s_recv = anyio.create_memory_object_stream(math.inf)
    s2c_send, s2c_recv = anyio.create_memory_object_stream(math.inf)
    answered = 0
    stop_answering = anyio.Event()

    async def client() -> None:
        # Answers the server's first two pings, then goes silent.
        nonlocal answered
        async for msg in s2c_recv:
            if msg.get("method") == "ping" and not stop_answering.is_set():
                await c2s_send.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                answered += 1
                if answered == 2:
                    stop_answering.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(client)
        async with mcpping.guard(c2s_recv, s2c_send, role="server", keepalive=ka,
                                 codec="json") as (read, write, g):
            await c2s_send.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            first = await read.receive()
            assert first["method"] == "tools/list"  # application traffic passes through
            await stop_answering.wait()
            silent_at = time.monotonic()
            stale = g.events("stale")
            with anyio.fail_after(5):
                await stale.__anext__()
            assert time.monotonic() - silent_at <= interval + timeout * failures + 0.3
            # The session's read stream ends: the server drops the session.
            with anyio.fail_after(5):
                with pytest.raises(anyio.EndOfStream):
                    await read.receive()
            assert g.state == "closed" and g.stats.received == 2
        tg.cancel_scope.cancel()


async def test_server_role_answers_the_clients_pings():
    a_send, a_recv = anyio.create_memory_object_stream(math.inf)
    b_send, b_recv = anyio.create_memory_object_stream(math.inf)
    async with mcpping.guard(a_recv, b_send, role="server", keepalive=None, codec="json") as (r, w, g):
        await a_send.send({"jsonrpc": "2.0", "id": "big-123", "method": "ping"})
        await a_send.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        with anyio.fail_after(5):
            pong = await b_recv.receive()
            app = await r.receive()
        assert pong == {"jsonrpc": "2.0", "id": "big-123", "result": {}}
        assert app["id"] == 7  # only the non-ping message reaches the session
        await w.send({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}})
        with anyio.fail_after(5):
            assert (await b_recv.receive())["id"] == 7


async def test_client_role_over_the_official_stdio_transport():
    params = StdioServerParameters(command=PY, args=[str(HERE / "servers" / "sdk_server.py")])
    ka = mcpping.KeepAlive(interval=0.05, timeout=3, min_interval=0.01, jitter_pct=0)
    async with sdk_stdio_client(params) as (r0, w0):
        async with mcpping.guard(r0, w0, role="client", keepalive=ka, transport="stdio") as (r, w, g):
            async with ClientSession(r, w) as session:
                await session.initialize()
                assert (await session.call_tool("add", {"a": 2, "b": 3})).content[0].text == "5"
                rtt = await g.ping(timeout=3)
                assert 0 < rtt < 3
                pongs = g.events("pong")
                with anyio.fail_after(5):
                    ev = await pongs.__anext__()
                assert ev.name == "pong"
                assert g.info()["initialized"]


async def test_client_role_over_streamable_http(http_server):
    from mcp.client.streamable_http import streamable_http_client

    ka = mcpping.KeepAlive(interval=0.1, timeout=3, min_interval=0.01, jitter_pct=0)
    records: list[dict] = []
    # mcp 1.x also yields a get_session_id callback.
    async with streamable_http_client(http_server) as (r0, w0, *_):
        async with mcpping.guard(r0, w0, role="client", keepalive=ka, transport="streamable-http",
                                 record=records.append) as (r, w, g):
            async with ClientSession(r, w) as session:
                await session.initialize()
                assert (await session.call_tool("echo", {"text": "over http"})).content[0].text \
                    == "over http"
                assert await g.ping(timeout=3) > 0
                pongs = g.events("pong")
                with anyio.fail_after(5):
                    await pongs.__anext__()  # a keepalive pong over HTTP
    ok = [x for x in records if x["event"] == "ping_ok"]
    assert ok and all(x["transport"] == "streamable-http" for x in ok)
    assert ok[0]["peer"] == "sdk-server"


async def test_a_session_that_is_behind_pushes_back_to_the_transport():
    # The transport has 1000 notifications ready; the session takes 10.
    t_send, t_recv = anyio.create_memory_object_stream(math.inf)
    out_send, out_recv = anyio.create_memory_object_stream(math.inf)
    for i in range(1000):
        t_send.send_nowait({"jsonrpc": "2.0", "method": "test/seq", "params": {"seq": i}})
    async with mcpping.guard(t_recv, out_send, role="client", keepalive=None,
                             codec="json") as (read, write, g):
        got = [(await read.receive())["params"]["seq"] for _ in range(10)]
        for _ in range(100):
            await anyio.sleep(0)  # turns of the loop the guard could use to read on
        # Zero-buffered, as the SDK's transports: the guard holds at most the
        # one message it waits to hand over; the rest stays with the transport.
        assert t_recv.statistics().current_buffer_used >= 1000 - 10 - 1
        got += [(await read.receive())["params"]["seq"] for _ in range(990)]
    assert got == list(range(1000))


async def test_a_timed_out_request_is_answered_to_a_session_that_was_not_reading():
    t_send, t_recv = anyio.create_memory_object_stream(math.inf)
    out_send, out_recv = anyio.create_memory_object_stream(math.inf)
    async with mcpping.guard(t_recv, out_send, role="client", keepalive=None, codec="json",
                             request_timeout=0.05) as (read, write, g):
        timed_out = g.events("request_timeout")
        await write.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        with anyio.fail_after(5):
            await timed_out.__anext__()  # nobody waited in read.receive() meanwhile
            answer = await read.receive()
    assert answer["id"] == 7 and answer["error"]["code"] == -32001
