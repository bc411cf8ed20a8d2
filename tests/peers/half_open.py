#!/usr/bin/env python3
"""half_open.py: closes its stdout but keeps running without reading stdin
(a silent half-open server). Only SIGTERM/SIGKILL ends it.
Flags:
  --after N   answer N messages normally first (default 0: close at once)
"""
import argparse
import os
import time

from _common import answer_standard, messages

ap = argparse.ArgumentParser()
ap.add_argument("--after", type=int, default=0)
args = ap.parse_args()

if args.after > 0:
    handled = 0
    for _, msg in messages():
        answer_standard(msg, "half_open")
        handled += 1
        if handled >= args.after:
            break
os.close(1)
while True:
    time.sleep(1000)
