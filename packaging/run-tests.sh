#!/bin/sh
# Builds mcpwitness and runs every test: the Check unit suites and the end-to-end tests on the
# real kernel (as root: the collector loads BPF programs), all under AddressSanitizer and
# UndefinedBehaviorSanitizer; then a bounded run of each libFuzzer target. Installs what it
# needs first. This is README command (2) and what .ci/run executes.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

sh "$root/packaging/install-deps.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "run-tests: the end-to-end tests load BPF programs; run as root (e.g. sudo $0)" >&2
	exit 2
fi

cmake -S "$root" -B "$root/build-test" -DCMAKE_BUILD_TYPE=Debug -DMW_SANITIZE=ON
cmake --build "$root/build-test" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir "$root/build-test" --output-on-failure --no-tests=error -j"$jobs"

CC=clang cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=Debug -DMW_FUZZ=ON
cmake --build "$root/build-fuzz" -j"$jobs"
ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz
