"""mcpping.instrument(): every stdio client the SDK creates goes through mcpping.

Runs against both mcp majors (here and in build/venv-mcp1).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import types as pytypes

import mcp
import mcp.client.stdio
import pytest
from mcp import ClientSession, StdioServerParameters

import mcpping
from conftest import HERE, PY, field, process_alive

# Kept in a tuple: instrument() rebinds every module-level name bound to the
# SDK's function, and this test module's globals are no exception.
_SDK = (mcp.client.stdio.stdio_client,)
PARAMS = StdioServerParameters(command=PY, args=[str(HERE / "servers" / "sdk_server.py")])
FAST = mcpping.KeepAlive(interval=0.05, timeout=2, failures=3, min_interval=0.01, jitter_pct=0)


@pytest.fixture(autouse=True)
def clean():
    yield
    mcpping.uninstrument()
    assert mcp.client.stdio.stdio_client is _SDK[0]


def a_module_that_imported_it_by_name() -> pytypes.ModuleType:
    """What a framework does at import time: `from mcp import stdio_client`."""
    mod = pytypes.ModuleType("framework_under_test")
    exec("from mcp import stdio_client", mod.__dict__)
    sys.modules[mod.__name__] = mod
    return mod


async def test_a_reference_bound_before_instrument_goes_through_mcpping():
    fw = a_module_that_imported_it_by_name()
    try:
        assert fw.stdio_client is _SDK[0]
        records: list[dict] = []
        events: list[mcpping.Event] = []
        mcpping.instrument(keepalive=FAST, record=records.append, on_event=events.append)
        assert mcpping.is_instrumented()
        assert fw.stdio_client is not _SDK[0] and mcp.stdio_client is fw.stdio_client
        assert mcp.client.stdio.stdio_client is fw.stdio_client
        async with fw.stdio_client(PARAMS) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                res = await session.call_tool("add", {"a": 2, "b": 40})
                assert res.content[0].text == "42"
                (peer,) = mcpping.instrumented_peers()
                assert peer.name == "sdk-server" and process_alive(peer.pid)
                async for ev in peer.events("pong"):
                    break  # keepalive runs underneath the framework's session
                pid = peer.pid
        assert mcpping.instrumented_peers() == []
        assert not process_alive(pid)
        ok = [x for x in records if x["event"] == "ping_ok"]
        assert ok and ok[0]["peer"] == "sdk-server" and ok[0]["transport"] == "stdio"
        assert [e.name for e in events][-1] == "closed"
        mcpping.uninstrument()
        assert fw.stdio_client is _SDK[0] and mcp.stdio_client is _SDK[0]
    finally:
        del sys.modules["framework_under_test"]


async def test_uninstrument_restores_the_sdk_transport_and_mcpping_sees_nothing():
    mcpping.instrument(keepalive=FAST)
    mcpping.uninstrument()
    mcpping.uninstrument()  # idempotent
    assert not mcpping.is_instrumented()
    async with mcp.stdio_client(PARAMS) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            assert mcpping.instrumented_peers() == []


async def test_instrument_twice_patches_once_and_takes_the_new_options():
    first: list[dict] = []
    second: list[dict] = []
    mcpping.instrument(keepalive=FAST, record=first.append)
    patched = mcp.stdio_client
    mcpping.instrument(keepalive=FAST, record=second.append)
    assert mcp.stdio_client is patched
    assert patched.__wrapped__ is _SDK[0]
    async with mcp.stdio_client(PARAMS) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            (peer,) = mcpping.instrumented_peers()
            async for ev in peer.events("pong"):
                break
    assert first == [] and any(x["event"] == "ping_ok" for x in second)
    mcpping.uninstrument()
    assert mcp.stdio_client is _SDK[0]


def run_in_threads(fn, n: int = 8) -> None:
    """Runs fn(i) in n threads released together; re-raises the first error."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            barrier.wait()
            fn(i)
        except BaseException as exc:  # pragma: no cover - re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_instrument_and_uninstrument_from_many_threads_leave_one_consistent_state():
    def flip(_: int) -> None:
        for _ in range(50):
            mcpping.instrument(keepalive=FAST)
            mcpping.uninstrument()

    run_in_threads(flip)
    # Every pair ended with an uninstrument: the originals are back everywhere.
    assert not mcpping.is_instrumented()
    assert mcp.stdio_client is _SDK[0] and mcp.client.stdio.stdio_client is _SDK[0]
    # Many first calls at once: one layer of patching, the same function everywhere.
    run_in_threads(lambda _: mcpping.instrument(keepalive=FAST))
    assert mcpping.is_instrumented()
    assert mcp.stdio_client.__wrapped__ is _SDK[0]
    assert mcp.client.stdio.stdio_client is mcp.stdio_client
    mcpping.uninstrument()
    assert mcp.stdio_client is _SDK[0] and mcp.client.stdio.stdio_client is _SDK[0]


def test_bad_options_are_clear_errors_and_patch_nothing():
    with pytest.raises(TypeError, match="keepalive must be a mcpping.KeepAlive"):
        mcpping.instrument(keepalive=10)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="on_event must be callable"):
        mcpping.instrument(on_event="print")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reconnect must be a mcpping.Reconnect"):
        mcpping.instrument(reconnect=True)  # type: ignore[arg-type]
    assert not mcpping.is_instrumented() and mcp.stdio_client is _SDK[0]


async def test_a_server_that_cannot_start_is_still_the_sdks_oserror():
    mcpping.instrument(keepalive=FAST)
    with pytest.raises(OSError):
        async with mcp.stdio_client(StdioServerParameters(command="/nonexistent/server")):
            pass
    assert mcpping.instrumented_peers() == []


async def test_the_sdk_server_pings_are_answered_through_instrumentation():
    mcpping.instrument(keepalive=None)
    async with mcp.stdio_client(PARAMS) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            (peer,) = mcpping.instrumented_peers()
            answered = peer.events("ping_answered")
            res = await session.call_tool("ping_client", {"count": 2, "delay": 0})
            assert not field(res, "is_error")
            for _ in range(2):
                ev = await asyncio.wait_for(answered.__anext__(), 5)
                assert ev.name == "ping_answered"
