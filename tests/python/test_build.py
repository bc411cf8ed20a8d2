"""Packaging: a missing libuv/cJSON is one actionable line; typing files ship."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import mcpping
from conftest import PY, ROOT


def test_missing_libraries_fail_with_one_actionable_line():
    env = {**os.environ, "PKG_CONFIG_LIBDIR": "/nonexistent", "PKG_CONFIG_PATH": ""}
    r = subprocess.run([PY, "setup.py", "--name"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "libuv1-dev libcjson-dev" in lines[0]


def test_installed_package_is_typed():
    pkg = Path(mcpping.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "_native.pyi").exists()
    for name in mcpping.__all__:
        obj = getattr(mcpping, name)
        assert name == "__version__" or obj.__doc__, name
