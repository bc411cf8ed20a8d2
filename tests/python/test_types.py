"""The package ships py.typed, so a user's type checker reads its
annotations (and _native.pyi's) as promises: mypy must find none broken."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import PY, ROOT


def test_mypy_finds_no_broken_annotation_in_the_package(tmp_path: Path) -> None:
    r = subprocess.run([PY, "-m", "mypy", "--cache-dir", str(tmp_path), "--no-error-summary",
                        str(ROOT / "python" / "mcpping")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
