"""The frozen-peer row, Python: how long until a frozen (SIGSTOPped) server is noticed.

    python3 frozen.py api|sdk RESPONDER PIDFILE LIMIT_S

After the handshake the client stops the server with SIGSTOP and waits up
to LIMIT_S for anything to surface. api: mcpping.connect with keepalive
interval 1 s, timeout 1 s, failures 2, measured to the "stale" event.
sdk: the official SDK with its defaults (ClientSession, no read timeout),
with one send_ping() in flight from the freeze on; noticed when the ping
fails or the session's streams end. The server is always SIGCONTed and
SIGKILLed at the end. Prints one JSON object.
"""
import asyncio
import json
import os
import signal
import sys
import time


def read_pid(path):
    for _ in range(200):
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            time.sleep(0.01)
    raise RuntimeError("no pidfile")


def finish(pid):
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


async def run_api(responder, pidfile, limit):
    import mcpping

    ka = mcpping.KeepAlive(interval=1.0, timeout=1.0, failures=2)
    out = {}
    async with mcpping.connect([responder, "--pidfile", pidfile], keepalive=ka) as peer:
        pid = read_pid(pidfile)
        loop = asyncio.get_running_loop()
        stale = loop.create_future()
        marks = {}
        peer.on("suspect", lambda ev: marks.setdefault("suspect", time.monotonic()))
        peer.on("stale", lambda ev: stale.done() or stale.set_result(time.monotonic()))
        try:
            os.kill(pid, signal.SIGSTOP)
            t0 = time.monotonic()
            try:
                t = await asyncio.wait_for(stale, limit)
                out = {"noticed_s": t - t0, "how": "stale event"}
                if "suspect" in marks:
                    out["suspect_s"] = marks["suspect"] - t0
                info = await asyncio.wait_for(peer.wait_closed(), 10)
                out["closed_s"] = time.monotonic() - t0
                out["closed_reason"] = info.reason
            except asyncio.TimeoutError:
                out = {"noticed_s": None, "how": f"nothing within {limit:g} s"}
        finally:
            finish(pid)
    return out


async def run_sdk(responder, pidfile, limit):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=responder, args=["--pidfile", pidfile])
    out = {}
    pid = None
    try:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            pid = read_pid(pidfile)
            os.kill(pid, signal.SIGSTOP)
            t0 = time.monotonic()
            ping = asyncio.ensure_future(session.send_ping())
            done, _ = await asyncio.wait({ping}, timeout=limit)
            if done:
                exc = ping.exception()
                out = {"noticed_s": time.monotonic() - t0,
                       "how": f"in-flight ping raised {type(exc).__name__}: {exc}" if exc
                       else "ping answered?"}
            else:
                ping.cancel()
                out = {"noticed_s": None, "how": f"nothing within {limit:g} s"}
            finish(pid)
    except BaseException as exc:  # the session ending is the SDK noticing
        if not out:
            out = {"noticed_s": None, "how": f"session ended: {exc!r}"}
    finally:
        if pid is not None:
            finish(pid)
    return out


def main():
    mode, responder, pidfile, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    fn = {"api": run_api, "sdk": run_sdk}[mode]
    print(json.dumps(asyncio.run(fn(responder, pidfile, limit))))


if __name__ == "__main__":
    main()
