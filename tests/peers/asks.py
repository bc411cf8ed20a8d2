#!/usr/bin/env python3
"""asks.py: a server that needs an answer from its client before it serves.

Answers initialize; then, at the first message after it, sends the client a
request (`--method`, default roots/list, id "ask-1") and holds every other
message until the client answers it, as a server that must know its roots
before it can work does. Once answered it serves ping and tools/list, and
answers `test/asked` with {"answer": the client's answer}. A client that
never answers the request gets nothing more: no pong, no tools.
"""
import argparse

from _common import answer_standard, is_request, messages, result, send

ap = argparse.ArgumentParser()
ap.add_argument("--method", default="roots/list")
args = ap.parse_args()

answer = None
held = []


def serve(msg):
    if is_request(msg, "test/asked"):
        result(msg, {"answer": answer})
    else:
        answer_standard(msg, "asks")


for raw, msg in messages():
    if msg is None:
        continue
    if answer is None and "method" not in msg and msg.get("id") == "ask-1":
        answer = msg
        for waiting in held:
            serve(waiting)
        held = []
    elif is_request(msg, "initialize"):
        answer_standard(msg, "asks")
    elif answer is None:
        if not held:
            send({"jsonrpc": "2.0", "id": "ask-1", "method": args.method})
        held.append(msg)
    else:
        serve(msg)
