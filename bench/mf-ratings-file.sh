#!/usr/bin/env bash
# Write a synthetic ratings file of about BYTES bytes in the triples format
# ('user item rating' lines) for the mf start-up benchmark (docs/benchmarks.md,
# issue 13): users uniform over 2.6 M raw ids (every user's ratings spread
# over the whole file), items skewed over 20,000, ratings 1..5.  Deterministic
# for a seed (awk's srand).
set -euo pipefail
case ${1:-} in
-h | --help)
	echo "usage: bench/mf-ratings-file.sh OUT [BYTES (1000000000)] [SEED (1)]"
	exit 0
	;;
"")
	echo "usage: bench/mf-ratings-file.sh OUT [BYTES (1000000000)] [SEED (1)]" >&2
	exit 2
	;;
esac
out=$1
bytes=${2:-1000000000}
seed=${3:-1}
awk -v bytes="$bytes" -v seed="$seed" 'BEGIN {
	srand(seed)
	n = 0
	while (n < bytes) {
		x = rand()
		line = sprintf("%d %d %d", int(rand() * 2600000) + 1,
			       int(x * x * 20000) + 1, int(rand() * 5) + 1)
		print line
		n += length(line) + 1
	}
}' >"$out"
ls -l "$out"
