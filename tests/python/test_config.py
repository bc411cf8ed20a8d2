"""mcpping.config: every client format read into the model, every bad file
named with its JSON path, variables, auto paths, secrets kept out of sight."""

from __future__ import annotations

import json
import os

import pytest

from mcpping.config import (ConfigError, UnresolvedVariable, auto_paths, load, parse, resolve,
                            syntax_error_at)


def write(tmp_path, rel: str, doc: object | str) -> str:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def test_claude_desktop_stdio_entries_keep_command_args_env_in_file_order(tmp_path):
    path = write(tmp_path, "claude_desktop_config.json", {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        }})
    cfg = load(path)
    assert [s.name for s in cfg.servers] == ["time", "fs"]
    time_, fs = cfg.servers
    assert (time_.transport, time_.command, time_.args, dict(time_.env)) == (
        "stdio", "uvx", ("mcp-server-time",), {"TZ": "UTC"})
    assert time_.json_path == "$.mcpServers.time" and time_.file == path
    assert fs.args[-1] == "/tmp" and fs.cwd is None and not fs.disabled


def test_claude_code_mcp_json_with_types_stdio_and_http(tmp_path):
    path = write(tmp_path, ".mcp.json", {"mcpServers": {
        "local": {"type": "stdio", "command": "python3", "args": ["s.py"], "cwd": "srv"},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer t"}},
        "legacy": {"type": "sse", "url": "https://mcp.example.com/sse"},
    }})
    local, remote, legacy = load(path).servers
    assert (local.transport, local.cwd) == ("stdio", "srv")
    assert (remote.transport, remote.url, dict(remote.headers)) == (
        "streamable-http", "https://mcp.example.com/mcp", {"Authorization": "Bearer t"})
    assert legacy.transport == "sse"


def test_cursor_url_entries_without_type_are_streamable_http(tmp_path):
    path = write(tmp_path, ".cursor/mcp.json", {"mcpServers": {
        "web": {"url": "http://127.0.0.1:8000/mcp"}, "cli": {"command": "srv"}}})
    cfg = load(path)
    assert [s.transport for s in cfg.servers] == ["streamable-http", "stdio"]
    assert cfg.workspace == str(tmp_path)  # the folder holding .cursor


def test_vscode_servers_with_type_and_jsonc_comments_and_trailing_commas(tmp_path):
    path = write(tmp_path, ".vscode/mcp.json", """{
  // VS Code writes JSONC
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "py": {"type": "stdio", "command": "python3", "args": ["${workspaceFolder}/s.py",],},
    /* an HTTP one */
    "gh": {"type": "http", "url": "https://api.example.com/mcp/",
           "headers": {"Authorization": "Bearer ${input:key}"}},
  },
}""")
    cfg = load(path)
    assert [(s.name, s.transport, s.json_path) for s in cfg.servers] == [
        ("py", "stdio", "$.servers.py"), ("gh", "streamable-http", "$.servers.gh")]
    assert cfg.workspace == str(tmp_path)
    assert cfg.servers[0].args == ("${workspaceFolder}/s.py",)  # kept as written


def test_a_comment_marker_inside_a_string_is_kept(tmp_path):
    path = write(tmp_path, "c.json", '{"mcpServers": {"u": {"url": "http://h/a//b/*c*/", '
                                     '"headers": {"X": "a,}"}}}}')
    s = load(path).servers[0]
    assert s.url == "http://h/a//b/*c*/" and dict(s.headers) == {"X": "a,}"}


def test_vscode_settings_json_mcp_servers(tmp_path):
    path = write(tmp_path, "settings.json", {"editor.tabSize": 2,
                                             "mcp": {"servers": {"a": {"command": "x"}}}})
    assert load(path).servers[0].json_path == "$.mcp.servers.a"


def test_names_that_are_not_identifiers_are_quoted_in_the_path(tmp_path):
    path = write(tmp_path, "c.json", {"mcpServers": {"server-everything": {"command": "x"},
                                                     "my server": {"command": 1}}})
    with pytest.raises(ConfigError) as e:
        load(path)
    assert str(e.value) == f'{path}: $.mcpServers["my server"].command: must be a string, got number'


