"""Builds mcpping._native from the shared C sources and the module files.

The C sources come from csrc/sources.txt (shared with the Makefile and the
Node addon) so that this file never has to change when the core grows.
libuv and cJSON are found with pkg-config; when they are missing the build
stops with one line that says what to install.
"""

import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
MODULE_SOURCES = [
    "python/mcpping/_module.c",
    "python/mcpping/_engine.c",
    "python/mcpping/_convert.c",
    "python/mcpping/_rules.c",
    "python/mcpping/_wrap.c",
]


def core_sources() -> list[str]:
    """Returns the C core's sources, relative to the repo root."""
    listing = ROOT / "csrc" / "sources.txt"
    return [line.strip() for line in listing.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def pkg_config(*args: str) -> list[str]:
    """Runs pkg-config for libuv and cJSON, or exits with an actionable line."""
    try:
        out = subprocess.run(["pkg-config", *args, "libuv", "libcjson"],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        sys.exit("mcpping: libuv and cJSON development files not found by pkg-config; "
                 "install them (Debian/Ubuntu: apt-get install pkg-config libuv1-dev libcjson-dev)")
    return shlex.split(out)


cflags = pkg_config("--cflags")
libs = pkg_config("--libs")

native = Extension(
    "mcpping._native",
    sources=MODULE_SOURCES + core_sources(),
    include_dirs=["csrc/include", "csrc/src"],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-Wno-unused-parameter"] + cflags,
    extra_link_args=libs,
    depends=["python/mcpping/_native.h", "csrc/include/mcpping.h"],
)

setup(ext_modules=[native])
