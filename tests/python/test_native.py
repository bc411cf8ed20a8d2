"""The native module: the Engine class, fork safety, shutdown that never hangs."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mcpping
from mcpping import _native
from mcpping.keepalive import settings
from conftest import DEMO, PEERS, PY, process_alive


def test_engine_answers_a_ping_with_the_id_echoed_byte_for_byte():
    sent: list[tuple[int, bytes]] = []
    eng = _native.Engine(settings(None, role="server"), lambda k, f: sent.append((k, f)), now=1)
    big = b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}'
    assert eng.recv(big, 10) == 1  # consumed
    kind, frame = sent[0]
    assert b"123456789012345678901234567890" in frame
    assert json.loads(frame)["result"] == {}
    assert eng.recv(b'{"jsonrpc":"2.0","id":"1","method":"tools/list"}', 11) == 0


def test_engine_times_a_manual_ping_and_times_it_out():
    sent: list[bytes] = []
    events: list[dict] = []
    eng = _native.Engine(settings(None), lambda k, f: sent.append(f), events.append, None, None, 0)
    seq = eng.ping(100, 1_000)
    ping_id = json.loads(sent[0])["id"]
    pong = json.dumps({"jsonrpc": "2.0", "id": ping_id, "result": {}}).encode()
    assert eng.recv(pong, 1_500) == 1
    pongs = [e for e in events if e["type"] == "pong"]
    assert pongs[0]["ping_seq"] == seq and pongs[0]["rtt_us"] == 500
    seq2 = eng.ping(100, 2_000)
    assert eng.next_deadline() == 2_000 + 100_000
    eng.on_timer(2_000 + 100_000)
    assert events[-1]["type"] == "timeout" and events[-1]["ping_seq"] == seq2


def test_engine_callback_exceptions_propagate_and_reentry_is_refused():
    def boom(kind: int, frame: bytes) -> None:
        raise KeyError("send failed")

    eng = _native.Engine(settings(None), boom)
    with pytest.raises(KeyError):
        eng.ping(100, 0)

    holder: list = []

    def reenter(kind: int, frame: bytes) -> None:
        holder[0].ping(100, 0)

    eng2 = _native.Engine(settings(None), reenter)
    holder.append(eng2)
    with pytest.raises(RuntimeError):
        eng2.ping(100, 0)


def test_engine_is_collected_with_a_reference_cycle():
    class Box:
        pass

    box = Box()
    box.engine = _native.Engine(settings(None), lambda k, f: box)  # cycle through the callback
    del box
    assert gc.collect() >= 1


def test_settings_are_validated():
    # Below the floor, with clamp off: the engine's sentence, as a ValueError.
    s = settings(mcpping.KeepAlive(interval=0.05, min_interval=0.01))
    s["min_interval_ms"] = 100
    with pytest.raises(ValueError, match="^settings: interval_ms must be 0 \\(off\\) or between min_interval_ms and"):
        _native.Engine(s, lambda k, f: None)


def _run(code: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


def test_fork_child_gets_its_own_runtime():
    r = _run(f"""
        import asyncio, os, sys, mcpping
        DEMO = {DEMO!r}
        async def ping_once():
            async with mcpping.connect(DEMO, keepalive=None) as p:
                return await p.ping(timeout=5)
        async def parent():
            p = await mcpping.connect(DEMO, keepalive=None)
            await p.ping()
            pid = os.fork()
            if pid == 0:
                # A fresh loop in the child; the parent's server is not ours.
                try:
                    asyncio.set_event_loop(None)
                    rtt = asyncio.new_event_loop().run_until_complete(ping_once())
                    os._exit(0 if rtt > 0 else 3)
                except BaseException as e:
                    print("child", repr(e), file=sys.stderr, flush=True)
                    os._exit(4)
            _, status = os.waitpid(pid, 0)
            # The parent's connection survived the child.
            await p.ping()
            await p.close()
            print(os.waitstatus_to_exitcode(status))
        asyncio.run(parent())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0", r.stderr


def test_exit_without_closing_kills_the_server_and_does_not_hang():
    echo = [PY, str(PEERS / "echo.py")]
    r = _run(f"""
        import asyncio, mcpping
        async def main():
            p = await mcpping.connect({echo!r}, keepalive=mcpping.KeepAlive(interval=1))
            child = (await p.request("test/spawn_child", timeout=5))["result"]["pid"]
            print(child, flush=True)
            # No close: interpreter exit must kill and reap the server's group.
        asyncio.run(main())
    """, timeout=20)
    assert r.returncode == 0, r.stderr
    assert not process_alive(int(r.stdout.split()[0]))


def test_closed_loop_does_not_crash_delivery():
    r = _run(f"""
        import asyncio, mcpping, gc
        loop = asyncio.new_event_loop()
        async def leak():
            p = await mcpping.connect({DEMO!r}, keepalive=mcpping.KeepAlive(interval=0.05, min_interval=0.01))
            await p.ping()
            return p
        p = loop.run_until_complete(leak())
        loop.close()  # the peer's loop is gone while its server keeps talking
        async def other():
            async with mcpping.connect({DEMO!r}, keepalive=None) as q:
                for _ in range(20):
                    await q.ping()
        asyncio.run(other())
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
