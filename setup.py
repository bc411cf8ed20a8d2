"""Builds mcpping._native from the shared C sources and the module files.

The C sources come from csrc/sources.txt (shared with the Makefile and the
Node addon) so that this file never has to change when the core grows.

The extension uses CPython's limited API (3.10): one abi3 wheel serves every
CPython from 3.10 on.

Libraries: by default libuv and cJSON are the system's, found by pkg-config.
MCPPING_BUNDLED=1 builds what `make wheel` ships instead: cJSON compiled in
from third_party/cjson (Debian 12's 1.7.15) and libuv linked statically from
the position-independent archive that libuv-static.pc names (`make wheel`
builds one with scripts/build-libuv.sh and puts it first on
PKG_CONFIG_PATH), with both kept out of the extension's exported symbols. When something is missing the
build stops with one message that says what to install, per system.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
MODULE_SOURCES = [
    "python/mcpping/_module.c",
    "python/mcpping/_engine.c",
    "python/mcpping/_convert.c",
    "python/mcpping/_rules.c",
    "python/mcpping/_event.c",
    "python/mcpping/_wrap.c",
    "python/mcpping/_settings.c",
    "python/mcpping/_metrics.c",
    "python/mcpping/_app.c",
    "python/mcpping/_config.c",
    "python/mcpping/_config_run.c",
    "python/mcpping/_client.c",
    "python/mcpping/_watch.c",
]
BUNDLED_CJSON = "third_party/cjson/cjson/cJSON.c"
LIMITED_API = "0x030A0000"  # CPython 3.10, the oldest we support

INSTALL_HINT = """\
mcpping: {what} not found by pkg-config. Install the development files:
  Debian/Ubuntu:    apt-get install pkg-config libuv1-dev libcjson-dev
  Fedora:           dnf install pkgconf-pkg-config libuv-devel cjson-devel
  macOS (Homebrew): brew install pkg-config libuv cjson
  Alpine:           apk add pkgconf libuv-dev cjson-dev
or build the self-contained way (a PIC libuv.a named by libuv-static.pc,
cJSON compiled in; in a source tree `make wheel` does this for you):
  MCPPING_BUNDLED=1 pip install mcpping --no-binary mcpping
(Linux x86-64 needs none of this: `pip install mcpping` takes the wheel.)"""


def core_sources() -> list[str]:
    """Returns the C core's sources, relative to the repo root."""
    listing = ROOT / "csrc" / "sources.txt"
    return [line.strip() for line in listing.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def pkg_config(what: str, *args: str) -> list[str]:
    """Runs pkg-config ARGS; exits with the install hint naming WHAT."""
    try:
        out = subprocess.run(["pkg-config", *args], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        sys.exit(INSTALL_HINT.format(what=what))
    return shlex.split(out)


def bundled() -> bool:
    """Whether MCPPING_BUNDLED asks for the self-contained build."""
    value = os.environ.get("MCPPING_BUNDLED", "")
    if value not in ("", "0", "1"):
        sys.exit(f"mcpping: MCPPING_BUNDLED must be 0 or 1, not {value!r}")
    return value == "1"


def static_libuv() -> tuple[list[str], list[str]]:
    """Returns (cflags, link args) that link libuv's static archive."""
    what = "libuv's static library (libuv-static.pc)"
    cflags = pkg_config(what, "--cflags", "libuv-static")
    libdir = pkg_config(what, "--variable=libdir", "libuv-static")[0]
    libs = pkg_config(what, "--libs", "libuv-static")
    # libuv's own .pc says -l:libuv.a; Debian's says -luv_a.
    names = {flag: flag[3:] if flag.startswith("-l:") else f"lib{flag[2:]}.a"
             for flag in libs if flag.startswith(("-l:libuv", "-luv"))}
    archive = next((Path(libdir) / name for name in names.values()), None)
    if archive is None or not archive.is_file():
        sys.exit(INSTALL_HINT.format(what=what))
    others = [flag for flag in libs if flag not in names and not flag.startswith("-L")]
    # --exclude-libs keeps libuv's symbols local: another extension in the
    # same process (uvloop bundles its own libuv) never binds to ours.
    return cflags, [str(archive), *others, "-Wl,--exclude-libs,ALL"]


if bundled():
    uv_cflags, uv_link = static_libuv()
    extra_sources = [BUNDLED_CJSON]
    include_dirs = ["third_party/cjson"]
    cflags, link = uv_cflags, uv_link
else:
    what = "libuv and cJSON development files"
    extra_sources = []
    include_dirs = []
    cflags = pkg_config(what, "--cflags", "libuv", "libcjson")
    link = pkg_config(what, "--libs", "libuv", "libcjson")

native = Extension(
    "mcpping._native",
    sources=MODULE_SOURCES + core_sources() + extra_sources,
    include_dirs=["csrc/include", "csrc/src", *include_dirs],
    define_macros=[("_GNU_SOURCE", None), ("Py_LIMITED_API", LIMITED_API)],
    # Hidden by default: the extension exports PyInit__native and nothing else.
    # A function outside the limited API is an error, not an int-returning guess.
    extra_compile_args=["-std=c11", "-Wno-unused-parameter", "-fvisibility=hidden",
                        "-Werror=implicit-function-declaration", *cflags],
    extra_link_args=link,
    depends=["python/mcpping/_native.h", "csrc/include/mcpping.h", "csrc/include/mcpping/config.h"],
    py_limited_api=True,
)



class BuildExt(build_ext):
    """Deletes other builds of the same extension next to this one first: a
    version-tagged _native.cpython-3XX-*.so left from before the abi3 switch
    would be packed beside _native.abi3.so, and Python loads it first."""

    def build_extension(self, ext: Extension) -> None:
        target = Path(self.get_ext_fullpath(ext.name))
        stem = ext.name.rsplit(".", 1)[-1]
        for old in target.parent.glob(stem + ".*.so"):
            if old != target:
                old.unlink()
        super().build_extension(ext)


options = {"bdist_wheel": {"py_limited_api": "cp310"}}
if bundled():
    # Its own object directory: objects built against the system's headers
    # are never reused for the self-contained build, nor the other way round.
    options["build"] = {"build_base": "build/bundled"}
setup(ext_modules=[native], cmdclass={"build_ext": BuildExt}, options=options)
