#!/bin/sh
# Installs everything mcpwitness needs to build, test and run on Debian 12 (bookworm).
# Idempotent: packages already present are left as they are. Needs root (or sudo).
set -eu

PKGS="build-essential cmake pkg-config clang llvm bpftool
libbpf-dev libelf-dev zlib1g-dev
protobuf-c-compiler libprotobuf-c-dev libsodium-dev libyaml-dev libjansson-dev
check libseccomp-dev python3 python3-cryptography strace
iproute2 procps util-linux
scdoc lintian sudo fakeroot dpkg-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# Node.js 20 runs the MCP servers of the interop tests; the machine image ships it. Debian's own
# nodejs (18) conflicts with that install, so it is only pulled in when no node is present at all.
command -v node >/dev/null 2>&1 || missing="$missing nodejs npm"
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
