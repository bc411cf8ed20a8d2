"""README.md's "With your framework" snippets run, each with the real framework.

A ```python run block runs with this interpreter (mcp 2.x); a
```python run mcp1 block with build/venv-mcp1's (mcp 1.x, what
langchain-mcp-adapters pins). Each runs in a fresh directory, in its own
process group, bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from frameworks import MCP1_PYTHON
from test_docs import fenced_blocks

README = ROOT / "README.md"
TIMEOUT = 30.0
INTERPRETERS = {("python", "run"): Path(sys.executable), ("python", "run", "mcp1"): MCP1_PYTHON}
BLOCKS = [(line, tuple(info.split()), body) for line, info, body in fenced_blocks(README.read_text())
          if tuple(info.split()) in INTERPRETERS]


def section(line: int) -> str:
    """The README heading a line falls under."""
    heading = ""
    for i, text in enumerate(README.read_text().splitlines(), 1):
        if i > line:
            break
        if text.startswith("## "):
            heading = text[3:]
    return heading


def test_every_framework_has_its_runnable_snippet():
    bodies = "\n".join(body for _, _, body in BLOCKS)
    for framework in ("agents.mcp", "langchain_mcp_adapters", "fastmcp", "pydantic_ai"):
        assert framework in bodies, framework
    assert {section(line) for line, _, _ in BLOCKS} == {"With your framework"}


@pytest.mark.parametrize("line,info,code", BLOCKS, ids=[f"line{b[0]}" for b in BLOCKS])
def test_snippet_runs(line: int, info: tuple[str, ...], code: str, tmp_path: Path) -> None:
    python = INTERPRETERS[info]
    if not python.exists():
        pytest.fail(f"{python} is missing: `make test-python` builds it")
    script = tmp_path / "snippet.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(python), str(script)], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"README line {line} did not finish in {TIMEOUT} s\nstdout:\n{out}\nstderr:\n{err}")
    assert proc.returncode == 0, f"README line {line} exited {proc.returncode}\n{out}\n{err}"
    # Every snippet prints what the tool call returned: the time in UTC.
    assert "UTC" in out, out
