"""Block-protocol worker (bench/method.py): pings over Streamable HTTP from Python.

    python3 http_ping.py mcpping|sdk|raw URL

mcpping: mcpping.http.connect(URL, keepalive=None), peer.ping(); sdk: the
official SDK's ClientSession over mcp.client.streamable_http's
streamable_http_client (streamablehttp_client before 2.x), send_ping();
raw (the floor): initialize and notifications/initialized by hand, then
each ping a POST on one keep-alive http.client.HTTPConnection with the
session's headers, its answer read whole and checked for the ping's id,
nothing parsed. A command {"n": N} runs N sequential pings; one latency per
ping, the wall time around it on the asyncio loop (raw: around the blocking
call; it has no loop to wake).
"""
import asyncio
import json
import os
import sys
import time
from http.client import HTTPConnection
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker import serve, timed  # noqa: E402

VERSION = "2025-11-25"  # what the raw client asks for; the server's answer is used


async def run_mcpping(url):
    import mcpping.http

    async with mcpping.http.connect(url, keepalive=None) as peer:
        async def block(cmd):
            return (await timed(peer.ping, cmd["n"]))[0]

        await serve(block)


async def run_sdk(url):
    from mcp import ClientSession
    import mcp.client.streamable_http as sh

    client = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client
    async with client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()

        async def block(cmd):
            return (await timed(session.send_ping, cmd["n"]))[0]

        await serve(block)


class Raw:
    """The floor: the session's POSTs by hand on one keep-alive connection."""

    def __init__(self, url):
        u = urlsplit(url)
        self.path = u.path or "/"
        self.conn = HTTPConnection(u.hostname, u.port)
        self.headers = {"content-type": "application/json",
                        "accept": "application/json, text/event-stream"}
        self.id = 0

    def post(self, body):
        self.conn.request("POST", self.path, body, self.headers)
        r = self.conn.getresponse()
        return r, r.read()

    def initialize(self):
        self.id += 1
        r, body = self.post(json.dumps({
            "jsonrpc": "2.0", "id": self.id, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {},
                       "clientInfo": {"name": "bench-raw", "version": "0.1.0"}}}))
        if r.status != 200:
            raise SystemExit(f"initialize: HTTP {r.status}: {body[:200]!r}")
        text = body.decode()
        # JSON or one SSE event ("data: {...}").
        line = next(x for x in text.splitlines() if x.lstrip().startswith(("{", "data:")))
        result = json.loads(line.split("data:", 1)[-1])["result"]
        self.headers["mcp-session-id"] = r.getheader("mcp-session-id")
        self.headers["mcp-protocol-version"] = result["protocolVersion"]
        r, body = self.post('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        if r.status != 202:
            raise SystemExit(f"notifications/initialized: HTTP {r.status}: {body[:200]!r}")

    def ping(self):
        self.id += 1
        want = b'"id":%d' % self.id
        r, body = self.post(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % self.id)
        if r.status != 200 or want not in body:
            raise SystemExit(f"ping: HTTP {r.status}: {body[:200]!r}")


async def run_raw(url):
    raw = Raw(url)
    raw.initialize()

    async def block(cmd):
        clock = time.perf_counter_ns
        samples = []
        for _ in range(cmd["n"]):
            a = clock()
            raw.ping()
            samples.append((clock() - a) / 1e3)
        return {"ops": cmd["n"], "samples_us": samples}

    try:
        await serve(block)
    finally:
        headers = {k: v for k, v in raw.headers.items() if k.startswith("mcp-")}
        raw.conn.request("DELETE", raw.path, headers=headers)
        raw.conn.getresponse().read()
        raw.conn.close()


if __name__ == "__main__":
    mode, url = sys.argv[1], sys.argv[2]
    asyncio.run({"mcpping": run_mcpping, "sdk": run_sdk, "raw": run_raw}[mode](url))
