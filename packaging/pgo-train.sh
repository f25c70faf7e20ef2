#!/bin/sh
# The training run of the profile-guided build (packaging/build-deb.sh): the analyzer, built with
# MW_PGO=generate, reads the recorded traces under test/fixtures/analysis with every command
# and report format, and its profile lands in the build's MW_PGO_DIR. The inputs are recorded
# traces of real servers, not the benchmark's synthetic trace. Every command must succeed:
# a failure is a broken build, not a profile to optimize for.
#
#   sh packaging/pgo-train.sh ANALYZER
set -eu
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: pgo-train.sh ANALYZER (an executable built with MW_PGO=generate)" >&2
	exit 2
fi
mw=$1
root=$(cd "$(dirname "$0")/.." && pwd)
fx="$root/test/fixtures/analysis"
default="$root/policies/default.yaml"

run() {
	if ! "$mw" "$@" >/dev/null 2>&1; then
		echo "pgo-train: failed: mcpwitness $*" >&2
		exit 1
	fi
}

for t in "$fx/example.mcpt" "$fx/rules.mcpt"; do
	k="--pubkey=$fx/signing.pub"
	run verify "$t" "$k"
	run dump "$t"
	run dump --json "$t"
	run calls "$t" "$k"
	run calls --json "$t" "$k"
	for f in text json sarif html; do
		run analyze "$t" "$k" -p "$default" --format "$f"
	done
	run analyze "$t" "$k" -p "$fx/golden.yaml"
	run analyze "$t" "$k" -p "$root/test/fixtures/policies/all-forms.yaml"
done
