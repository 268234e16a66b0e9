#!/usr/bin/env bash
# build-libdisni.sh SRC OUT: builds DiSNI's native library (tag v2.1) from a clone of DiSNI's sources
# (SRC: a git directory or an unpacked source tree) into OUT/libdisni.so, for the disni provider's
# runs in the guest. Needs libibverbs-dev librdmacm-dev autoconf automake libtool and a JDK.
# Never commit the result or the sources.
set -euo pipefail
src=$1 out=$2
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" archive v2.1 | tar -x -C "$tree"
else
  cp -r "$src/." "$tree/"
fi
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
cd "$tree/libdisni"
./autoprepare.sh
./configure --with-jdk="$jdk"
make -j"$(nproc)"
mkdir -p "$out"
cp -L src/.libs/libdisni.so "$out/libdisni.so"
echo "libdisni built: $out/libdisni.so"
