"""A small but real MCP stdio server: ``python -m mcpping.demo``.

``mcpping`` with no target pings it. Its answers are C's (``mcpp_demo_answer``,
the same bytes as ``node/demo-server.js``): initialize (serverInfo
``mcpping-demo``), ping, tools/list and tools/call for two tools, ``echo``
and ``add``; notifications are ignored and any other method gets -32601.
This module only carries the lines.
"""

from __future__ import annotations

import sys

from . import _native


def main() -> None:
    """Serves stdin/stdout until stdin closes."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        answer = _native.demo_answer(line)
        if answer is not None:
            out.write(answer + b"\n")
            out.flush()


if __name__ == "__main__":
    main()
