"""`mcpping --config FILE --wrap|--unwrap [--write]`: every stdio server of
every config format behind the absolute path of this `mcpping wrap --name
ENTRY`, URL servers untouched, never wrapped twice, undone exactly, written
only after a backup and only if every wrapped entry starts under a desktop
client's minimal environment; and a wrapped config still works (the --config
check pings its servers through the wrap, PATH=/usr/bin:/bin)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mcpping import config
from conftest import PY, peer

CLI = [PY, "-m", "mcpping"]
#: What a config written by CLI runs: this interpreter, by absolute path.
LAUNCHER = (os.path.abspath(PY), "-m", "mcpping")
MINIMAL_ENV = {"PATH": "/usr/bin:/bin"}
ECHO = peer("echo")

FORMATS = {
    # Claude Desktop: claude_desktop_config.json
    "claude_desktop_config.json": json.dumps({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "echo": {"command": ECHO[0], "args": ECHO[1:]}}}, indent=2),
    # Claude Code: .mcp.json with types
    ".mcp.json": json.dumps({"mcpServers": {
        "echo": {"type": "stdio", "command": ECHO[0], "args": ECHO[1:]},
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"A": "b"}}}}),
    # Cursor: url entries without a type
    ".cursor/mcp.json": json.dumps({"mcpServers": {
        "web": {"url": "https://example.com/mcp"},
        "bare": {"command": "server-without-args"}}}),
    # VS Code: .vscode/mcp.json, JSONC
    ".vscode/mcp.json": """{
  // comments and trailing commas, as VS Code allows
  "servers": {
    "echo": {"type": "stdio", "command": "%s", "args": ["%s"],},
    "sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
  },
}""" % (ECHO[0], ECHO[1]),
    # VS Code user settings.json
    "settings.json": json.dumps({"editor.fontSize": 12, "mcp": {"servers": {
        "echo": {"command": ECHO[0], "args": ECHO[1:]}}}}),
}


def write(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FORMATS[name], encoding="utf-8")
    return path


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, env=env)


def entries(text: str, name: str) -> dict[str, config.Server]:
    return {s.name: s for s in config.parse(text, name).servers}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_wrap_prints_every_stdio_server_wrapped_once_and_unwrap_undoes_it(tmp_path, name):
    path = write(tmp_path, name)
    before = entries(FORMATS[name], name)
    r = run("--config", str(path), "--wrap")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    after = entries(r.stdout, name)
    assert list(after) == list(before)
    for key, old in before.items():
        new = after[key]
        if old.transport == "stdio":
            assert (new.command, new.args) == (
                LAUNCHER[0], (*LAUNCHER[1:], "wrap", "--name", key, "--", old.command, *old.args))
            assert (new.env, new.cwd) == (old.env, old.cwd)
        else:
            assert new == old
    assert path.read_text() == FORMATS[name]  # printing edits nothing
    # Wrapping the wrapped config changes nothing; unwrapping restores it.
    wrapped = tmp_path / f"wrapped-{path.name}"
    wrapped.write_text(r.stdout)
    again = run("--config", str(wrapped), "--wrap")
    assert again.stdout == r.stdout
    undone = run("--config", str(wrapped), "--unwrap")
    assert undone.returncode == 0
    assert entries(undone.stdout, name) == entries(FORMATS[name], name)
    assert json.loads(undone.stdout) == json.loads(config._strip_jsonc(FORMATS[name]))


def test_write_keeps_a_backup_and_the_wrapped_config_still_works(tmp_path):
    path = write(tmp_path, ".mcp.json")
    r = run("--config", str(path), "--wrap", "--write")
    assert r.returncode == 0
    assert r.stdout == ""
    assert r.stderr == (f"mcpping: wrapped 1 server in {path}; the original is in {path}.bak\n")
    assert Path(f"{path}.bak").read_text() == FORMATS[".mcp.json"]
    assert entries(path.read_text(), ".mcp.json")["echo"].command == LAUNCHER[0]
    # Nothing left to wrap: the file and its backup stay as they are.
    r = run("--config", str(path), "--wrap", "--write")
    assert "no server to wrap; left as it is" in r.stderr
    assert not Path(f"{path}.bak.1").exists()
    # The wrapped config's stdio server answers the --config check's pings
    # through mcpping wrap, started as a desktop client starts it (env -i).
    check = run("--config", str(path), "--json", "-c", "2", "-w", "20", env=MINIMAL_ENV)
    rows = [json.loads(x) for x in check.stdout.splitlines()]
    echo = [x for x in rows if x["event"] == "server" and x["name"] == "echo"]
    assert len(echo) == 1, check.stdout + check.stderr
    assert (echo[0]["status"], echo[0]["sent"], echo[0]["received"]) == ("ok", 2, 2)
    # --unwrap --write: a second backup, and the original entry back.
    r = run("--config", str(path), "--unwrap", "--write")
    assert r.returncode == 0 and f"{path}.bak.1" in r.stderr
    assert entries(path.read_text(), ".mcp.json") == entries(FORMATS[".mcp.json"], ".mcp.json")


def test_comments_are_reported_lost_when_writing(tmp_path):
    path = write(tmp_path, ".vscode/mcp.json")
    r = run("--config", str(path), "--wrap", "--write")
    assert r.returncode == 0
    assert "(its comments and trailing commas were not kept)" in r.stderr
    assert Path(f"{path}.bak").read_text() == FORMATS[".vscode/mcp.json"]


@pytest.mark.parametrize("args, message", [
    (["--wrap"], "edit one --config FILE"),
    (["--config", "auto", "--wrap"], "edit one --config FILE"),
    (["--config", "a.json", "--wrap", "--unwrap"], "give one of --wrap and --unwrap"),
    (["--config", "a.json", "--wrap", "-c", "3"], "-c does not go with --wrap/--unwrap"),
    (["--config", "/nonexistent.json", "--wrap"], "/nonexistent.json: cannot read"),
])
def test_bad_usage_exits_2_with_one_line(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert r.stdout == ""


def test_write_refuses_a_config_whose_wrapped_entry_would_not_start(tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    text = json.dumps({"mcpServers": {"echo": {"command": ECHO[0], "args": ECHO[1:]},
                                      "ghost": {"command": "/nonexistent/mcp-server"}}})
    path.write_text(text)
    r = run("--config", str(path), "--wrap", "--write")
    assert r.returncode == 3, r.stderr
    assert r.stderr.count("\n") == 1 and "server 'ghost' would not start" in r.stderr, r.stderr
    # Why, in wrap's own words from the server's stderr: the OS error.
    assert "cannot start /nonexistent/mcp-server: no such file or directory (ENOENT)" in r.stderr
    assert path.read_text() == text  # nothing written, no backup made
    assert not Path(f"{path}.bak").exists()


def test_command_overrides_the_launcher_and_a_missing_one_is_refused(tmp_path):
    path = write(tmp_path, ".mcp.json")
    r = run("--config", str(path), "--wrap", "--command", "/opt/bin/mcpping")
    assert r.returncode == 0, r.stderr
    echo = entries(r.stdout, ".mcp.json")["echo"]
    assert (echo.command, echo.args[:4]) == ("/opt/bin/mcpping", ("wrap", "--name", "echo", "--"))
    r = run("--config", str(path), "--wrap", "--write", "--command", "/nonexistent/mcpping")
    assert r.returncode == 3 and "server 'echo' would not start" in r.stderr, r.stderr
    assert path.read_text() == FORMATS[".mcp.json"]
