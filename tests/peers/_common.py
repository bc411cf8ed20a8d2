"""Shared bits of the fault peers: line I/O on binary stdio and MCP replies.

Every peer is a stdio MCP server: one JSON-RPC message per line on stdout,
requests on stdin. Ids are echoed exactly (json keeps big ints exact).
"""
import json
import sys

IN = sys.stdin.buffer
OUT = sys.stdout.buffer


def send_raw(data):
    OUT.write(data)
    OUT.flush()


def send(obj):
    send_raw(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")


def messages():
    """Yields (raw line, parsed message or None), skipping blank lines."""
    for raw in IN:
        line = raw.rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        yield line, msg if isinstance(msg, dict) else None


def result(msg, value):
    send({"jsonrpc": "2.0", "id": msg["id"], "result": value})


def error(msg, code, text):
    send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": code, "message": text}})


def is_request(msg, method=None):
    return msg is not None and "id" in msg and "method" in msg and (
        method is None or msg["method"] == method)


def answer_standard(msg, name, answer_ping=True):
    """Answers initialize, ping and tools/list; returns True if it did."""
    if not is_request(msg):
        return False
    method = msg["method"]
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
        result(msg, {"protocolVersion": version, "capabilities": {},
                     "serverInfo": {"name": name, "version": "0.1.0"}})
        return True
    if method == "ping" and answer_ping:
        result(msg, {})
        return True
    if method == "tools/list":
        result(msg, {"tools": []})
        return True
    return False


def serve(name, answer_ping=True):
    """A plain server loop: standard answers, -32601 for anything else."""
    for _, msg in messages():
        if answer_standard(msg, name, answer_ping):
            continue
        if is_request(msg) and (answer_ping or msg["method"] != "ping"):
            error(msg, -32601, "Method not found")
