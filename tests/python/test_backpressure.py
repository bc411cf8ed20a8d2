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
