"""docs/python.md stays true: every ```python run block runs and exits 0.

Each runnable block is written to a file and run with this interpreter in a
subprocess (its own process group, bounded), against the bundled demo
server. The blocks assert what the text around them says, so a renamed
parameter, a wrong default or a changed exception fails here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"
TIMEOUT = 15.0   # hard cap per block; they take well under 3 s
FENCE = re.compile(r"^```(.*)$")


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number, info string, body) of every fenced block; an unclosed fence raises."""
    out: list[tuple[int, str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i + 1, m.group(1).strip(), []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"unclosed fence at line {start}")
        out.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return out


def runnable(text: str, lang: str) -> list[tuple[int, str]]:
    """The blocks whose info string is exactly ``<lang> run``."""
    return [(line, body) for line, info, body in fenced_blocks(text)
            if info.split() == [lang, "run"]]


def run_snippet(code: str, tmp: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs one snippet as a script; kills its process group on a hang."""
    script = tmp / "snippet.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"snippet did not finish in {TIMEOUT} s\n{code}\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(script, proc.returncode, out, err), time.monotonic() - t0


BLOCKS = runnable(DOC.read_text(), "python")


def test_doc_has_its_runnable_blocks() -> None:
    # Losing the markers must not make the doc silently untested.
    assert len(BLOCKS) >= 9, [line for line, _ in BLOCKS]
    plain = [line for line, info, _ in fenced_blocks(DOC.read_text()) if info == "python"]
    assert plain == [], f"```python blocks not marked run (lines {plain}): mark them or use ```text"


@pytest.mark.parametrize("line,code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_snippet_runs(line: int, code: str, tmp_path: Path) -> None:
    r, elapsed = run_snippet(code, tmp_path)
    assert r.returncode == 0, (f"docs/python.md line {line} exited {r.returncode}\n"
                               f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")


def test_a_broken_snippet_fails(tmp_path: Path) -> None:
    # The runner's verdict can fail: a wrong name in a real block exits non-zero.
    line, code = BLOCKS[0]
    assert "mcpping.connect(" in code
    r, _ = run_snippet(code.replace("mcpping.connect(", "mcpping.conect("), tmp_path)
    assert r.returncode != 0 and "AttributeError" in r.stderr
    # So does a snippet whose own assertion is false.
    r, _ = run_snippet("import mcpping\nassert mcpping.KeepAlive().interval == 10\n", tmp_path)
    assert r.returncode != 0 and "AssertionError" in r.stderr


def test_fence_parser() -> None:
    text = "a\n```python run\nx = 1\n```\n```python\ny\n```\n```js run\nz\n```\n"
    assert runnable(text, "python") == [(2, "x = 1\n")]
    assert runnable(text, "js") == [(8, "z\n")]
    with pytest.raises(ValueError):
        fenced_blocks("```python run\nx\n")


@pytest.mark.parametrize("cls", ["KeepAlive", "Reconnect"])
def test_a_policy_line_says_the_defaults_it_has(cls: str) -> None:
    """The KeepAlive(...) and Reconnect(...) lines in python.md show every
    field with the default the dataclass has (the C settings table's policy)."""
    import ast
    import dataclasses

    import mcpping

    text = DOC.read_text()
    start = text.index(f"mcpping.{cls}(")
    call = ast.parse(text[start:text.index(")", start) + 1].replace("mcpping.", ""), mode="eval").body
    assert isinstance(call, ast.Call)
    shown = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    assert shown == {f.name: f.default for f in dataclasses.fields(getattr(mcpping, cls))}


@pytest.mark.parametrize("name", ["mcpping.connect", "mcpping.http.connect"])
def test_a_documented_signature_is_the_functions(name: str) -> None:
    """The signature blocks list every parameter with the default the
    function has (http.connect's lacked ``headers``)."""
    import ast
    import inspect

    import mcpping
    import mcpping.http

    text = DOC.read_text()
    block = text[text.index(f"```\n{name}(") + 4:]
    block = block[:block.index("\n) ->")]
    documented = []
    for line in block.splitlines()[1:]:
        line = line.split("#")[0].strip().rstrip(",")
        if line in ("", "*"):
            continue
        param = line.split(":")[0].split("=")[0].strip().rstrip(", *")
        default = line.rsplit("=", 1)[1].strip() if "=" in line else None
        documented.append((param, default))
    fn = mcpping.connect if name == "mcpping.connect" else mcpping.http.connect
    real = inspect.signature(fn).parameters
    assert sorted(p for p, _ in documented) == sorted(real)
    for param, default in documented:
        if default is None:
            assert real[param].default is inspect.Parameter.empty, param
        elif default == "KeepAlive()":
            assert real[param].default == mcpping.KeepAlive(), param
        else:
            assert real[param].default == ast.literal_eval(default), param
