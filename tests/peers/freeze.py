#!/usr/bin/env python3
"""freeze.py: answers normally, then freezes (stops reading and writing,
but stays alive) after N messages or when asked with `test/freeze`.
Flags:
  --after N   freeze after handling N messages (default: only on trigger)
"""
import argparse
import time

from _common import answer_standard, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--after", type=int, default=-1)
args = ap.parse_args()


def freeze():
    while True:
        time.sleep(1000)


handled = 0
for _, msg in messages():
    if is_request(msg, "test/freeze"):
        result(msg, {})
        freeze()
    answer_standard(msg, "freeze")
    handled += 1
    if handled == args.after:
        freeze()
