"""A host that reads a notification flood slowly or not at all (issue 23).

Run as a fresh process (its peak RSS is the measurement):
  flood_unread.py MODE LOOP COUNT SIZE CAP
MODE "requests": a Peer used only through request() while tests/peers/flood.py
sends COUNT notifications of SIZE bytes; nobody iterates messages(). It asks
for the flood's status until the flood is written (each a round trip through
the flood), then iterates messages() to see what was kept.
MODE "messages": the same flood read through messages(), slowly (one message
per loop turn, the loop blocked a little every 256 messages): everything, in
order.
MODE "sdk": the official ClientSession over mcpping.sdk.stdio_client calls the
flood tool; the session's logging callback takes every notification, slowly
(the loop is blocked a little every 256 messages).
LOOP is "asyncio" or "uvloop". Prints one JSON object with the peak RSS growth
in bytes and what arrived.
"""

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

import mcpping

PEER = Path(__file__).resolve().parents[2] / "peers" / "flood.py"


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def requests_only(count: int, size: int, cap: int) -> dict:
    async with mcpping.connect([sys.executable, str(PEER)], max_pending_bytes=cap) as peer:
        await peer.ping()
        base = peak_rss()
        await peer.request("test/flood", {"count": count, "size": size})
        answered = 0
        while True:
            resp = await peer.request("test/flood_status", timeout=60)
            answered += 1
            if resp["result"]["done"]:
                break
        growth = peak_rss() - base
        # The status answer came after the last flood line: every message is
        # in the queue or dropped. An iterator now takes what was kept.
        kept = []
        async for msg in peer.messages():
            kept.append(msg)
            if msg.get("method") == "test/flood_done":
                break
        return {"rss_growth": growth, "answered": answered, "dropped": getattr(peer, "dropped_messages", None),
                "kept": len(kept), "last": kept[-1] if kept else None,
                "kept_seqs_consecutive": all(
                    b["params"]["seq"] == a["params"]["seq"] + 1
                    for a, b in zip(kept, kept[1:-1])),
                "state": peer.state}


async def messages(count: int, size: int, cap: int) -> dict:
    seqs: list[int] = []
    done = None
    async with mcpping.connect([sys.executable, str(PEER)], max_pending_bytes=cap) as peer:
        stream = peer.messages()  # asked for from here on
        await peer.ping()
        base = peak_rss()
        await peer.request("test/flood", {"count": count, "size": size})
        async for msg in stream:
            if msg["method"] == "test/flood_done":
                done = msg["params"]["count"]
                break
            seqs.append(msg["params"]["seq"])
            await asyncio.sleep(0)  # a slow consumer: one message per loop turn,
            if len(seqs) % 256 == 0:
                time.sleep(0.005)  # and the loop busy now and then
        growth = peak_rss() - base
        await peer.request("test/flood_status")  # still answered
        return {"rss_growth": growth, "received": len(seqs), "in_order": seqs == list(range(count)),
                "done": done, "dropped": getattr(peer, "dropped_messages", 0)}


async def sdk(count: int, size: int, cap: int) -> dict:
    from mcp import ClientSession, StdioServerParameters

    from mcpping.sdk import stdio_client

    seqs: list[int] = []
    done: dict = {}
    finished = asyncio.Event()

    async def on_log(params) -> None:
        data = params.data
        if "seq" in data:
            seqs.append(data["seq"])
            if len(seqs) % 256 == 0:
                time.sleep(0.005)  # a slow consumer: the loop is busy meanwhile
        else:
            done.update(data)
            finished.set()

    server = StdioServerParameters(command=sys.executable, args=[str(PEER)])
    async with stdio_client(server, max_pending_bytes=cap) as (r, w):
        async with ClientSession(r, w, logging_callback=on_log) as session:
            await session.initialize()
            base = peak_rss()
            await session.call_tool("flood", {"count": count, "size": size})
            await asyncio.wait_for(finished.wait(), 120)
            growth = peak_rss() - base
            # Requests are still answered after the flood.
            tools = await session.list_tools()
    return {"rss_growth": growth, "received": len(seqs), "in_order": seqs == list(range(count)),
            "done": done.get("done"), "tools": len(tools.tools)}


def main() -> None:
    mode, loop = sys.argv[1], sys.argv[2]
    count, size, cap = (int(a) for a in sys.argv[3:6])
    run = {"requests": requests_only, "messages": messages, "sdk": sdk}[mode]
    if loop == "uvloop":
        import uvloop

        result = uvloop.run(run(count, size, cap))
    else:
        result = asyncio.run(run(count, size, cap))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
