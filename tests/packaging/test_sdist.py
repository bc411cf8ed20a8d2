"""`python -m build --sdist` gives an sdist that builds with the Debian
packages, and whose error without them says what to install where.

Run by `make test-packaging`. Both builds use the running interpreter's
setuptools (no build isolation, so no index is needed).
"""

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(ROOT)],
                   check=True, capture_output=True)
    (found,) = out.glob("mcpping-*.tar.gz")
    return found


def build_wheel(sdist: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                           "--disable-pip-version-check", "-w", str(out), str(sdist)],
                          capture_output=True, text=True, env={**os.environ, **env})


def test_sdist_carries_every_source(sdist: Path):
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    core = (ROOT / "csrc" / "sources.txt").read_text().split()
    # Every header too: the layers' private ones and the public sub-headers.
    headers = [str(h.relative_to(ROOT)) for h in sorted((ROOT / "csrc").rglob("*.h"))]
    missing = [n for n in ["setup.py", "csrc/sources.txt", "csrc/include/mcpping.h",
                           "python/mcpping/_native.h", "third_party/cjson/cjson/cJSON.c",
                           "third_party/cjson/LICENSE", *core, *headers] if n not in names]
    assert not missing, missing


def test_sdist_builds_with_the_system_libraries(sdist: Path, tmp_path: Path):
    run = build_wheel(sdist, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    (wheel,) = tmp_path.glob("mcpping-*-cp310-abi3-linux_x86_64.whl")
    with zipfile.ZipFile(wheel) as z:
        z.extract("mcpping/_native.abi3.so", tmp_path)
    dyn = subprocess.run(["readelf", "-d", str(tmp_path / "mcpping/_native.abi3.so")],
                         check=True, capture_output=True, text=True).stdout
    # A source build prefers the system's shared libraries.
    assert "libuv.so.1" in dyn and "libcjson.so.1" in dyn, dyn


def test_missing_libraries_say_what_to_install(sdist: Path, tmp_path: Path):
    # An empty pkg-config search path: as on a machine without the -dev packages.
    run = build_wheel(sdist, tmp_path, PKG_CONFIG_LIBDIR=str(tmp_path), PKG_CONFIG_PATH="")
    out = run.stdout + run.stderr
    assert run.returncode != 0
    for line in ["Debian/Ubuntu:    apt-get install pkg-config libuv1-dev libcjson-dev",
                 "Fedora:           dnf install pkgconf-pkg-config libuv-devel cjson-devel",
                 "macOS (Homebrew): brew install pkg-config libuv cjson",
                 "Alpine:           apk add pkgconf libuv-dev cjson-dev",
                 "MCPPING_BUNDLED=1"]:
        assert line in out, out


def test_bundled_switch_rejects_a_bad_value(sdist: Path, tmp_path: Path):
    run = build_wheel(sdist, tmp_path, MCPPING_BUNDLED="yes")
    assert run.returncode != 0
    assert "MCPPING_BUNDLED must be 0 or 1, not 'yes'" in run.stdout + run.stderr
