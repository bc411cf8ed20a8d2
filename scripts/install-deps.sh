#!/usr/bin/env bash
# Installs what building and testing mcpping needs on a fresh Debian machine,
# skipping whatever is already there. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pkg in build-essential pkg-config libuv1-dev libcjson-dev cmake valgrind clang llvm; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

PYTHON=${PYTHON:-python3}
$PYTHON -m pip install -q -r requirements-dev.txt

if command -v npm >/dev/null 2>&1 && [ -f package.json ]; then
  npm_config_nodedir=/usr npm install --no-audit --no-fund --loglevel=error
fi
