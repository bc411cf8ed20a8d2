"""One Streamable HTTP client session in a process of its own, for the reaper.

Usage: http_session_client.py URL (mcpping | sdk)

``mcpping``: mcpping.http.connect (stdlib HTTP, the engine answers the
server's pings on the GET listening stream). ``sdk``: the official SDK's
streamable_http_client with a ClientSession (which answers pings itself).
Prints the session id on stdout once the session is up (and its GET
stream open), then holds it until stdin closes, then ends it with DELETE.
SIGKILL it to leave the session behind without a DELETE.
"""

from __future__ import annotations

import asyncio
import sys


async def wait_stdin_closed() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def with_mcpping(url: str) -> None:
    import mcpping

    async with mcpping.http.connect(url, keepalive=None, init_timeout=60) as peer:
        assert peer.listening, "the server offered no listening stream"
        print(peer.session_id, flush=True)
        await wait_stdin_closed()


async def with_sdk(url: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    # The SDK exposes no session id: the server side tells them apart.
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.send_ping()  # after this round trip the GET stream is being opened
            print("sdk", flush=True)
            await wait_stdin_closed()


if __name__ == "__main__":
    url, kind = sys.argv[1], sys.argv[2]
    asyncio.run(with_mcpping(url) if kind == "mcpping" else with_sdk(url))
