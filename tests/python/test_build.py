"""Packaging: a missing libuv/cJSON says what to install where; typing files ship."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import mcpping
from conftest import PY, ROOT


def test_missing_libraries_say_what_to_install_per_system():
    env = {**os.environ, "PKG_CONFIG_LIBDIR": "/nonexistent", "PKG_CONFIG_PATH": ""}
    r = subprocess.run([PY, "setup.py", "--name"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    # The first line says what is missing; one line per system says what to
    # install (issue 12), and the last ones name the bundled switch.
    assert lines[0].startswith("mcpping: libuv and cJSON development files not found by pkg-config")
    for system, packages in [("Debian/Ubuntu:", "libuv1-dev libcjson-dev"),
                             ("Fedora:", "libuv-devel cjson-devel"),
                             ("macOS (Homebrew):", "brew install pkg-config libuv cjson"),
                             ("Alpine:", "libuv-dev cjson-dev")]:
        assert any(line.strip().startswith(system) and packages in line for line in lines), r.stderr
    assert "MCPPING_BUNDLED=1" in r.stderr


def test_installed_package_is_typed():
    pkg = Path(mcpping.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "_native.pyi").exists()
    for name in mcpping.__all__:
        obj = getattr(mcpping, name)
        assert name == "__version__" or obj.__doc__, name
