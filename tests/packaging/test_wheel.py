"""The wheel `make wheel` builds installs and runs where nothing else is.

Run by `make test-packaging` (after `make wheel`). What it proves:
- the extension needs only libc/libm/ld.so: libuv and cJSON are inside it,
  it carries no RUNPATH, and it exports PyInit__native alone;
- the wheel is abi3 for CPython 3.10+ with a manylinux tag;
- installed into a fresh venv (no index, no build), `mcpping --demo` runs on
  every CPython 3.10+ on this machine in a mount namespace where the system's
  libuv and libcjson are replaced by empty files and the compilers' files are
  gone, with a PATH of the venv alone. The namespace is checked first: in it
  the system libuv cannot be loaded and gcc cannot compile, so a pass cannot
  come from a copy that was merely not looked for.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELS = sorted((ROOT / "build" / "wheel").glob("mcpping-*.whl"))
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}
SYSTEM_LIBDIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/usr/local/lib"]


@pytest.fixture(scope="module")
def wheel() -> Path:
    assert len(WHEELS) == 1, f"expected one wheel in build/wheel (run `make wheel`), found {WHEELS}"
    return WHEELS[0]


@pytest.fixture(scope="module")
def extension(wheel: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith("mcpping/_native") and n.endswith(".so")]
        assert names == ["mcpping/_native.abi3.so"], names
        z.extract(names[0], out)
    return out / names[0]


def cpythons() -> list[str]:
    """Every CPython >= 3.10 on this machine (PATH and pyenv), this one first."""
    found = {sys.executable: sys.version_info[:2]}
    candidates = [shutil.which(f"python3.{minor}") for minor in range(10, 20)]
    candidates += glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    for exe in filter(None, candidates):
        out = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            version = tuple(map(int, out.stdout.split()))
            if version >= (3, 10) and version not in found.values():
                found[exe] = version
    return list(found)


def test_wheel_is_abi3_manylinux(wheel: Path):
    assert re.fullmatch(r"mcpping-[\d.]+-cp310-abi3-manylinux_2_\d+_x86_64\.whl", wheel.name), wheel.name


def test_extension_needs_only_libc(extension: Path):
    dyn = subprocess.run(["readelf", "-d", str(extension)], check=True,
                         capture_output=True, text=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn))
    assert needed <= ALLOWED_NEEDED, f"extra dynamic dependencies: {needed - ALLOWED_NEEDED}"
    assert "RPATH" not in dyn and "RUNPATH" not in dyn, dyn


def test_extension_exports_only_its_init(extension: Path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(extension)], check=True,
                         capture_output=True, text=True).stdout
    symbols = {line.split()[-1] for line in out.splitlines() if line.strip()}
    # Exported uv_* or cJSON_* would bind to another extension's copies.
    assert symbols == {"PyInit__native"}, sorted(symbols)[:20]


def system_copies() -> list[str]:
    """The real files behind the system's libuv and libcjson."""
    files = set()
    for d in SYSTEM_LIBDIRS:
        for pattern in ("libuv.so*", "libuv_a.a", "libcjson.so*"):
            files.update(os.path.realpath(f) for f in glob.glob(os.path.join(d, pattern)))
    return sorted(files)


# Runs as root inside `unshare --mount`: hides the libraries and the
# compilers' files, checks that they are hidden, then runs the demo.
HIDDEN_RUN = r"""
set -eu
for f in $HIDE_FILES; do mount --bind /dev/null "$f"; done
for d in /usr/lib/gcc /usr/lib/llvm-*; do [ -d "$d" ] && mount -t tmpfs none "$d"; done
if "$VENV_PY" -c 'import ctypes; ctypes.CDLL("libuv.so.1")' 2>/dev/null; then
  echo "CONTROL FAILED: system libuv still loads"; exit 90; fi
if "$VENV_PY" -c 'import ctypes; ctypes.CDLL("libcjson.so.1")' 2>/dev/null; then
  echo "CONTROL FAILED: system libcjson still loads"; exit 90; fi
if echo 'int main(void){return 0;}' | /usr/bin/gcc -x c -o /dev/null - 2>/dev/null; then
  echo "CONTROL FAILED: gcc still compiles"; exit 90; fi
exec env -i PATH="$VENV_BIN" HOME="$HOME_DIR" "$VENV_PY" -c '
import shutil, sys, mcpping._native as n
assert n.__file__.endswith("_native.abi3.so") and n.__file__.startswith(sys.prefix), n.__file__
missing = [c for c in ("cc", "gcc", "clang", "pkg-config") if shutil.which(c)]
assert not missing, f"on PATH: {missing}"
from mcpping.cli import main
sys.exit(main(["--demo", "-c", "3", "-i", "0.2"]))
'
"""


@pytest.mark.parametrize("python", cpythons())
def test_demo_runs_without_system_libs_or_compiler(wheel: Path, python: str, tmp_path: Path):
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail("needs root and unshare(1) to hide the system libraries in a mount namespace")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--disable-pip-version-check", str(wheel)], check=True)
    hide = system_copies()
    assert any("libuv.so" in f for f in hide) and any("libcjson.so" in f for f in hide), \
        f"the system copies to hide are not where expected: {hide}"
    env = {"PATH": os.environ["PATH"], "HIDE_FILES": " ".join(hide), "VENV_PY": str(py),
           "VENV_BIN": str(venv / "bin"), "HOME_DIR": str(tmp_path)}
    run = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDDEN_RUN],
                         env=env, capture_output=True, text=True, timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "3 sent, 3 received, 0% loss" in out, out
    assert re.search(r"rtt min/avg/max/mdev = [\d.]+/[\d.]+/[\d.]+/[\d.]+ ms", out), out
