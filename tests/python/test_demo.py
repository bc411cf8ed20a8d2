"""The bundled demo server is a real MCP stdio server."""

from __future__ import annotations

import mcpping
from conftest import DEMO


async def test_demo_server_lists_and_calls_tools_and_rejects_unknown_methods():
    async with mcpping.connect(DEMO, keepalive=None) as p:
        assert p.server_info == {"name": "mcpping-demo", "version": "0.1.0"}
        tools = (await p.request("tools/list"))["result"]["tools"]
        assert [t["name"] for t in tools] == ["echo", "add"]
        r = await p.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
        assert r["result"]["content"][0]["text"] == "42"
        r = await p.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert r["result"] == {"content": [{"type": "text", "text": "hi"}], "isError": False}
        r = await p.request("tools/call", {"name": "nope", "arguments": {}})
        assert r["result"]["isError"] is True
        r = await p.request("resources/list")
        assert r["error"]["code"] == -32601
        p.notify("notifications/whatever")
        assert await p.ping() > 0


async def test_demo_server_works_with_the_official_sdk_client():
    from mcp import ClientSession, StdioServerParameters
    from mcpping.sdk import stdio_client

    params = StdioServerParameters(command=DEMO[0], args=DEMO[1:])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("add", {"a": 1, "b": 2})
            assert res.content[0].text == "3"
