"""MCP client configs: the servers a Claude Desktop, Claude Code, Cursor or
VS Code config declares (docs/cli.md, "--config").

:func:`load` reads one file into a :class:`ConfigFile` of :class:`Server`
entries, exactly as written; :func:`resolve` expands the variables of one
entry (``${workspaceFolder}``, ``${env:NAME}``, ``${NAME:-default}``…) when
it is about to be started. A file that cannot be used raises
:class:`ConfigError`, naming the file and the JSON path of the problem.
The rules and every sentence are C's (csrc/src/app/config_load.c,
config_resolve.c); this module reads the file and builds the objects.

Secrets: ``env`` and ``headers`` values are kept for starting the server and
never shown: not in ``repr``, not in an error message.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from . import _native

__all__ = ["ConfigError", "ConfigFile", "Server", "UnresolvedVariable", "auto_paths", "load",
           "parse", "resolve"]


class ConfigError(ValueError):
    """A config file that cannot be used: ``FILE: JSON-PATH: problem``."""

    def __init__(self, file: str, json_path: str | None, problem: str) -> None:
        self.file = file
        self.json_path = json_path
        self.problem = problem
        where = f"{file}: {json_path}" if json_path else file
        super().__init__(f"{where}: {problem}")


class UnresolvedVariable(ValueError):
    """A ``${...}`` in an entry that mcpping cannot fill in."""


@dataclass(frozen=True)
class Server:
    """One server entry as written in its file (``env``/``headers`` hidden from repr)."""

    name: str
    #: ``stdio``, ``streamable-http`` or ``sse`` (legacy HTTP+SSE, not pinged).
    transport: str
    file: str
    #: Where the entry is in its file, e.g. ``$.mcpServers.time``.
    json_path: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: ``"disabled": true`` in the entry (Cline, Windsurf, Claude Code).
    disabled: bool = False

    @property
    def secrets(self) -> list[str]:
        """What the commands never print of it: env and headers values, the URL."""
        return [*self.env.values(), *self.headers.values(), *([self.url] if self.url else [])]


@dataclass(frozen=True)
class ConfigFile:
    """One config file and its servers, in file order."""

    path: str
    servers: tuple[Server, ...]

    @property
    def workspace(self) -> str:
        """The folder ``${workspaceFolder}`` means: the one holding ``.vscode``/``.cursor``."""
        return _native.config_workspace(self.path)


def json_path(parent: str, key: str | int) -> str:
    """``$.a.b``, ``$.a["b c"]``, ``$.a[3]``: the path of parent's child key."""
    return _native.config_json_path(parent, key)


def _strip_jsonc(text: str) -> str:
    """Blanks out comments and trailing commas (JSONC), every other character in place."""
    return _native.config_strip_jsonc(text)


def syntax_error_at(text: str) -> int | None:
    """Where strict JSON first goes wrong in text (an index), or None."""
    return _native.config_syntax_error_at(text)


def load(path: str | os.PathLike[str], require_servers: bool = True,
         project: str | None = None) -> ConfigFile:
    """Reads one config file; raises ConfigError.

    require_servers=False reads a file without a servers object as one
    without servers (``--config auto`` and ``~/.claude.json``). project
    (default: the current directory) picks Claude Code's per-project servers
    in ``~/.claude.json``, ``projects[project].mcpServers``."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        code = errno.errorcode.get(e.errno or 0, str(e.strerror or e))
        raise ConfigError(name, None, _native.config_read_problem(code)) from None
    return _parse(data, name, require_servers, project)


def parse(text: str, path: str, require_servers: bool = True,
          project: str | None = None) -> ConfigFile:
    """Parses a config's text (JSON or JSONC); raises ConfigError."""
    return _parse(text.encode("utf-8", "surrogatepass"), path, require_servers, project)


def _parse(data: bytes, path: str, require_servers: bool, project: str | None) -> ConfigFile:
    servers, where, problem = _native.config_parse(data, require_servers, project)
    if problem is not None:
        raise ConfigError(path, where, problem)
    return ConfigFile(path, tuple(
        Server(name, transport, path, at, command=command, args=args, env=env, cwd=cwd, url=url,
               headers=headers, disabled=disabled)
        for name, transport, at, command, args, env, cwd, url, headers, disabled in servers))


def resolve(server: Server, workspace: str, environ: Mapping[str, str] | None = None,
            home: str | None = None) -> Server:
    """The entry with its ``${...}`` variables filled in, its cwd absolute.

    Understood: ``${workspaceFolder}`` (the workspace of the file),
    ``${userHome}``, ``${env:NAME}`` (VS Code, Cursor), ``${NAME}`` and
    ``${NAME:-default}`` (Claude Code). Anything else, ``${input:...}``
    included (VS Code asks the user for it), raises UnresolvedVariable,
    whose message names the field and the variable, never a value.
    """
    s = server
    filled = _native.config_resolve(
        (s.name, s.transport, s.json_path, s.command, s.args, s.env, s.cwd, s.url, s.headers,
         s.disabled), workspace, os.environ if environ is None else environ, home)
    if isinstance(filled, str):
        raise UnresolvedVariable(filled)
    command, args, env, cwd, url, headers = filled
    return replace(server, command=command, args=args, env=env, cwd=cwd, url=url, headers=headers)


def auto_paths(cwd: str | None = None, home: str | None = None,
               platform: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Where the usual clients keep their configs on this OS, project files
    (under cwd) first; existing or not (``--config auto`` reads those that exist)."""
    return _native.config_auto_paths(cwd or None, home or None, platform,
                                     os.environ if environ is None else environ)
