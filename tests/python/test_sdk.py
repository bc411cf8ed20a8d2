"""mcpping.sdk.stdio_client under the official SDK's ClientSession.

Runs against both mcp majors: here with mcp 2.x, and in build/venv-mcp1
(``make test-python-mcp1``) with mcp 1.x.
"""

from __future__ import annotations

import asyncio
import errno
import time

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters

import mcpping
from mcpping.sdk import stdio_client, stdio_peer
from conftest import PY, HERE, expected_mode, field

PARAMS = StdioServerParameters(command=PY, args=[str(HERE / "servers" / "sdk_server.py")])
FAST = mcpping.KeepAlive(interval=0.02, timeout=2, failures=3, min_interval=0.01, jitter_pct=0)


async def test_session_initializes_lists_and_calls_tools_while_keepalive_runs():
    events: list[mcpping.Event] = []
    keepalive_pong = asyncio.Event()

    def on_event(ev: mcpping.Event) -> None:
        events.append(ev)
        if ev.name == "pong" and not ev.manual:
            keepalive_pong.set()

    async with stdio_client(PARAMS, keepalive=FAST, on_event=on_event) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            assert field(init, "server_info").name == "sdk-server"
            tools = await session.list_tools()
            assert {t.name for t in tools.tools} >= {"echo", "add", "pid", "ping_client"}
            # Sequential and concurrent calls: nothing lost or reordered.
            for i in range(30):
                res = await session.call_tool("echo", {"text": f"m{i}"})
                assert res.content[0].text == f"m{i}"
            results = await asyncio.gather(
                *(session.call_tool("add", {"a": i, "b": 1000}) for i in range(40)))
            assert [int(r.content[0].text) for r in results] == [i + 1000 for i in range(40)]
            assert (await session.send_ping()) is not None
            # The session goes quiet: keepalive pings now, underneath it.
            await asyncio.wait_for(keepalive_pong.wait(), 5)
            res = await session.call_tool("echo", {"text": "after"})
            assert res.content[0].text == "after"
    pongs = [e for e in events if e.name == "pong" and not e.manual]
    assert pongs, "keepalive never ran"
    assert events[-1].name == "closed"


async def test_server_pings_are_answered_while_the_client_loop_is_blocked():
    """The headline: the asyncio loop sleeps 2 s, the C thread answers anyway."""
    window: list[float] = []

    async def on_log(params: object) -> None:
        # Block the client's event loop (and hold the GIL) with synchronous code.
        window.append(time.monotonic())
        time.sleep(2.0)
        window.append(time.monotonic())

    async with stdio_peer(PARAMS, keepalive=None) as (r, w, peer):
        # Host mode: the native thread answers only as the blocked loop's watchdog.
        assert mcpping.runtime_mode()[0] == expected_mode()
        async with ClientSession(r, w, logging_callback=on_log) as session:
            await session.initialize()
            res = await session.call_tool("ping_client", {"count": 5, "delay": 0.2})
            assert not field(res, "is_error"), res
            times = field(res, "structured_content")["result"]
    assert len(window) == 2 and len(times) == 5
    t0, t1 = window
    for sent, answered in times:
        # Every ping went out and came back while the loop was blocked.
        assert t0 < sent < answered < t1
        assert answered - sent < 0.25
    assert peer.closed and peer.state == "closed"


async def test_server_pings_without_block_are_counted_as_answered():
    async with stdio_peer(PARAMS, keepalive=None) as (r, w, peer):
        seen = peer.events("ping_answered")
        async with ClientSession(r, w) as session:
            await session.initialize()
            await session.call_tool("ping_client", {"count": 3, "delay": 0})
            for _ in range(3):
                ev = await asyncio.wait_for(seen.__anext__(), 5)
                assert ev.name == "ping_answered"


async def test_the_write_stream_hands_each_message_over_in_the_senders_own_call(monkeypatch):
    # No writer task between the session and the peer (one loop turn less
    # per request, issue 21); the answers come back in order.
    from mcpping import _mcp

    async with stdio_peer(PARAMS, keepalive=None) as (r, w, peer):
        sent: list[bytes] = []
        real = peer.send
        monkeypatch.setattr(peer, "send", lambda data: (sent.append(data), real(data))[1])

        def ping(rid: str) -> object:
            return _mcp.SessionMessage(_mcp.decode(f'{{"jsonrpc":"2.0","id":"{rid}","method":"ping"}}'))

        await w.send(ping("t1"))
        assert len(sent) == 1
        w.send_nowait(ping("t2"))
        w.send_nowait(ping("t3"))
        assert [b'"t1"' in d for d in sent] == [True, False, False]
        assert [b'"t3"' in d for d in sent] == [False, False, True]
        ids = []
        for _ in range(3):
            item = await asyncio.wait_for(r.receive(), 10)
            ids.append(getattr(item.message, "root", item.message).id)
        assert ids == ["t1", "t2", "t3"]
        w.close()
        with pytest.raises(anyio.ClosedResourceError):
            await w.send(ping("t4"))
        assert len(sent) == 3


async def test_spawn_failure_is_the_oserror_the_sdk_raises():
    # Code written for the SDK's stdio_client catches FileNotFoundError (a
    # program not installed) or PermissionError (not executable).
    from mcp.client.stdio import stdio_client as sdk_stdio_client
    for command, kind, code in (("/nonexistent/server", FileNotFoundError, errno.ENOENT),
                                ("/dev/null", PermissionError, errno.EACCES)):
        for client in (sdk_stdio_client, stdio_client):
            with pytest.raises(kind) as caught:
                async with client(StdioServerParameters(command=command)):
                    pass
            assert caught.value.errno == code
        assert isinstance(caught.value, mcpping.SpawnError)
        assert str(caught.value).startswith(f"cannot start {command}: ")
