#!/usr/bin/env bash
# Unpacks libuv's source into build/libuv-src from the copy vendored in
# uvloop's sdist on PyPI (pinned by version and hash below), so the wheel and
# the cross-compiled builds get libuv from a registry, never from a download
# of its own. Prints the directory. PYTHON (default python3) runs pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
UVLOOP=0.23.0  # vendors libuv 1.52.1
SHA256=28d160f51ab4da3b187063652e643dea6831072add4adc1e6d62afbe73b6be27
src=build/libuv-src
if [ ! -f "$src/include/uv/version.h" ]; then
  mkdir -p build/dl
  echo "uvloop==$UVLOOP --hash=sha256:$SHA256" >build/dl/uvloop.txt
  "$PYTHON" -m pip download -q --no-binary :all: --no-deps --require-hashes \
    -r build/dl/uvloop.txt -d build/dl >&2
  rm -rf "$src" build/dl/uvloop-$UVLOOP
  tar -xzf "build/dl/uvloop-$UVLOOP.tar.gz" -C build/dl "uvloop-$UVLOOP/vendor/libuv"
  mv "build/dl/uvloop-$UVLOOP/vendor/libuv" "$src"
fi
echo "$src"
