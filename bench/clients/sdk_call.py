"""Block-protocol worker (bench/method.py): tools/call through the official
Python SDK's ClientSession, over mcpping's transport or the SDK's own.

    python3 sdk_call.py mcpping|sdk|wrap RESPONDER

mcpping: mcpping.sdk.stdio_client (its defaults); sdk: mcp.client.stdio's
stdio_client; wrap: the SDK's stdio_client launching `mcpping wrap --
RESPONDER` (the proxy for clients that cannot change, with its defaults)
instead of the responder. Only the transport differs. A command {"n": N, "bytes": B}
runs N sequential call_tool("blob", {"bytes": B}) calls, each checked to
return B bytes of text; one latency per call.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker import serve, timed  # noqa: E402


async def main(mode, responder):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters

    if mode == "sdk":
        from mcp.client.stdio import stdio_client
    else:
        from mcpping.sdk import stdio_client
    params = StdioServerParameters(command=responder, args=[])
    if mode == "wrap":
        from mcp.client.stdio import stdio_client
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "mcpping", "wrap", "--", responder])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        await session.list_tools()

        async def block(cmd):
            size = cmd["bytes"]

            async def call():
                res = await session.call_tool("blob", {"bytes": size})
                if len(res.content[0].text) != size:
                    raise SystemExit(f"got {len(res.content[0].text)} bytes, wanted {size}")

            return (await timed(call, cmd["n"]))[0]

        await serve(block)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
