#!/usr/bin/env python3
"""dies.py: answers normally, then exits with a given code after N
messages (N = 0: at once, before reading anything).
Flags:
  --after N        exit after handling N messages (default 1)
  --code C         exit status (default 3)
  --stderr TEXT    write TEXT to stderr just before exiting
  --list-changed   declare tools and prompts listChanged: true (not
                   resources) in the initialize result
"""
import argparse
import os
import sys

from _common import answer_standard, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--after", type=int, default=1)
ap.add_argument("--code", type=int, default=3)
ap.add_argument("--stderr")
ap.add_argument("--list-changed", action="store_true")
args = ap.parse_args()


def die():
    if args.stderr:
        sys.stderr.write(args.stderr + "\n")
        sys.stderr.flush()
    sys.stdout.flush()
    os._exit(args.code)


if args.after == 0:
    die()
handled = 0
for _, msg in messages():
    if args.list_changed and is_request(msg, "initialize"):
        result(msg, {"protocolVersion": msg["params"]["protocolVersion"],
                     "capabilities": {"tools": {"listChanged": True},
                                      "prompts": {"listChanged": True}, "resources": {}},
                     "serverInfo": {"name": "dies", "version": "0.1.0"}})
    else:
        answer_standard(msg, "dies")
    handled += 1
    if handled >= args.after:
        die()
die()
