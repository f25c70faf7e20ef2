#!/bin/sh
# Builds the Debian package in one command: a Release build with the /usr prefix (so the
# analyzer's default policy is the installed /usr/share/mcpwitness/policies/default.yaml), no
# tests, then CPack's DEB generator (dependencies from dpkg-shlibdeps). Prints the path of the
# .deb on its last line. Needs what packaging/install-deps.sh installs.
#
# The build is link-time optimized and profile-guided (MW_PGO in CMakeLists.txt): the analyzer
# is built instrumented, trained on the recorded fixture traces (packaging/pgo-train.sh), then
# everything is built again with that profile. The training reads fixed inputs, so the same
# sources give the same profile.
#
#   sh packaging/build-deb.sh [BUILD_DIR]      default BUILD_DIR: build-deb next to the sources
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$root/build-deb}"
jobs=$(nproc 2>/dev/null || echo 2)

profile="$build/pgo-profile"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	-DMW_TESTS=OFF -DMW_SANITIZE=OFF -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
	-DMW_PGO=generate -DMW_PGO_DIR="$profile" >/dev/null
cmake --build "$build" -j"$jobs" --clean-first --target mcpwitness >/dev/null
rm -rf "$profile"
sh "$root/packaging/pgo-train.sh" "$build/analyzer/mcpwitness"
cmake -S "$root" -B "$build" -DMW_PGO=use >/dev/null
cmake --build "$build" -j"$jobs" --clean-first >/dev/null
rm -rf "$build/deb"
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(find "$build/deb" -maxdepth 1 -name 'mcpwitness_*.deb' | head -n 1)
if [ -z "$deb" ]; then
	echo "build-deb: cpack made no package" >&2
	exit 1
fi
echo "$deb"
