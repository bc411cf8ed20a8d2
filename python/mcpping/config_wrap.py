"""``mcpping --config FILE --wrap|--unwrap [--write]`` (docs/cli.md).

Puts ``mcpping wrap --`` in front of every stdio server of a client config
(Claude Desktop, Claude Code, Cursor, VS Code: the files :mod:`mcpping.config`
reads), or takes it away. URL servers are left as they are, and a server
already wrapped is not wrapped twice. The new config goes to stdout; with
``--write`` the file is rewritten in place after a backup (``FILE.bak``, or
``FILE.bak.N`` if that exists). Node's ``node/config_wrap.js`` writes the
same bytes.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any

from . import config

__all__ = ["is_wrapped", "wrap_entry", "unwrap_entry", "rewrite", "main"]

USAGE_LINE = "usage: mcpping --config FILE --wrap|--unwrap [--write]"


class _Usage(Exception):
    pass


def is_wrapped(entry: dict[str, Any]) -> bool:
    """True if a stdio entry already runs through ``mcpping wrap``."""
    command = entry.get("command")
    args = entry.get("args") or []
    return (isinstance(command, str) and os.path.basename(command) == "mcpping"
            and bool(args) and args[0] == "wrap" and "--" in args)


def wrap_entry(entry: dict[str, Any]) -> bool:
    """Wraps a stdio entry in place; returns False if it was wrapped already."""
    if is_wrapped(entry):
        return False
    entry["args"] = ["wrap", "--", entry["command"], *(entry.get("args") or [])]
    entry["command"] = "mcpping"
    return True


def unwrap_entry(entry: dict[str, Any]) -> bool:
    """Unwraps a wrapped entry in place (its wrap options go too)."""
    if not is_wrapped(entry):
        return False
    args = entry["args"]
    rest = args[args.index("--") + 1:]
    if not rest:
        return False
    entry["command"] = rest[0]
    # No arguments: no "args" (as most entries without any are written).
    if rest[1:]:
        entry["args"] = rest[1:]
    else:
        del entry["args"]
    return True


def _tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The server tables, as :func:`mcpping.config.parse` finds them."""
    tables = [doc[k] for k in ("mcpServers", "servers") if isinstance(doc.get(k), dict)]
    mcp = doc.get("mcp")
    if not tables and isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        tables.append(mcp["servers"])  # VS Code settings.json
    return tables


def rewrite(path: str, unwrap: bool) -> tuple[str, int, bool]:
    """The file's new text, how many servers changed, and whether the
    original had comments or trailing commas (JSON output cannot keep them). Raises
    :class:`mcpping.config.ConfigError`."""
    cfg = config.load(path)  # every entry checked, with the parser's messages
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = config._strip_jsonc(text)
    doc = json.loads(stripped)
    stdio = {s.name for s in cfg.servers if s.transport == "stdio"}
    changed = 0
    for table in _tables(doc):
        for name, entry in table.items():
            if name not in stdio or not isinstance(entry, dict) or "command" not in entry:
                continue
            changed += unwrap_entry(entry) if unwrap else wrap_entry(entry)
    had_comments = stripped != text
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n", changed, had_comments


def _backup_name(path: str) -> str:
    name, n = f"{path}.bak", 1
    while os.path.exists(name):
        name, n = f"{path}.bak.{n}", n + 1
    return name


def _parse(argv: list[str]) -> tuple[str, bool, bool]:
    files: list[str] = []
    modes: set[str] = set()
    write = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--config":
            if i + 1 >= len(argv) or not argv[i + 1]:
                raise _Usage("--config needs a FILE")
            files.append(argv[i + 1])
            i += 2
            continue
        if a in ("--wrap", "--unwrap"):
            modes.add(a)
        elif a == "--write":
            write = True
        else:
            raise _Usage(f"{a} does not go with --wrap/--unwrap ({USAGE_LINE})")
        i += 1
    if len(modes) != 1:
        raise _Usage(f"give one of --wrap and --unwrap ({USAGE_LINE})")
    if len(files) != 1 or files[0] == "auto":
        raise _Usage(f"--wrap and --unwrap edit one --config FILE ({USAGE_LINE})")
    return files[0], "--unwrap" in modes, write


def main(argv: list[str]) -> int:
    """Returns the exit status: 0, or 2 with one line on stderr."""
    try:
        path, unwrap, write = _parse(argv)
        text, changed, had_comments = rewrite(path, unwrap)
    except _Usage as e:
        sys.stderr.write(f"mcpping: {e}\n")
        return 2
    except config.ConfigError as e:
        sys.stderr.write(f"mcpping: {e}\n")
        return 2
    verb = "unwrapped" if unwrap else "wrapped"
    if not write:
        sys.stdout.write(text)
        return 0
    if changed == 0:
        what = "unwrap" if unwrap else "wrap"
        sys.stderr.write(f"mcpping: {path}: no server to {what}; left as it is\n")
        return 0
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
