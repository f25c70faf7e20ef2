#!/bin/sh
# run.sh - builds mcpwitness (RelWithDebInfo, no sanitizers; the analyzer also as packaged) and
# runs every benchmark, printing the figures (test/bench/bench.py; README.md "Performance" says
# what each one means).
# Needs root. Installs, besides packaging/install-deps.sh, the reference tools it compares
# against: bpftrace (Debian package) and strace; and valgrind for the instruction counts.
# usage: sh test/bench/run.sh [bench.py options, e.g. --reps 3 --only overhead]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${MW_BENCH_BUILD:-$SRC/build-bench}

sh "$SRC/packaging/install-deps.sh"
if ! command -v bpftrace >/dev/null 2>&1 || ! command -v valgrind >/dev/null 2>&1; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q && apt-get install -y -q --no-install-recommends bpftrace valgrind
fi
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMW_SANITIZE=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null

# The analyzer and icount sections time the analyzer users install: the package's build (LTO
# and profile-guided, packaging/build-deb.sh, ~1 min), unless --analyzer names another or
# --only leaves both sections out.
pkg=yes
prev=
for a in "$@"; do
	case $prev in
	--only) case ",$a," in *,analyzer,* | *,icount,*) ;; *) pkg=no ;; esac ;;
	esac
	case $a in
	--only=*) case ",${a#--only=}," in *,analyzer,* | *,icount,*) ;; *) pkg=no ;; esac ;;
	--analyzer | --analyzer=*) pkg=no ;;
	esac
	prev=$a
done
if [ $pkg = yes ]; then
	PKG=${MW_BENCH_PKG_BUILD:-$SRC/build-bench-pkg}
	sh "$SRC/packaging/build-deb.sh" "$PKG" >/dev/null
	set -- --analyzer "$PKG/analyzer/mcpwitness" "$@"
fi
exec /usr/bin/python3 "$SRC/test/bench/bench.py" --build "$BUILD" "$@"
