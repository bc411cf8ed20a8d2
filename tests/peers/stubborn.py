#!/usr/bin/env python3
"""stubborn.py: answers initialize, ping and tools/list, but ignores
SIGTERM, SIGINT and SIGHUP and keeps running after stdin's EOF: only
SIGKILL ends it. Writes its pid to --pidfile first.
Flags:
  --pidfile PATH   where to write our pid (required)
"""
import argparse
import os
import signal
import time

from _common import answer_standard, messages

ap = argparse.ArgumentParser()
ap.add_argument("--pidfile", required=True)
args = ap.parse_args()
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
with open(args.pidfile + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(args.pidfile + ".tmp", args.pidfile)
for _, msg in messages():
    answer_standard(msg, "stubborn")
while True:
    time.sleep(1000)
