"""One host program, run under each kind of host loop (tests/python/test_hosts.py).

    python scenario.py asyncio|uvloop|thread|two-loops

connects to tests/peers/echo.py with fast keepalive, pings, sends a request,
sees keepalive events, closes, and prints one JSON line per connection:
{"pid", "rtt", "echo", "events", "exit_status", "term_signal", "mode", "thread"}
(mode: mcpping.runtime_mode() while connected).
The interpreter must then exit on its own (the test holds a timeout).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path

import mcpping

ECHO = [sys.executable, str(Path(__file__).resolve().parents[2] / "peers" / "echo.py")]
KEEPALIVE = mcpping.KeepAlive(interval=0.05, timeout=2, min_interval=0.01, jitter_pct=0)


async def scenario() -> dict:
    names: list[str] = []
    async with mcpping.connect(ECHO, keepalive=KEEPALIVE,
                               on_event=lambda ev: names.append(ev.name)) as p:
        pid = p.pid
        mode = mcpping.runtime_mode()
        pongs = p.events("pong")
        rtt = await p.ping(timeout=5)
        answer = await p.request("echo", {"seq": 7}, timeout=5)
        # A keepalive pong (not our manual one) proves the timer runs here too.
        while (await asyncio.wait_for(pongs.__anext__(), 5)).manual:
            pass
        assert p.healthy and p.state == "alive"
    info = p.close_info
    assert info is not None
    return {"pid": pid, "rtt": rtt, "echo": answer.get("result"), "events": sorted(set(names)),
            "exit_status": info.exit_status, "term_signal": info.term_signal, "mode": mode,
            "thread": threading.current_thread() is threading.main_thread()}


def in_thread(run) -> None:
    out: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as e:  # reported by the main thread
            out.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join(30)
    if t.is_alive():
        raise SystemExit("the loop thread did not finish")
    if out:
        raise out[0]


_emit_lock = threading.Lock()


def emit(result: dict) -> None:
    # One whole line at a time: two loop threads finish together.
    with _emit_lock:
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


def main(kind: str) -> None:
    if kind == "asyncio":
        emit(asyncio.run(scenario()))
    elif kind == "uvloop":
        import uvloop
        emit(uvloop.run(scenario()))
    elif kind == "thread":
        in_thread(lambda: emit(asyncio.run(scenario())))
    elif kind == "two-loops":
        # Both loops watch the same wake pipe: each connection's items must
        # reach its own loop, whichever loop drains them.
        worker = threading.Thread(target=lambda: emit(asyncio.run(scenario())))
        worker.start()
        emit(asyncio.run(scenario()))
        worker.join(30)
        if worker.is_alive():
            raise SystemExit("the loop thread did not finish")
    else:
        raise SystemExit(f"unknown host {kind!r}")


if __name__ == "__main__":
    main(sys.argv[1])
