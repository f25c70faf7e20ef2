#!/bin/sh
# tree_hygiene.sh - the source tree tracks no file its own .gitignore excludes (a build
# directory, __pycache__, an object file added by force once stays tracked otherwise).
# Skips (77) outside a git work tree, e.g. in an unpacked source package.
# usage: tree_hygiene.sh SOURCE_DIR
set -eu
src=${1:?usage: tree_hygiene.sh SOURCE_DIR}
if ! command -v git >/dev/null 2>&1 ||
	! top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null); then
	echo "SKIP: $src is not a git work tree (or git is not installed): nothing to check"
	exit 77
fi
bad=$(git -C "$top" ls-files --cached --ignored --exclude-standard)
if [ -n "$bad" ]; then
	echo "tree_hygiene: tracked files that .gitignore excludes (git rm --cached them):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "tree_hygiene: $(git -C "$top" ls-files | wc -l) tracked files, none ignored"
