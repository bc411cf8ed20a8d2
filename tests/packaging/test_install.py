"""`make install PREFIX=...` gives C users a shared library with a SONAME
that exports exactly the functions mcpping.h declares, a static library,
the header and a pkg-config file, and a program builds and runs against it.
Run by `make test-packaging`.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def header_functions() -> set[str]:
    """Every function the public header declares (after the preprocessor)."""
    text = subprocess.run(["cc", "-E", "-P", "-Icsrc/include", "csrc/include/mcpping.h"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout
    return set(re.findall(r"\b(mcpp_[a-z0-9_]+)\s*\(", text))


def map_symbols() -> set[str]:
    text = (ROOT / "csrc" / "libmcpping.map").read_text()
    body = text[text.index("global:") + 7:text.index("local:")]
    return set(re.findall(r"\b(mcpp_[a-z0-9_]+);", body))


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prefix")
    run = subprocess.run(["make", "-s", "install", f"PREFIX={out}"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_the_symbol_list_is_the_header(prefix: Path):
    assert map_symbols() == header_functions()


def test_installs_library_header_and_pkg_config(prefix: Path):
    lib = prefix / "lib"
    assert (prefix / "include" / "mcpping.h").read_bytes() == (ROOT / "csrc/include/mcpping.h").read_bytes()
    assert os.readlink(lib / "libmcpping.so") == "libmcpping.so.0"
    assert os.readlink(lib / "libmcpping.so.0") == "libmcpping.so.0.1.0"
    assert (lib / "libmcpping.a").is_file() and (lib / "pkgconfig" / "mcpping.pc").is_file()
    dyn = subprocess.run(["readelf", "-d", str(lib / "libmcpping.so")], check=True,
                         capture_output=True, text=True).stdout
    assert "Library soname: [libmcpping.so.0]" in dyn, dyn


def test_exports_only_the_public_functions(prefix: Path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(prefix / "lib" / "libmcpping.so")],
                         check=True, capture_output=True, text=True).stdout
    # nm -D prints versioned names: mcpp_engine_new@@MCPPING_0.
    rows = [line.split() for line in out.splitlines() if line.strip()]
    functions = {r[-1].split("@")[0] for r in rows if r[-2] == "T"}
    others = {r[-1].split("@")[0] for r in rows if r[-2] != "T"}
    assert functions == header_functions()
    # Only the version node besides: no mcpp__ internals, no test hooks, no data.
    assert others == {"MCPPING_0"}, others


def test_no_test_hooks_in_the_shipped_libraries(prefix: Path):
    out = subprocess.run(["nm", str(prefix / "lib" / "libmcpping.a")], check=True,
                         capture_output=True, text=True).stdout
    assert "mcpp__proc_force_backoff" not in out and "mcpp__runtime_loop_close_rc" not in out


def test_a_program_builds_with_pkg_config_and_runs(prefix: Path, tmp_path: Path):
    env = {**os.environ, "PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")}
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "mcpping"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    exe = tmp_path / "c_ping"
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", str(ROOT / "examples" / "c_ping.c"), *flags,
                    f"-Wl,-rpath,{prefix / 'lib'}", "-o", str(exe)], check=True)
    dyn = subprocess.run(["readelf", "-d", str(exe)], check=True, capture_output=True, text=True).stdout
    assert "[libmcpping.so.0]" in dyn, dyn
    # The demo server is the installed mcpping package's (make test-python
    # installs it into this interpreter first).
    run = subprocess.run([str(exe), "3", sys.executable, "-m", "mcpping.demo"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 pings sent, 3 pongs received" in run.stdout, run.stdout
