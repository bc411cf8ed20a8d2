"""Host mode (issue 21): the asyncio loop's own thread runs the native runtime.

By default the one asyncio loop (plain or uvloop) with connections runs the
runtime; MCPPING_HOST_MODE=0 keeps it on the native thread. While the loop
is blocked, the native thread takes over and still answers every ping of
the server. Two loops in two threads share the runtime through the native
thread (thread mode), and lose nothing.
"""

from __future__ import annotations

import asyncio
import os
import select
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import mcpping
from mcpping import _runtime
from conftest import HERE, PY, peer

ECHO = peer("echo")
LOOPS = ["asyncio", "uvloop"]


def run(host: str, main: Callable[[], Awaitable[Any]]) -> Any:
    """Runs main() on a fresh loop of the given kind in this thread."""
    if host == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="uvloop is in requirements-dev.txt")
        return uvloop.run(main())
    return asyncio.run(main())


async def exchange(p: mcpping.Peer, n: int, tag: str) -> None:
    """n requests and n // 4 pings at once: every answer, each its own."""
    answers, *_ = await asyncio.gather(
        asyncio.gather(*(p.request("echo", {"tag": tag, "seq": i}, timeout=20)
                         for i in range(n))),
        *(p.ping(timeout=20) for _ in range(n // 4)))
    assert [a["result"] for a in answers] == [{"tag": tag, "seq": i} for i in range(n)]


@pytest.mark.parametrize("host", LOOPS)
def test_the_one_loop_with_connections_hosts_the_runtime(host, monkeypatch):
    monkeypatch.delenv("MCPPING_HOST_MODE", raising=False)

    async def main() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            mode, why = mcpping.runtime_mode()
            assert (mode, why) == ("host", "host mode: the host's event loop runs it")
            before = _runtime.host_stats()
            await exchange(p, 40, host)
            after = _runtime.host_stats()
            # The commands ran inline on this thread, not through the native one.
            assert after["inline_commands"] >= before["inline_commands"] + 50
            assert after["host_turns"] > before["host_turns"]
            # The answers were read by this thread from the connection's
            # own fd (add_reader), not in a turn of the runtime's loop.
            reads = after["host_reads"] - before["host_reads"]
            for _ in range(10):
                await p.ping(timeout=20)
            assert _runtime.host_stats()["host_reads"] >= after["host_reads"] + 10
            assert reads >= 1
        # No connection left: nothing to host.
        assert mcpping.runtime_mode()[0] == "thread"

    run(host, main)


def test_mcpping_host_mode_0_keeps_the_runtime_on_its_thread_and_says_why(monkeypatch):
    monkeypatch.setenv("MCPPING_HOST_MODE", "0")

    async def main() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            assert mcpping.runtime_mode() == ("thread", "thread mode: MCPPING_HOST_MODE=0 is set")
            before = _runtime.host_stats()["inline_commands"]
            await exchange(p, 40, "thread")
            assert _runtime.host_stats()["inline_commands"] == before

    asyncio.run(main())


def read_report(fd: int, count: int, bound: float) -> list[str]:
    """Blocks this thread (and so its event loop) until the pinger reports
    all its pings answered, or `bound` seconds pass; returns the lines."""
    buf, deadline = b"", time.monotonic() + bound
    while b"done\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        buf += os.read(fd, 4096)
    return buf.decode().splitlines()


@pytest.mark.parametrize("host", LOOPS)
def test_a_blocked_loop_still_answers_every_server_ping_through_the_watchdog(
        host, tmp_path, monkeypatch):
    monkeypatch.delenv("MCPPING_HOST_MODE", raising=False)
    count = 20
    report = tmp_path / "report"
    os.mkfifo(report)
    rfd = os.open(report, os.O_RDONLY | os.O_NONBLOCK)
    # Held open, so the FIFO never reads as ended before the server opens it.
    wfd = os.open(report, os.O_WRONLY | os.O_NONBLOCK)
    answered: list[mcpping.Event] = []
    try:
        async def main() -> tuple[list[str], int, int]:
            server = [PY, str(HERE / "servers" / "pinger.py"), str(report), str(count), "0.05"]
            async with mcpping.connect(server, keepalive=None,
                                       on_event=lambda ev: ev.name == "ping_answered"
                                       and answered.append(ev)) as p:
                assert mcpping.runtime_mode()[0] == "host"
                before = _runtime.host_stats()["takeovers"]
                p.notify("test/start_pinging")
                # The loop is blocked here: only the native thread can answer.
                lines = read_report(rfd, count, bound=30)
                takeovers = _runtime.host_stats()["takeovers"] - before
                seen = len(answered)
                # Once the loop turns again, the queued events reach it too.
                while len(answered) < count:
                    await asyncio.wait_for(p.events("ping_answered").__anext__(), 10)
                return lines, takeovers, seen

        lines, takeovers, seen_while_blocked = run(host, main)
    finally:
        os.close(rfd)
        os.close(wfd)
    pongs = [line for line in lines if line.startswith("pong ")]
    assert len(pongs) == count and lines[-1] == "done", lines
    assert sorted(line.split()[1] for line in pongs) == sorted(f"p{i}" for i in range(1, count + 1))
    assert takeovers > 0
    assert seen_while_blocked == 0  # nothing ran on the blocked loop meanwhile
    assert len(answered) == count


def test_two_loops_in_two_threads_share_the_runtime_in_thread_mode_and_lose_nothing(monkeypatch):
    monkeypatch.delenv("MCPPING_HOST_MODE", raising=False)
    b_connected, a_checked = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def b_thread() -> None:
        async def b() -> None:
            async with mcpping.connect(ECHO, keepalive=None) as p:
                b_connected.set()
                assert await asyncio.to_thread(a_checked.wait, 30)
                await exchange(p, 200, "b")
        try:
            asyncio.run(b())
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            b_connected.set()

    async def a() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            assert mcpping.runtime_mode()[0] == "host"
            t = threading.Thread(target=b_thread)
            t.start()
            try:
                assert await asyncio.to_thread(b_connected.wait, 30)
                mode, why = mcpping.runtime_mode()
                assert mode == "thread" and "2 asyncio event loops have connections" in why, why
                a_checked.set()
                await exchange(p, 200, "a")
            finally:
                a_checked.set()
                await asyncio.to_thread(t.join, 30)
            assert not t.is_alive() and not errors, errors
            # Back to one loop: it hosts the runtime again, and it still works.
            assert mcpping.runtime_mode()[0] == "host"
            await exchange(p, 40, "a again")

    asyncio.run(a())
    assert mcpping.runtime_mode() == ("thread", "thread mode: no asyncio event loop has a connection")


def test_a_loop_closed_with_a_connection_open_leaves_the_next_loop_hosting(monkeypatch):
    monkeypatch.delenv("MCPPING_HOST_MODE", raising=False)
    first = asyncio.new_event_loop()
    try:
        leaked = first.run_until_complete(mcpping.connect(ECHO, keepalive=None))
        assert mcpping.runtime_mode()[0] == "host"
    finally:
        first.close()  # the connection is still open: its loop is gone

    async def main() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            assert mcpping.runtime_mode()[0] == "host"
            await exchange(p, 40, "next")

    try:
        asyncio.run(main())
    finally:
        _native_close(leaked)


def _native_close(p: mcpping.Peer) -> None:
    """Closes a peer whose loop is gone (its server is killed and reaped)."""
    from mcpping import _native
    _native.close(p._id)


def test_when_the_first_loop_leaves_the_other_thread_s_loop_hosts_the_runtime(monkeypatch):
    monkeypatch.delenv("MCPPING_HOST_MODE", raising=False)
    b_connected, a_left = threading.Event(), threading.Event()
    seen: list[tuple[str, str]] = []

    async def b() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            b_connected.set()
            assert await asyncio.to_thread(a_left.wait, 30)
            # A's detach asked this loop to host before it set a_left.
            seen.append(mcpping.runtime_mode())
            await exchange(p, 100, "b alone")

    t = threading.Thread(target=lambda: asyncio.run(b()))

    async def a() -> None:
        async with mcpping.connect(ECHO, keepalive=None) as p:
            t.start()
            assert await asyncio.to_thread(b_connected.wait, 30)
            assert mcpping.runtime_mode()[0] == "thread"
            await exchange(p, 40, "a")

    try:
        asyncio.run(a())
    finally:
        a_left.set()
        t.join(30)
    assert not t.is_alive()
    assert seen and seen[0][0] == "host", seen
