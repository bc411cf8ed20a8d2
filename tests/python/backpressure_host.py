"""A host whose asyncio loop is blocked while flood.py floods it.

Run as a fresh process (its peak RSS is the measurement):
  backpressure_host.py COUNT SIZE CAP BLOCK_S
Connects to tests/peers/flood.py with max_pending_bytes=CAP and keepalive
on, asks for COUNT notifications of SIZE bytes, blocks its loop BLOCK_S
seconds, then takes everything. Prints one JSON object: frames received,
whether their sequence numbers were in order, whether the SHA-256 of the
received lines matches the server's, the peak RSS growth in bytes, and
whether the connection was ever convicted (suspect/stale/timeout).
"""

import asyncio
import hashlib
import json
import re
import resource
import sys
import time
from pathlib import Path

import mcpping

PEER = Path(__file__).resolve().parents[1] / "peers" / "flood.py"
SEQ = re.compile(rb'"seq":(\d+),')


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def main(count: int, size: int, cap: int, block_s: float) -> dict:
    sha = hashlib.sha256()
    state = {"frames": 0, "in_order": True, "done": None}
    finished = asyncio.Event()

    def on_message(frame: bytes) -> None:
        if b'"test/seq"' in frame:
            m = SEQ.search(frame)
            if m is None or int(m.group(1)) != state["frames"]:
                state["in_order"] = False
            state["frames"] += 1
            sha.update(frame + b"\n")
        elif b"test/flood_done" in frame:
            state["done"] = json.loads(frame)["params"]
            finished.set()

    convicted = []
    ka = mcpping.KeepAlive(interval=0.2, timeout=0.5, failures=2, min_interval=0.1)
    async with mcpping.connect([sys.executable, str(PEER)], keepalive=ka, on_message=on_message,
                               max_pending_bytes=cap) as peer:
        peer.on("*", lambda ev: ev.name in ("suspect", "stale", "timeout") and convicted.append(ev.name))
        await peer.ping()
        base = peak_rss()
        await peer.request("test/flood", {"count": count, "size": size})
        time.sleep(block_s)  # the host's loop is blocked: nothing is drained
        await asyncio.wait_for(finished.wait(), 120)
        growth = peak_rss() - base
    done = state["done"]
    return {"frames": state["frames"], "in_order": state["in_order"],
            "hash_ok": done["sha256"] == sha.hexdigest() and done["count"] == state["frames"],
            "rss_growth": growth, "convicted": convicted}


if __name__ == "__main__":
    count, size, cap = (int(a) for a in sys.argv[1:4])
    print(json.dumps(asyncio.run(main(count, size, cap, float(sys.argv[4])))))
