#!/bin/sh
# same_output.sh - proves that two builds of the analyzer print the same bytes: every report
# format of `analyze` (with its exit code) on the golden traces of test/fixtures/analysis/ with
# each of their policies, `dump` and `calls` (text, json) of each, and `analyze` (text, json,
# sarif), `dump` (text, json) and `calls --json` on a synthetic signed trace of EVENTS events
# written by gentrace. Used to check that a performance change changes nothing but the time;
# it prints what it compared and exits 1 at the first difference.
#
#   same_output.sh OLD_BUILD NEW_BUILD [EVENTS]     (build trees; EVENTS defaults to 3000000,
#                                                   0 compares the fixtures only)
set -eu
old=$1/analyzer/mcpwitness
new=$2/analyzer/mcpwitness
gen=$2/test/bench/gentrace
events=${3:-3000000}
src=$(cd "$(dirname "$0")/../.." && pwd)
fix=$src/test/fixtures/analysis
dflt=$src/policies/default.yaml
work=$(mktemp -d "${TMPDIR:-/tmp}/mwsame.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# compare NAME ARGS...: runs ARGS with each analyzer, compares stdout and exit code
compare() {
	name=$1
	shift
	rc_old=0
	rc_new=0
	"$old" "$@" >"$work/old.out" 2>/dev/null || rc_old=$?
	"$new" "$@" >"$work/new.out" 2>/dev/null || rc_new=$?
	if [ "$rc_old" != "$rc_new" ] || ! cmp -s "$work/old.out" "$work/new.out"; then
		echo "DIFFERENT: $name (exit $rc_old vs $rc_new)"
		diff "$work/old.out" "$work/new.out" | head -20
		exit 1
	fi
	if [ ! -s "$work/new.out" ]; then
		echo "NO OUTPUT: $name (exit $rc_new)"
		exit 1
	fi
	echo "same: $name ($(wc -c <"$work/new.out") bytes, exit $rc_new)"
}

for trace in example rules; do
	for pol in "$dflt" "$fix/golden.yaml"; do
		for fmt in text json sarif html; do
			compare "$trace $(basename "$pol") $fmt" analyze "$fix/$trace.mcpt" \
				--pubkey "$fix/signing.pub" -p "$pol" --format "$fmt"
		done
	done
	compare "$trace dump --json" dump "$fix/$trace.mcpt" --json
	compare "$trace dump" dump "$fix/$trace.mcpt"
	compare "$trace calls --json" calls "$fix/$trace.mcpt" --pubkey "$fix/signing.pub" --json
	compare "$trace calls" calls "$fix/$trace.mcpt" --pubkey "$fix/signing.pub"
done

if [ "$events" = 0 ]; then
	echo "all outputs identical (fixtures only)"
	exit 0
fi
"$new" keygen -o "$work/keys" >/dev/null
"$gen" "$work/synth.mcpt" "$work/keys/signing.key" "$events" >/dev/null
for fmt in text json sarif; do
	compare "synthetic $events events $fmt" analyze "$work/synth.mcpt" \
		--pubkey "$work/keys/signing.pub" -p "$dflt" --format "$fmt"
done
compare "synthetic $events events dump --json" dump "$work/synth.mcpt" --json
compare "synthetic $events events dump" dump "$work/synth.mcpt"
compare "synthetic $events events calls --json" calls "$work/synth.mcpt" \
	--pubkey "$work/keys/signing.pub" --json
echo "all outputs identical"
