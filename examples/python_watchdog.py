"""A watchdog: keep an MCP stdio server under short keepalive, log governance.

    python examples/python_watchdog.py --log watch.jsonl --freeze-after 1
    python examples/python_watchdog.py --log watch.jsonl --duration 5 -- npx -y SERVER

Without a command it watches the bundled demo server. --freeze-after SEC
SIGSTOPs the server after SEC seconds: the process still exists, its pipes
stay open, but nothing answers, which is exactly the failure a plain
"is the pid alive?" check misses. Keepalive then walks alive -> suspect ->
stale, and mcpping kills and reaps the server's whole process group.

Exit status: 0 when the server went stale (and was killed), or when
--duration ran out with the server still alive; 1 when the server exited
on its own; 2 on bad usage or a failed start.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

import mcpping


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log", required=True, help="append governance records (JSONL) here")
    p.add_argument("--interval", type=float, default=0.2, help="keepalive interval, s")
    p.add_argument("--timeout", type=float, default=0.3, help="per-ping timeout, s")
    p.add_argument("--failures", type=int, default=3, help="failed pings that mean stale")
    p.add_argument("--freeze-after", type=float, metavar="SEC",
                   help="demo: SIGSTOP the server after SEC seconds")
    p.add_argument("--duration", type=float, metavar="SEC",
                   help="stop watching after SEC seconds (default: until stale or exit)")
    p.add_argument("command", nargs="*", help="server command (after --)")
    return p.parse_args()


async def main() -> int:
    args = parse_args()
    command = args.command or [sys.executable, "-m", "mcpping.demo"]
    # min_interval lowers the 1 s floor; sub-second keepalive is for demos
    # and tests, production intervals are seconds to minutes.
    keepalive = mcpping.KeepAlive(interval=args.interval, timeout=args.timeout,
                                  failures=args.failures, min_interval=0.05)
    saw_stale = False

    def on_state(ev: mcpping.Event) -> None:
        nonlocal saw_stale
        saw_stale = saw_stale or ev.name == "stale"
        print(f"{ev.name}: state={ev.state} failures={ev.failure_count}", flush=True)

    try:
        # On stale, mcpping sends the group SIGCONT + SIGTERM (a stopped
        # server must be woken to die), then SIGKILL after kill_grace.
        peer = await mcpping.connect(command, keepalive=keepalive, record=args.log,
                                     kill_grace=0.5)
    except (mcpping.SpawnError, mcpping.HandshakeError) as exc:
        print(f"watchdog: {exc}", file=sys.stderr)
        return 2
    pid = peer.pid
    print(f"watching {peer.name} pid={pid}", flush=True)
    for name in ("suspect", "stale", "recovered"):
        peer.on(name, on_state)

    if args.freeze_after is not None:
        def freeze() -> None:
            print(f"freezing pid={pid} (SIGSTOP)", flush=True)
            os.kill(pid, signal.SIGSTOP)
        asyncio.get_running_loop().call_later(args.freeze_after, freeze)

    try:
        # on_stale="close" (the default) closes the connection by itself,
        # so waiting for the close is waiting for the verdict.
        info = await asyncio.wait_for(peer.wait_closed(), args.duration)
    except asyncio.TimeoutError:
        print(f"still {peer.state} after {args.duration:g} s", flush=True)
        await peer.close()
        return 0
    print(f"closed: {info.reason} (signal {info.term_signal})", flush=True)
    try:
        os.killpg(pid, 0)  # the server led its own process group
        print(f"process group {pid} still exists", flush=True)
    except ProcessLookupError:
        print(f"process group {pid} is gone", flush=True)
    return 0 if saw_stale else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
