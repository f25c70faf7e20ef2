#!/bin/sh
# run.sh - builds mcpwitness (RelWithDebInfo, no sanitizers) and runs every benchmark, printing
# the figures (test/bench/bench.py; README.md "Performance" says what each one means).
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
exec /usr/bin/python3 "$SRC/test/bench/bench.py" --build "$BUILD" "$@"
