"""MCP client configs: the servers a Claude Desktop, Claude Code, Cursor or
VS Code config declares (docs/cli.md, "--config").

:func:`load` reads one file into a :class:`ConfigFile` of :class:`Server`
entries, exactly as written; :func:`resolve` expands the variables of one
entry (``${workspaceFolder}``, ``${env:NAME}``, ``${NAME:-default}``…) when
it is about to be started. A file that cannot be used raises
:class:`ConfigError`, naming the file and the JSON path of the problem.
Node's ``node/config.js`` reads the same files into the same model with the
same messages.

Secrets: ``env`` and ``headers`` values are kept for starting the server and
never shown: not in ``repr``, not in an error message.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["ConfigError", "ConfigFile", "Server", "UnresolvedVariable", "auto_paths", "load",
           "parse", "resolve"]

#: ``type`` values and the transport each one means.
TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "streamable-http": "streamable-http",
              "streamableHttp": "streamable-http", "sse": "sse"}

_ERRNO_TEXT = {"ENOENT": "No such file or directory", "EACCES": "Permission denied",
               "EISDIR": "Is a directory", "ENOTDIR": "Not a directory"}


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


@dataclass(frozen=True)
class ConfigFile:
    """One config file and its servers, in file order."""

    path: str
    servers: tuple[Server, ...]

    @property
    def workspace(self) -> str:
        """The folder ``${workspaceFolder}`` means: the one holding ``.vscode``/``.cursor``."""
        folder = os.path.dirname(os.path.abspath(self.path))
        if os.path.basename(folder) in (".vscode", ".cursor"):
            folder = os.path.dirname(folder)
        return folder


# ------------------------------------------------------------------ paths

def json_path(parent: str, key: str | int) -> str:
    """``$.a.b``, ``$.a["b c"]``, ``$.a[3]``: the path of parent's child key."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key):
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"


def _kind(value: Any) -> str:
    """The JSON type name of a parsed value, for messages (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# ------------------------------------------------------------------ reading

def _strip_jsonc(text: str) -> str:
    """Blanks out // and /* */ comments and trailing commas (VS Code's
    files are JSONC), keeping every other character where it was so that a
    parse error's line and column still point into the file."""
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1  # index of a comma not yet followed by a value
    while i < n:
        c = text[i]
        if c == '"':
            last_comma = -1
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        elif c == ",":
            last_comma = i
        elif c in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif not c.isspace():
            last_comma = -1
        i += 1
    return "".join(out)


#: Deeper nesting than this is refused (no client config comes close).
MAX_DEPTH = 64


class _Syntax(Exception):
    def __init__(self, pos: int) -> None:
        self.pos = pos


def syntax_error_at(text: str) -> int | None:
    """Where strict JSON first goes wrong in text (an index), or None.

    Both languages scan with this same grammar before parsing, so a bad
    file gets the same line and column from each command, whatever its own
    JSON parser would say (Python's accepts NaN; their messages differ).
    """
    n = len(text)
    i = 0

    def ws() -> None:
        nonlocal i
        while i < n and text[i] in " \t\n\r":
            i += 1

    def digits() -> None:
        nonlocal i
        if i >= n or not "0" <= text[i] <= "9":
            raise _Syntax(i)
        while i < n and "0" <= text[i] <= "9":
            i += 1

    def string() -> None:
        nonlocal i
        i += 1
        while i < n:
            c = text[i]
            if c == '"':
                i += 1
                return
            if c == "\\":
                nxt = text[i + 1] if i + 1 < n else ""
                if nxt and nxt in '"\\/bfnrt':
                    i += 2
                elif nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", text[i + 2:i + 6]):
                    i += 6
                else:
                    raise _Syntax(i + 1)
            elif c < " ":
                raise _Syntax(i)
            else:
                i += 1
        raise _Syntax(n)

    def value(depth: int) -> None:
        nonlocal i
        if i >= n:
            raise _Syntax(n)
        c = text[i]
        if c in "{[":
            if depth >= MAX_DEPTH:
                raise _Syntax(i)
            close = "}" if c == "{" else "]"
            i += 1
            ws()
            if i < n and text[i] == close:
                i += 1
                return
            while True:
                if c == "{":
                    if i >= n or text[i] != '"':
                        raise _Syntax(i)
                    string()
                    ws()
                    if i >= n or text[i] != ":":
                        raise _Syntax(i)
                    i += 1
                    ws()
                value(depth + 1)
                ws()
                if i < n and text[i] == ",":
                    i += 1
                    ws()
                elif i < n and text[i] == close:
                    i += 1
                    return
                else:
                    raise _Syntax(i)
        elif c == '"':
            string()
        elif c == "-" or "0" <= c <= "9":
            if c == "-":
                i += 1
            if i < n and text[i] == "0":
                i += 1
            else:
                digits()
            if i < n and text[i] == ".":
                i += 1
                digits()
            if i < n and text[i] in "eE":
                i += 1
                if i < n and text[i] in "+-":
                    i += 1
                digits()
        else:
            for word in ("true", "false", "null"):
                if text.startswith(word, i):
                    i += len(word)
                    return
            raise _Syntax(i)

    try:
        ws()
        value(0)
        ws()
        if i < n:
            raise _Syntax(i)
    except _Syntax as e:
        return e.pos
    return None


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
        code = _errno_name(e)
        raise ConfigError(name, None, f"cannot read: {_ERRNO_TEXT.get(code, code)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(name, None, "not UTF-8 text") from None
    return parse(text, name, require_servers, project)


def _errno_name(e: OSError) -> str:
    return errno.errorcode.get(e.errno or 0, str(e.strerror or e))


def parse(text: str, path: str, require_servers: bool = True,
          project: str | None = None) -> ConfigFile:
    """Parses a config's text (JSON or JSONC); raises ConfigError."""
    if text.startswith("\ufeff"):
        text = text[1:]
    plain = _strip_jsonc(text)
    bad = syntax_error_at(plain)
    if bad is not None:
        line = text.count("\n", 0, bad) + 1
        column = bad - (text.rfind("\n", 0, bad) + 1) + 1
        raise ConfigError(path, None, f"invalid JSON at line {line} column {column}")
    doc = json.loads(plain)
    if not isinstance(doc, dict):
        raise ConfigError(path, "$", f"must be an object, got {_kind(doc)}")
    tables: list[tuple[str, Any]] = []
    if "mcpServers" in doc:
        tables.append(("$.mcpServers", doc["mcpServers"]))
    if "servers" in doc:
        tables.append(("$.servers", doc["servers"]))
    mcp = doc.get("mcp")
    if not tables and isinstance(mcp, dict) and "servers" in mcp:
        tables.append(("$.mcp.servers", mcp["servers"]))  # VS Code settings.json
    projects = doc.get("projects")
    project = os.getcwd() if project is None else project
    if isinstance(projects, dict) and isinstance(projects.get(project), dict) \
            and "mcpServers" in projects[project]:
        # Claude Code's "local" scope: ~/.claude.json, per project folder.
        tables.append((json_path(json_path("$.projects", project), "mcpServers"),
                       projects[project]["mcpServers"]))
    if not tables and not require_servers:
        return ConfigFile(path, ())
    if not tables:
        raise ConfigError(path, "$", 'has no "mcpServers" or "servers" object')
    servers: list[Server] = []
    for where, table in tables:
        if not isinstance(table, dict):
            raise ConfigError(path, where, f"must be an object, got {_kind(table)}")
        for name, entry in table.items():
            servers.append(_server(path, json_path(where, name), name, entry))
    return ConfigFile(path, tuple(servers))


def _server(path: str, at: str, name: str, entry: Any) -> Server:
    if not isinstance(entry, dict):
        raise ConfigError(path, at, f"must be an object, got {_kind(entry)}")

    def string(key: str, required: bool = False) -> str | None:
        if entry.get(key) is None and not required:
            return None
        if key not in entry:
            raise ConfigError(path, json_path(at, key), "is missing")
        v = entry[key]
        if not isinstance(v, str):
            raise ConfigError(path, json_path(at, key), f"must be a string, got {_kind(v)}")
        if required and not v:
            raise ConfigError(path, json_path(at, key), "must not be empty")
        _no_nul(v, json_path(at, key))
        return v

    def _no_nul(text: str, where: str) -> None:
        # No OS passes a NUL in an argument, a variable or a header.
        if "\0" in text:
            raise ConfigError(path, where, "contains a NUL character")

    def strings(key: str) -> tuple[str, ...]:
        v = entry.get(key)
        if v is None:
            return ()
        if not isinstance(v, list):
            raise ConfigError(path, json_path(at, key), f"must be an array of strings, got {_kind(v)}")
        for i, item in enumerate(v):
            if not isinstance(item, str):
                raise ConfigError(path, json_path(json_path(at, key), i),
                                  f"must be a string, got {_kind(item)}")
            _no_nul(item, json_path(json_path(at, key), i))
        return tuple(v)

    def table(key: str, names: bool = False) -> dict[str, str]:
        v = entry.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise ConfigError(path, json_path(at, key), f"must be an object of strings, got {_kind(v)}")
        for k, item in v.items():
            if names and (not k or "=" in k or "\0" in k):
                raise ConfigError(path, json_path(json_path(at, key), k),
                                  "is not a variable name (empty, or with = or NUL)")
            if not isinstance(item, str):
                raise ConfigError(path, json_path(json_path(at, key), k),
                                  f"must be a string, got {_kind(item)}")
            _no_nul(item, json_path(json_path(at, key), k))
        return dict(v)

    kind = entry.get("type")
    if kind is not None and (not isinstance(kind, str) or kind not in TRANSPORTS):
        shown = json.dumps(kind, ensure_ascii=False) if isinstance(kind, str) else _kind(kind)
        raise ConfigError(path, json_path(at, "type"),
                          f"unknown transport {shown} (expected stdio, http or sse)")
    if kind is None:
        if "command" in entry:
            kind = "stdio"
        elif "url" in entry:
            kind = "http"
        else:
            raise ConfigError(path, at, 'needs "command" (stdio) or "url" (HTTP)')
    disabled = entry.get("disabled")
    if disabled is None:
        disabled = False
    if not isinstance(disabled, bool):
        raise ConfigError(path, json_path(at, "disabled"), f"must be a boolean, got {_kind(disabled)}")
    if kind == "stdio":
        return Server(name, TRANSPORTS[kind], path, at, command=string("command", required=True),
                      args=strings("args"), env=table("env", names=True), cwd=string("cwd"),
                      disabled=disabled)
    url = string("url", required=True)
    assert url is not None
    if not re.match(r"https?://", url, re.IGNORECASE):
        raise ConfigError(path, json_path(at, "url"), "must be an http:// or https:// URL")
    return Server(name, TRANSPORTS[kind], path, at, url=url, headers=table("headers"),
                  disabled=disabled)


# ------------------------------------------------------------------ variables

_VARIABLE = re.compile(r"\$\{([^}]*)\}")


def resolve(server: Server, workspace: str, environ: Mapping[str, str] | None = None,
            home: str | None = None) -> Server:
    """The entry with its ``${...}`` variables filled in, its cwd absolute.

    Understood: ``${workspaceFolder}`` (the workspace of the file),
    ``${userHome}``, ``${env:NAME}`` (VS Code, Cursor), ``${NAME}`` and
    ``${NAME:-default}`` (Claude Code). Anything else, ``${input:...}``
    included (VS Code asks the user for it), raises UnresolvedVariable,
    whose message names the field and the variable, never a value.
    """
    env = os.environ if environ is None else environ
    home = home if home is not None else os.path.expanduser("~")

    def fill(text: str, at: str) -> str:
        def one(m: re.Match[str]) -> str:
            var = m.group(1)
            if var == "workspaceFolder":
                return workspace
            if var == "userHome":
                return home
            if var.startswith("env:") and var[4:] in env:
                return env[var[4:]]
            name, sep, default = var.partition(":-")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                if name in env:
                    return env[name]
                if sep:
                    return default
            if var.startswith("input:"):
                raise UnresolvedVariable(f"{at}: ${{{var}}} is asked of the user by the editor")
            raise UnresolvedVariable(f"{at}: ${{{var}}} is not set")
        return _VARIABLE.sub(one, text)

    at = server.json_path
    changes: dict[str, Any] = {}
    if server.transport == "stdio":
        assert server.command is not None
        changes["command"] = fill(server.command, json_path(at, "command"))
        changes["args"] = tuple(fill(a, json_path(json_path(at, "args"), i))
                                for i, a in enumerate(server.args))
        changes["env"] = {k: fill(v, json_path(json_path(at, "env"), k))
                          for k, v in server.env.items()}
        if server.cwd is not None:
            changes["cwd"] = os.path.join(workspace, fill(server.cwd, json_path(at, "cwd")))
    else:
        assert server.url is not None
        changes["url"] = fill(server.url, json_path(at, "url"))
        changes["headers"] = {k: fill(v, json_path(json_path(at, "headers"), k))
                              for k, v in server.headers.items()}
    return replace(server, **changes)


# ------------------------------------------------------------------ auto

def auto_paths(cwd: str | None = None, home: str | None = None,
               platform: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Where the usual clients keep their configs on this OS, project files
    (under cwd) first; existing or not (``--config auto`` reads those that exist)."""
    env = os.environ if environ is None else environ
    cwd = cwd or os.getcwd()
    home = home or env.get("HOME") or os.path.expanduser("~")
    platform = platform or sys.platform
    if platform == "darwin":
        app = os.path.join(home, "Library", "Application Support")
    elif platform.startswith("win"):
        app = env.get("APPDATA") or os.path.join(home, "AppData", "Roaming")
    else:
        app = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [
        os.path.join(cwd, ".mcp.json"),                       # Claude Code, project
        os.path.join(cwd, ".cursor", "mcp.json"),             # Cursor, project
        os.path.join(cwd, ".vscode", "mcp.json"),             # VS Code, workspace
        os.path.join(app, "Claude", "claude_desktop_config.json"),  # Claude Desktop
        os.path.join(home, ".claude.json"),                   # Claude Code, user
        os.path.join(home, ".cursor", "mcp.json"),            # Cursor, user
        os.path.join(app, "Code", "User", "mcp.json"),        # VS Code, user
    ]
