"""Row 6, Python: a large tool result through mcpping's transport vs the SDK's.

    python3 forwarding.py mcpping|sdk RESPONDER K SIZE [SIZE...]

Both use the official SDK's ClientSession; only the transport differs:
mcpping.sdk.stdio_client (defaults) or mcp.client.stdio.stdio_client.
For each SIZE (bytes of text content) one warm-up call, then K timed
call_tool("blob") calls. Prints {"SIZE": [seconds, ...], ...}.
"""
import asyncio
import json
import sys
import time


async def main():
    mode, responder, k, sizes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters

    if mode == "sdk":
        from mcp.client.stdio import stdio_client
    else:
        from mcpping.sdk import stdio_client
    params = StdioServerParameters(command=responder, args=[])
    out = {}
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        await session.list_tools()
        for size in sizes:
            n = int(size)
            times = []
            for i in range(k + 1):
                t = time.perf_counter()
                res = await session.call_tool("blob", {"bytes": n})
                dt = time.perf_counter() - t
                text = res.content[0].text
                if len(text) != n:
                    raise SystemExit(f"got {len(text)} bytes, wanted {n}")
                if i:
                    times.append(dt)
            out[size] = times
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
