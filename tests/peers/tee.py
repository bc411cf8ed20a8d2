#!/usr/bin/env python3
"""tee.py: a recording relay, for tests that compare what each side saw.
Runs COMMAND and relays our stdin to its stdin and its stdout to our
stdout, byte for byte, appending the bytes it passed up (to COMMAND) to
PREFIX.up and those it passed down (from COMMAND) to PREFIX.down. Its
stderr is COMMAND's. When our stdin ends, COMMAND's stdin is closed; we
exit with COMMAND's status once its stdout ends.
Usage: tee.py PREFIX -- COMMAND [ARG...]
"""
import os
import subprocess
import sys
import threading

prefix = sys.argv[1]
assert sys.argv[2] == "--"
child = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)


def relay(src, dst, log_path, close_dst):
    with open(log_path, "ab", buffering=0) as log:
        while True:
            data = os.read(src, 65536)
            if not data:
                break
            log.write(data)
            try:
                os.write(dst, data) if isinstance(dst, int) else dst.write(data)
            except (BrokenPipeError, OSError):
                break
    close_dst()


up = threading.Thread(target=relay, args=(0, child.stdin, prefix + ".up", child.stdin.close),
                      daemon=True)
up.start()
relay(child.stdout.fileno(), 1, prefix + ".down", lambda: None)
sys.exit(child.wait())
