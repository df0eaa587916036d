#!/usr/bin/env bash
# Fails (and shows the diff) when a C file differs from .clang-format.
set -euo pipefail
case ${1:-} in -h|--help) echo "usage: scripts/check-format.sh  (checks every tracked .c/.h against .clang-format)"; exit 0 ;; esac
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r f; do
	if ! diff -u "$f" <(clang-format --style=file "$f") >/tmp/frr-fmt.diff; then
		echo "format: $f differs from .clang-format (run: clang-format -i $f)"
		head -20 /tmp/frr-fmt.diff
		bad=1
	fi
done < <(git ls-files '*.c' '*.h')
exit $bad
