#!/bin/sh
# The demo (README command 1): installs what it needs, builds mcpwitness, then records the
# bundled, deliberately vulnerable example MCP server while the bundled client drives it,
# verifies the signed trace, prints the calls and the findings of the default policy, and
# writes an HTML report where the analyzer has one. Everything goes into a temporary directory
# that it names.
#
# Installed by the Debian package as /usr/share/mcpwitness/example/demo.sh, next to the
# example: there it uses the installed programs and policy and builds nothing. In the source
# tree, MW_COLLECT, MW_ANALYZER and MW_POLICY name other binaries and policy (the package test
# points them at the installed ones), and MW_DEMO_NO_BUILD=1 skips the build.
#
# The server runs as the user who invoked sudo, or as `nobody` when run by root directly; its
# HOME is a throw-away directory holding a FAKE ssh key for the server to "steal".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/vulnerable_server.py" ]; then # installed next to the example
	example=$here
	MW_DEMO_NO_BUILD=1
	build=""
	collect="${MW_COLLECT:-$(command -v mcpwitness-collect || echo /usr/sbin/mcpwitness-collect)}"
	analyze="${MW_ANALYZER:-$(command -v mcpwitness || echo /usr/bin/mcpwitness)}"
	policy="${MW_POLICY:-/usr/share/mcpwitness/policies/default.yaml}"
else
	root=$(cd "$here/.." && pwd)
	example="$root/test/fixtures/example"
	build="${MW_BUILD_DIR:-$root/build}"
	collect="${MW_COLLECT:-$build/collector/mcpwitness-collect}"
	analyze="${MW_ANALYZER:-$build/analyzer/mcpwitness}"
	policy="${MW_POLICY:-$root/policies/default.yaml}"
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: the collector loads BPF programs; run as root (e.g. sudo $0)" >&2
	exit 2
fi
if [ -z "${MW_DEMO_NO_BUILD:-}" ]; then
	sh "$root/packaging/install-deps.sh"
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMW_TESTS=OFF >/dev/null
	cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
fi

if [ -n "${SUDO_UID:-}" ]; then
	run_uid=$SUDO_UID run_gid=${SUDO_GID:-$SUDO_UID} as_user=""
else
	run_uid=$(id -u nobody) run_gid=$(id -g nobody) as_user="--user nobody"
fi

tmp=$(mktemp -d /tmp/mcpwitness-demo.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/home/.ssh" "$tmp/workspace" "$tmp/keys"
printf '%s\n' "-----BEGIN OPENSSH PRIVATE KEY-----" "FAKE KEY FOR THE MCPWITNESS DEMO" \
	"-----END OPENSSH PRIVATE KEY-----" >"$tmp/home/.ssh/id_rsa"
chmod 600 "$tmp/home/.ssh/id_rsa"
chown -R "$run_uid:$run_gid" "$tmp/home" "$tmp/workspace"
echo "== demo directory: $tmp"

echo "== 1. a signing key for this demo (normally made once per host)"
"$analyze" keygen -o "$tmp/keys"

echo "== 2. record the example server while the client calls its tools"
# shellcheck disable=SC2086
(cd "$tmp/workspace" && HOME="$tmp/home" python3 "$example/client.py" --listener -- \
	"$collect" -o "$tmp/trace.mcpt" -k "$tmp/keys/signing.key" $as_user -- \
	python3 "$example/vulnerable_server.py")

# The analyzer needs no privilege: run it as the server's user, who can read the trace.
as_analyst() {
	setpriv --reuid="$run_uid" --regid="$run_gid" --clear-groups -- "$@"
}
echo "== 3. verify the trace with the public key only"
as_analyst "$analyze" verify "$tmp/trace.mcpt" --pubkey "$tmp/keys/signing.pub"

# The calls view and the HTML report come with analyzer versions that have them; say so
# plainly where this one does not, rather than pretend.
echo "== 4. the calls: each request and everything its processes did"
if "$analyze" calls --help >/dev/null 2>&1; then
	as_analyst "$analyze" calls "$tmp/trace.mcpt" --pubkey "$tmp/keys/signing.pub" || true
else
	echo "(this mcpwitness has no 'calls' command yet)"
fi

echo "== 5. findings of $(basename "$policy")"
status=0
as_analyst "$analyze" analyze "$tmp/trace.mcpt" --pubkey "$tmp/keys/signing.pub" -p "$policy" ||
	status=$?
as_analyst "$analyze" analyze "$tmp/trace.mcpt" --pubkey "$tmp/keys/signing.pub" -p "$policy" \
	--format json >"$tmp/findings.json" || true
if "$analyze" analyze --help 2>/dev/null | grep -q html; then
	as_analyst "$analyze" analyze "$tmp/trace.mcpt" --pubkey "$tmp/keys/signing.pub" \
		-p "$policy" --format html >"$tmp/report.html" || true
	echo "== the HTML report: $tmp/report.html"
else
	echo "== (this mcpwitness writes no HTML report yet: --format html is not there)"
fi
echo "== the trace, the keys and findings.json are in $tmp"
# exit 1 means "findings at or above --fail-on": expected for this server; anything else fails
[ "$status" -le 1 ]
