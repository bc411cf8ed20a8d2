"""A small but real MCP stdio server, stdlib only: ``python -m mcpping.demo``.

It answers initialize (serverInfo ``mcpping-demo``), ping, tools/list and
tools/call for two tools, ``echo`` and ``add``; ignores notifications; and
answers -32601 for any other method. ``mcpping`` with no target pings it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

NAME = "mcpping-demo"
VERSION = "0.1.0"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

TOOLS = [
    {"name": "echo", "description": "Returns its text argument unchanged.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "add", "description": "Adds two numbers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}},
                     "required": ["a", "b"]}},
]


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    """Runs a tool; errors are tool results with isError, as MCP wants."""
    name, args = params.get("name"), params.get("arguments") or {}
    try:
        if name == "echo":
            text = str(args["text"])
        elif name == "add":
            text = repr(args["a"] + args["b"])
        else:
            return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}
    except (KeyError, TypeError) as exc:
        return {"content": [{"type": "text", "text": f"bad arguments: {exc}"}], "isError": True}
    return {"content": [{"type": "text", "text": text}], "isError": False}


def handle(msg: dict[str, Any]) -> dict[str, Any] | None:
    """Returns the answer to one message, or None for notifications/responses."""
    if "method" not in msg or "id" not in msg:
        return None
    method, params = msg["method"], msg.get("params") or {}
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "initialize":
        asked = params.get("protocolVersion")
        out["result"] = {
            "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": NAME, "version": VERSION},
        }
    elif method == "ping":
        out["result"] = {}
    elif method == "tools/list":
        out["result"] = {"tools": TOOLS}
    elif method == "tools/call":
        out["result"] = call_tool(params)
    else:
        out["error"] = {"code": -32601, "message": "Method not found"}
    return out


def main() -> None:
    """Serves stdin/stdout until stdin closes."""
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            answer: dict[str, Any] | None = {"jsonrpc": "2.0", "id": None,
                                             "error": {"code": -32700, "message": "Parse error"}}
        else:
            answer = handle(msg) if isinstance(msg, dict) else None
        if answer is not None:
            out.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
            out.flush()


if __name__ == "__main__":
    main()
