#!/usr/bin/env python3
"""garbage.py: at start writes awkward but legal-to-forward output, then
serves normally (answers pings). The output, in order:
  not json at all                        (a non-JSON line)
  two blank lines                        (skipped by the reader)
  a JSON notification split across three writes with delays
  {"jsonrpc":"2.0","method":"notifications/crlf"} ending in CRLF
  a line of non-UTF-8 bytes: ff fe 20 c3 28
  {"a":1} {"a":2} {"a":3} as three lines in one write
  with --long N: a line of N 'L' bytes, written in 64 KiB pieces
  {"jsonrpc":"2.0","method":"notifications/done"}
Flags:
  --long N        also write a line of N bytes (default: none)
  --delay-ms MS   pause between split pieces (default 30)
"""
import argparse
import time

from _common import send_raw, serve

ap = argparse.ArgumentParser()
ap.add_argument("--long", type=int, default=0)
ap.add_argument("--delay-ms", type=int, default=30)
args = ap.parse_args()
pause = args.delay_ms / 1000.0

send_raw(b"not json at all\n")
send_raw(b"\n\n")
split = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"split"}}\n'
for piece in (split[:10], split[10:50], split[50:]):
    send_raw(piece)
    time.sleep(pause)
send_raw(b'{"jsonrpc":"2.0","method":"notifications/crlf"}\r\n')
send_raw(b"\xff\xfe \xc3\x28\n")
send_raw(b'{"a":1}\n{"a":2}\n{"a":3}\n')
if args.long:
    left = args.long
    while left:
        n = min(left, 65536)
        send_raw(b"L" * n)
        left -= n
    send_raw(b"\n")
send_raw(b'{"jsonrpc":"2.0","method":"notifications/done"}\n')
serve("garbage")
