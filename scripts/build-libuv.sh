#!/usr/bin/env bash
# Builds a static, position-independent libuv (Debian's libuv_a.a is not
# PIC, so it cannot go into a Python extension) from scripts/libuv-source.sh's
# source into build/libuv/prefix, with a libuv-static.pc that setup.py's
# MCPPING_BUNDLED=1 build finds through PKG_CONFIG_PATH. Prints the prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(./scripts/libuv-source.sh)
prefix=$PWD/build/libuv/prefix
if [ ! -f "$prefix/lib/libuv.a" ]; then
  cmake -S "$src" -B build/libuv/obj -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_C_VISIBILITY_PRESET=hidden \
    -DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_SHARED=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >&2
  cmake --build build/libuv/obj -j2 >&2
  cmake --install build/libuv/obj >&2
fi
echo "$prefix"
