#!/bin/sh
# ab.sh - compares the analyze time of two analyzer binaries on one trace, their runs
# alternated (A, B, A, B...) so that both see the same phases of a machine whose speed drifts;
# prints per binary the best, first quartile and median of wall and CPU (user+sys) seconds and
# the best rate. A figure, not a test: it exits 0 whatever the times, 2 on bad usage and 1 when
# a run fails.
#
#   ab.sh [-n REPS] [-p POLICY] [-k PUBKEY] TRACE EVENTS ANALYZER_A ANALYZER_B
#       REPS: runs of each (default 7); POLICY: default policies/default.yaml; PUBKEY: the
#       trace's key (default: analyze's, /etc/mcpwitness/signing.pub); EVENTS: the trace's
#       event count, for the rate
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=7
policy="$src/policies/default.yaml"
key=
while getopts n:p:k: o; do
	case $o in
	n) reps=$OPTARG ;;
	p) policy=$OPTARG ;;
	k) key=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $reps in
'' | *[!0-9]* | 0) reps= ;;
esac
if [ $# -ne 4 ] || [ -z "$reps" ]; then
	echo "usage: ab.sh [-n REPS] [-p POLICY] [-k PUBKEY] TRACE EVENTS ANALYZER_A ANALYZER_B" >&2
	exit 2
fi
trace=$1 events=$2 a=$3 b=$4
for x in "$a" "$b"; do
	if [ ! -x "$x" ]; then
		echo "ab.sh: $x is not an executable" >&2
		exit 2
	fi
done
out=$(mktemp "${TMPDIR:-/tmp}/mwab.XXXXXX")
trap 'rm -f "$out"' EXIT INT TERM

i=0
while [ "$i" -lt "$reps" ]; do
	for side in A B; do
		bin=$a
		[ "$side" = B ] && bin=$b
		if ! /usr/bin/time -a -o "$out" -f "$side %e %U %S" "$bin" analyze "$trace" \
			${key:+--pubkey "$key"} -p "$policy" >/dev/null 2>&1; then
			echo "ab.sh: $side ($bin) failed on $trace" >&2
			exit 1
		fi
	done
	i=$((i + 1))
done
echo "A: $a"
echo "B: $b"
echo "$reps runs of each, alternated, on $trace ($events events)"
awk -v ev="$events" '
function show(side, kind, v, k,    i, j, t, rate) {
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	rate = v[1] > 0 ? sprintf("%.0f", ev / v[1]) : "-"
	printf "%s %-4s best %.2f s  q1 %.2f s  median %.2f s  best rate %s events/s\n", side,
	       kind, v[1], v[int((k - 1) / 4) + 1],
	       (k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2), rate
}
{ runs[$1]++; wall[$1, runs[$1]] = $2; cpu[$1, runs[$1]] = $3 + $4 }
END {
	for (s = 0; s < 2; s++) {
		side = s ? "B" : "A"
		for (i = 1; i <= runs[side]; i++) { w[i] = wall[side, i]; c[i] = cpu[side, i] }
		show(side, "wall", w, runs[side])
		show(side, "cpu", c, runs[side])
	}
}' "$out"
