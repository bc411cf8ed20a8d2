#!/usr/bin/env python3
"""freeze.py: answers normally, then freezes (stops reading and writing,
but stays alive) after N messages or when asked with `test/freeze`.
Flags:
  --after N   freeze after handling N messages (default: only on trigger)
  --on-usr1   freeze when sent SIGUSR1 (alive, idle, answering nothing)
  --name N    its serverInfo name (default freeze)
"""
import argparse
import signal
import time

from _common import answer_standard, is_request, messages, result

ap = argparse.ArgumentParser()
ap.add_argument("--after", type=int, default=-1)
ap.add_argument("--on-usr1", action="store_true")
ap.add_argument("--name", default="freeze")
args = ap.parse_args()


def freeze(*_):
    while True:
        time.sleep(1000)


if args.on_usr1:
    # The handler never returns: the main thread stops reading and writing.
    signal.signal(signal.SIGUSR1, freeze)


handled = 0
for _, msg in messages():
    if is_request(msg, "test/freeze"):
        result(msg, {})
        freeze()
    answer_standard(msg, args.name)
    handled += 1
    if handled == args.after:
        freeze()