@pytest.mark.parametrize("doc, where, problem", [
    ([], "$", "must be an object, got array"),
    ({"other": 1}, "$", 'has no "mcpServers" or "servers" object'),
    ({"mcpServers": []}, "$.mcpServers", "must be an object, got array"),
    ({"servers": {"a": "npx"}}, "$.servers.a", "must be an object, got string"),
    ({"mcpServers": {"a": {}}}, "$.mcpServers.a", 'needs "command" (stdio) or "url" (HTTP)'),
    ({"mcpServers": {"a": {"type": "stdio"}}}, "$.mcpServers.a.command", "is missing"),
    ({"mcpServers": {"a": {"command": ""}}}, "$.mcpServers.a.command", "must not be empty"),
    ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "$.mcpServers.a.args",
     "must be an array of strings, got string"),
    ({"mcpServers": {"a": {"command": "x", "args": ["y", 2]}}}, "$.mcpServers.a.args[1]",
     "must be a string, got number"),
    ({"mcpServers": {"a": {"command": "x", "env": {"PORT": 3000}}}}, "$.mcpServers.a.env.PORT",
     "must be a string, got number"),
    ({"mcpServers": {"a": {"command": "x", "env": {"A=B": "1"}}}}, '$.mcpServers.a.env["A=B"]',
     "is not a variable name (empty, or with = or NUL)"),
    ({"mcpServers": {"a": {"command": "x", "env": {"K": "a\0b"}}}}, "$.mcpServers.a.env.K",
     "contains a NUL character"),
    ({"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}, "$.mcpServers.a.env",
     "must be an object of strings, got array"),
    ({"mcpServers": {"a": {"command": "x", "cwd": True}}}, "$.mcpServers.a.cwd",
     "must be a string, got boolean"),
    ({"servers": {"a": {"type": "ws", "url": "ws://h"}}}, "$.servers.a.type",
     'unknown transport "ws" (expected stdio, http or sse)'),
    ({"servers": {"a": {"url": "ftp://h/x"}}}, "$.servers.a.url",
     "is not an http:// or https:// URL"),
    ({"servers": {"a": {"url": "http://h", "headers": {"K": None}}}}, "$.servers.a.headers.K",
     "must be a string, got null"),
    ({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}, "$.mcpServers.a.disabled",
     "must be a boolean, got string"),
])
def test_bad_entries_name_the_file_and_json_path(tmp_path, doc, where, problem):
    path = write(tmp_path, "bad.json", doc)
    with pytest.raises(ConfigError) as e:
        load(path)
    assert (e.value.file, e.value.json_path, e.value.problem) == (path, where, problem)
    assert str(e.value) == f"{path}: {where}: {problem}"


def test_invalid_json_gives_line_and_column(tmp_path):
    path = write(tmp_path, "bad.json", '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n}')
    with pytest.raises(ConfigError) as e:
        load(path)
    assert str(e.value) == f"{path}: invalid JSON at line 4 column 5"


def test_unreadable_and_non_utf8_files(tmp_path):
    missing = str(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match=r"nope\.json: cannot read: No such file or directory$"):
        load(missing)
    with pytest.raises(ConfigError, match=r": cannot read: Is a directory$"):
        load(str(tmp_path))
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"mcpServers": {"caf\xe9": {"command": "x"}}}')
    with pytest.raises(ConfigError, match=r"latin1\.json: not UTF-8 text$"):
        load(str(path))


def test_a_bom_is_skipped(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"a": {"command": "x"}}}')
    assert load(str(path)).servers[0].name == "a"


def test_messages_and_repr_never_show_env_or_header_values(tmp_path):
    path = write(tmp_path, "c.json", {"mcpServers": {
        "a": {"command": "x", "env": {"TOKEN": "sekrit-env-1"}},
        "b": {"url": "https://h/mcp?key=sekrit-url-2", "headers": {"Authorization": "sekrit-hdr-3"}},
    }})
    shown = repr(load(path))
    assert "sekrit" not in shown and "TOKEN" not in shown
    bad = write(tmp_path, "bad.json", {"servers": {"a": {"url": "sekrit-url-4"}}})
    with pytest.raises(ConfigError) as e:
        load(bad)
    assert "sekrit" not in str(e.value)


def test_resolve_fills_the_variables_each_client_knows(tmp_path):
    cfg = parse(json.dumps({"servers": {"a": {
        "command": "${workspaceFolder}/bin/srv",
        "args": ["--home", "${userHome}", "--t", "${env:TZ}", "${TZ}", "${MISSING:-fallback}"],
        "env": {"K": "${API_KEY}"}, "cwd": "sub"}}}), str(tmp_path / ".vscode" / "mcp.json"))
    live = resolve(cfg.servers[0], cfg.workspace, {"TZ": "UTC", "API_KEY": "k1"}, home="/h")
    assert live.command == f"{tmp_path}/bin/srv"
    assert live.args == ("--home", "/h", "--t", "UTC", "UTC", "fallback")
    assert dict(live.env) == {"K": "k1"} and live.cwd == os.path.join(str(tmp_path), "sub")
    assert cfg.servers[0].command == "${workspaceFolder}/bin/srv"  # the entry itself is unchanged


def test_resolve_refuses_inputs_and_unset_variables_naming_field_not_value(tmp_path):
    cfg = parse(json.dumps({"servers": {
        "gh": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
        "x": {"command": "srv", "env": {"K": "${NOT_SET_ANYWHERE}"}}}}), "mcp.json")
    with pytest.raises(UnresolvedVariable) as e:
        resolve(cfg.servers[0], ".", {})
    assert str(e.value) == "$.servers.gh.headers.Authorization: ${input:token} is asked of the user by the editor"
    with pytest.raises(UnresolvedVariable, match=r"^\$\.servers\.x\.env\.K: \$\{NOT_SET_ANYWHERE\} is not set$"):
        resolve(cfg.servers[1], ".", {})


def test_auto_paths_per_os():
    linux = auto_paths(cwd="/p", home="/home/u", platform="linux", environ={})
    assert linux == ["/p/.mcp.json", "/p/.cursor/mcp.json", "/p/.vscode/mcp.json",
                     "/home/u/.config/Claude/claude_desktop_config.json", "/home/u/.claude.json",
                     "/home/u/.cursor/mcp.json", "/home/u/.config/Code/User/mcp.json"]
    mac = auto_paths(cwd="/p", home="/Users/u", platform="darwin", environ={})
    assert "/Users/u/Library/Application Support/Claude/claude_desktop_config.json" in mac
    xdg = auto_paths(cwd="/p", home="/home/u", platform="linux", environ={"XDG_CONFIG_HOME": "/x"})
    assert "/x/Claude/claude_desktop_config.json" in xdg


def test_a_file_without_servers_is_empty_when_not_required(tmp_path):
    path = write(tmp_path, ".claude.json", {"numStartups": 3})
    assert load(path, require_servers=False).servers == ()
    with pytest.raises(ConfigError):
        load(path)


@pytest.mark.parametrize("text, at", [
    ("{}", None), ('[1, -2.5e+3, {"a": [true, false, null, "\\u00e9\\n"]}]', None),
    ("[NaN]", 1), ('{"a": Infinity}', 6), ("[1, -Infinity]", 5), ('{"a": 1,,}', 8),
    ('{"a" 1}', 5), ('{"a": tru}', 6), ('{"a":"x\n"}', 7), ('"\\q"', 2), ('"\\u12G4"', 2),
    ("[01]", 2), ("[1.]", 3), ("[-]", 2), ('{"a":1} x', 8), ("", 0), ('"open', 5),
    ("[" * 65 + "]" * 65, 64), ("[" * 64 + "]" * 64, None),
])
def test_one_strict_grammar_finds_where_json_goes_wrong(text, at):
    # Node's config.js scans with the same grammar (cli_parity.test.js).
    assert syntax_error_at(text) == at
