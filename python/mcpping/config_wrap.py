"""``mcpping --config FILE --wrap|--unwrap [--write] [--command PATH]`` (docs/cli.md).

The rewrite itself is C's (csrc/src/app/config_rewrite.c, the same bytes as
Node's): every stdio server of a client config runs behind
``MCPPING wrap --name ENTRY --``, MCPPING being the absolute path of this
mcpping, or no longer does. The new config goes to stdout; with ``--write``
the file is rewritten in place after a backup (``FILE.bak``, or
``FILE.bak.N``), once every wrapped entry has been seen to start as a
desktop client starts it (a minimal environment: ``PATH=/usr/bin:/bin`` and
the entry's ``env``). Python reads the arguments and files, spawns the check
and prints.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys

from . import _native, config

__all__ = ["launcher", "run_wrap"]


#: The environment a desktop client gives a server: hardly any PATH.
MINIMAL_PATH = "/usr/bin:/bin"

#: How long a wrapped entry has to answer initialize before --write refuses.
START_TIMEOUT = 10.0


def launcher() -> list[str]:
    """The running mcpping as an absolute command line: its console script,
    or this interpreter with ``-m mcpping``."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) in ("mcpping", "mcpping.exe"):
        found = script if os.sep in script else shutil.which(script)
        if found:
            return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "mcpping"]


def _backup_name(path: str) -> str:
    name, n = f"{path}.bak", 1
    while os.path.exists(name):
        name, n = f"{path}.bak.{n}", n + 1
    return name


async def _start_problems(path: str, text: str, launch: list[str]) -> list[str]:
    """The refusal line of each wrapped entry that does not answer initialize
    when started as a desktop client starts it."""
    from ._config_check import Plan, check_all

    plan = Plan(count=0, interval=0, timeout=START_TIMEOUT, deadline=START_TIMEOUT, log=None,
                environ={"PATH": MINIMAL_PATH})
    cfg = config.parse(text, path)
    servers = [(s, cfg.workspace) for s in cfg.servers
               if s.transport == "stdio" and not s.disabled and s.command == launch[0]]
    results = await check_all(servers, plan, asyncio.Event())
    return [_native.config_format_refusal(path, r) for r in results
            if r["status"] not in ("ok", "unsupported", "not started")]


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
    verb = "unwrapped" if unwrap else "wrapped"
    if not write:
        sys.stdout.write(text)
        return 0
    if changed == 0:
        what = "unwrap" if unwrap else "wrap"
        sys.stderr.write(f"mcpping: {path}: no server to {what}; left as it is\n")
        return 0
    if not unwrap:
        refusals = asyncio.run(_start_problems(path, text, launch))
        sys.stderr.write("".join(refusals))
        if refusals:
            return 3
    backup = _backup_name(path)
    try:
        with open(path, "rb") as f:
            original = f.read()
        with open(backup, "xb") as f:
            f.write(original)
        tmp = f"{path}.mcpping-tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except OSError as e:
        sys.stderr.write(f"mcpping: cannot write {path}: {e.strerror or e}\n")
        return 2
    note = " (its comments and trailing commas were not kept)" if had_comments else ""
    sys.stderr.write(f"mcpping: {verb} {changed} server{'s' * (changed != 1)} in {path}"
                     f"{note}; the original is in {backup}\n")
    return 0
