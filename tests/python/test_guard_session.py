"""guard(session_id=): the session id is in every record from the first one,
and a bad one is named (issue 10 part 2: session_id without set_session_id)."""

from __future__ import annotations

import json
import math

import anyio
import pytest

import mcpping


async def test_session_id_is_in_the_records_from_the_first():
    records: list[dict] = []
    to_guard, guard_read = anyio.create_memory_object_stream[dict](math.inf)
    guard_write, from_guard = anyio.create_memory_object_stream[dict](math.inf)
    async with mcpping.guard(guard_read, guard_write, codec="json", keepalive=None,
                             transport="streamable-http", session_id="sess-1",
                             record=records.append) as (_, _w, g):
        async def answer() -> None:
            ping = await from_guard.receive()  # the guard's ping, on the transport side
            assert ping["method"] == "ping"
            await to_guard.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            assert await g.ping(2) > 0
    assert [r["event"] for r in records][:1] == ["ping_ok"]
    assert all(r["session_id"] == "sess-1" for r in records)
    assert records[0]["transport"] == "streamable-http"


@pytest.mark.parametrize("bad", ["", 7])
async def test_a_bad_session_id_is_named(bad):
    a, b = anyio.create_memory_object_stream[dict](1)
    with pytest.raises(TypeError, match="session_id must be a non-empty str"):
        async with mcpping.guard(b, a, codec="json", keepalive=None, session_id=bad):
            pass
    a.close()
    b.close()
