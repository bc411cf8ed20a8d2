#!/usr/bin/env bash
# `make portability`: cross-compiles the C core with `zig cc` (the ziglang
# package from PyPI) for systems this machine does not run:
#   the engine (sans-I/O, C11)       macOS x86_64, macOS arm64, Windows x86_64 (mingw)
#   the driver and runtime (libuv)   macOS x86_64, macOS arm64
# with cJSON from third_party/cjson and libuv's headers from
# scripts/libuv-source.sh (uvloop's vendored copy). Every file must compile
# with -Werror; each build's objects go into
# build/portability/<target>-<part>/libmcpping.a, which must define every
# mcpp_ function that its own objects call, so a file missing from a part
# (or a platform function missing for a system) fails too. Nothing built
# here runs: these builds are compile-checked only.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
export ZIG_GLOBAL_CACHE_DIR=$PWD/build/zig-cache ZIG_LOCAL_CACHE_DIR=$PWD/build/zig-cache
zig=("$PYTHON" -m ziglang)
NM=${NM:-llvm-nm}  # reads Mach-O for both architectures and COFF (Debian: llvm)
uv_include=$PWD/$(PYTHON="$PYTHON" ./scripts/libuv-source.sh)/include
driver_files=" csrc/src/driver/platform_linux.c csrc/src/driver/platform_darwin.c csrc/src/driver/keeper.c csrc/src/driver/proc.c csrc/src/driver/orphans.c csrc/src/driver/conn.c csrc/src/runtime/item.c csrc/src/runtime/runtime.c csrc/src/runtime/queue.c csrc/src/runtime/respawn.c csrc/src/runtime/host_mode.c csrc/src/app/wrap.c csrc/src/app/wrap_metrics.c "
engine=() driver=()
for s in $(grep -v '^#' csrc/sources.txt); do
  case "$driver_files" in *" $s "*) driver+=("$s") ;; *) engine+=("$s") ;; esac
done
flags=(-std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Werror
       -Icsrc/include -Icsrc/src -Ithird_party/cjson -I"$uv_include")

# build TARGET PART SOURCES...: objects, the archive, and its mcpp_ check.
build() {
  local target=$1 part=$2; shift 2
  local out=build/portability/$target-$part
  rm -rf "$out" && mkdir -p "$out"
  for s in "$@" third_party/cjson/cjson/cJSON.c; do
    "${zig[@]}" cc -target "$target" "${flags[@]}" -c "$s" -o "$out/$(basename "$s" .c).o"
  done
  "${zig[@]}" ar rcs "$out/libmcpping.a" "$out"/*.o
  # Mach-O prefixes C names with '_'; COFF on x86_64 does not.
  local used defined missing
  "$NM" -u "$out"/*.o >"$out/undefined.txt" 2>"$out/nm.log"
  "$NM" --defined-only "$out"/*.o >"$out/defined.txt" 2>>"$out/nm.log"
  used=$(awk '{print $NF}' "$out/undefined.txt" | sed 's/^_//' | grep '^mcpp_' | sort -u || true)
  defined=$(awk 'NF==3 {print $3}' "$out/defined.txt" | sed 's/^_//' | grep '^mcpp_' | sort -u || true)
  missing=$(comm -23 <(echo "$used") <(echo "$defined") | grep . || true)
  if [ -n "$missing" ]; then
    echo "$target $part: mcpp_ functions used but defined nowhere:" "$missing" >&2
    exit 1
  fi
  echo "ok   $target $part ($(($# + 1)) files, $(echo "$defined" | wc -l) mcpp_ symbols)"
}

for t in x86_64-macos aarch64-macos x86_64-windows-gnu; do
  build "$t" engine "${engine[@]}"
done
for t in x86_64-macos aarch64-macos; do
  build "$t" driver "${engine[@]}" "${driver[@]}"
done
echo "5 passed, 0 failed"
