#!/usr/bin/env bash
# Re-derives third_party/cjson/cjson/cJSON.{c,h} from Debian's source package
# (pinned below) and checks them against the committed copies. Uses a private
# apt source list and state directory under build/, so the system's apt
# configuration is untouched. Needs apt-get and dpkg-source (dpkg-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.7.15-1+deb12u4
work=build/cjson-src
rm -rf "$work" && mkdir -p "$work/lists/partial"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$PWD/$work/sources.list" -o Dir::Etc::SourceParts=-
          -o "Dir::State::Lists=$PWD/$work/lists")
apt-get -qq "${apt_opts[@]}" update
(cd "$work" && apt-get -qq "${apt_opts[@]}" source --download-only "cjson=$VERSION" 2>/dev/null)
# apt checked the files against the signed Sources index (the .dsc signature
# itself needs debian-keyring, which this does not require); dpkg-source
# applies debian/patches.
(cd "$work" && dpkg-source -q --no-check -x cjson_*.dsc tree)
for f in cJSON.c cJSON.h; do
  cmp "$work/tree/$f" "third_party/cjson/cjson/$f"
done
echo "third_party/cjson matches Debian's cjson $VERSION"
