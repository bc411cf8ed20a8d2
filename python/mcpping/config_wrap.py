"""``mcpping --config FILE --wrap|--unwrap [--write] [--command PATH]`` (docs/cli.md).

The rewrite itself is C's (csrc/src/app/config_rewrite.c, the same bytes as
Node's): every stdio server of a client config runs behind
``MCPPING wrap --name ENTRY --``, MCPPING being the absolute path of this
mcpping, or no longer does. The new config goes to stdout; with ``--write``
the file is rewritten in place after a backup (``FILE.bak``, or
``FILE.bak.N``), once every wrapped entry has been seen to start as a
desktop client starts it (a minimal environment: ``PATH=/usr/bin:/bin`` and
the entry's ``env``). The backup, the replacement and every line printed are
C's too (csrc/src/app/config_write.c); Python spawns the check and prints.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys

from . import _native, config

__all__ = ["launcher", "run_wrap"]


def launcher() -> list[str]:
    """The running mcpping as an absolute command line: its console script,
    or this interpreter with ``-m mcpping``."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) in ("mcpping", "mcpping.exe"):
        found = script if os.sep in script else shutil.which(script)
        if found:
            return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "mcpping"]


async def _start_problems(path: str, text: str, launch: list[str]) -> str:
    """The refusal line of each wrapped entry that does not answer initialize
    when started as a desktop client starts it."""
    from ._config_check import Plan, check_all

    start = _native.CONFIG_START_TIMEOUT_MS / 1000
    plan = Plan(count=0, interval=0, timeout=start, deadline=start, log=None,
                environ={"PATH": _native.CONFIG_START_PATH})
    cfg = config.parse(text, path)
    servers = [(s, cfg.workspace) for s in cfg.servers
               if s.transport == "stdio" and not s.disabled and s.command == launch[0]]
    results = await check_all(servers, plan, asyncio.Event())
    return "".join(_native.config_format_refusal(path, r) for r in results)


def run_wrap(path: str, *, unwrap: bool, write: bool, command: str | None) -> int:
    """Returns the exit status: 0; 2 with one line on stderr (a bad file);
    3 if a wrapped entry would not start (nothing written)."""
    try:
        config.load(path)  # every entry checked, with the parser's messages
        with open(path, encoding="utf-8") as f:
            original_text = f.read()
    except config.ConfigError as e:
        sys.stderr.write(f"mcpping: {e}\n")
        return 2
    except OSError as e:
        sys.stderr.write(f"mcpping: cannot read {path}: {e.strerror or e}\n")
        return 2
    launch = [os.path.abspath(command)] if command else launcher()
    text, changed, had_comments = _native.config_rewrite(original_text, unwrap, launch)
    if not write:
        sys.stdout.write(text)
        return 0
    if changed and not unwrap:
        refusals = asyncio.run(_start_problems(path, text, launch))
        if refusals:
            sys.stderr.write(refusals)
            return 3
    status, line = _native.config_write(path, text, unwrap, changed, had_comments)
    sys.stderr.write(line)
    return status
