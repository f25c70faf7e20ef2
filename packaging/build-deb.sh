#!/bin/sh
# Builds the Debian package in one command: a Release build with the /usr prefix (so the
# analyzer's default policy is the installed /usr/share/mcpwitness/policies/default.yaml), no
# tests, then CPack's DEB generator (dependencies from dpkg-shlibdeps). Prints the path of the
# .deb on its last line. Needs what packaging/install-deps.sh installs.
#
#   sh packaging/build-deb.sh [BUILD_DIR]      default BUILD_DIR: build-deb next to the sources
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$root/build-deb}"
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	-DMW_TESTS=OFF -DMW_SANITIZE=OFF >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
rm -rf "$build/deb"
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(find "$build/deb" -maxdepth 1 -name 'mcpwitness_*.deb' | head -n 1)
if [ -z "$deb" ]; then
	echo "build-deb: cpack made no package" >&2
	exit 1
fi
echo "$deb"
