#!/usr/bin/env bash
# Fails (and shows the diff) when a C file differs from .clang-format.
# clang-format --dry-run names the files that differ, one process per CPU;
# only those are formatted again for their diff (no file is written).
set -euo pipefail
case ${1:-} in -h|--help) echo "usage: scripts/check-format.sh  (checks every tracked .c/.h against .clang-format)"; exit 0 ;; esac
cd "$(dirname "$0")/.."
bad=0
out=$(git ls-files -z '*.c' '*.h' |
	xargs -0 -n 16 -P "$(nproc)" clang-format --style=file --dry-run 2>&1) || {
	echo "format: clang-format failed:"; printf '%s\n' "$out" | head -20; exit 1
}
mapfile -t differ < <(printf '%s\n' "$out" |
	sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(warning\|error\): code should be clang-formatted.*/\1/p' |
	sort -u)
for f in "${differ[@]}"; do
	echo "format: $f differs from .clang-format (run: clang-format -i $f)"
	diff -u "$f" <(clang-format --style=file "$f") | head -20 || true
	bad=1
done
exit $bad
