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


def test_the_native_stub_names_what_the_module_has():
    """_native.pyi is what a type checker reads for the extension: every
    function, class and method it offers is declared there, and nothing
    that is gone (the stub had drifted: RttStats, arguments_table,
    Engine.record_reconnect were missing)."""
    import ast

    from mcpping import _native

    pkg = Path(mcpping.__file__).parent
    tree = ast.parse((pkg / "_native.pyi").read_text())
    declared: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = node
        elif isinstance(node, ast.Assign):
            declared.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    offered = {name for name in dir(_native) if not name.startswith("__")}
    assert sorted(offered - set(declared)) == []
    aliases = {name for name, node in declared.items() if isinstance(node, ast.Assign)}
    assert sorted(set(declared) - offered - aliases) == []
    for name, node in declared.items():
        if not isinstance(node, ast.ClassDef) or issubclass(getattr(_native, name), BaseException):
            continue  # an exception's methods are BaseException's
        methods = {m.name for m in node.body if isinstance(m, ast.FunctionDef)} - {"__init__"}
        methods |= {m.target.id for m in node.body
                    if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)}
        real = {m for m in dir(getattr(_native, name)) if not m.startswith("_")}
        assert (name, sorted(real - methods)) == (name, [])
        assert (name, sorted(methods - real)) == (name, [])
