#!/usr/bin/env bash
# MF SGD updates/s per core (not a test): runs
#   flexrr run -n 1 -t T --clocks N --metrics CSV mf --synthetic SIZE --rank K
# for each T and reports, from the per-worker item-loop time in the metrics
# CSV (clock 0 skipped as warm-up), SGD updates per second per core, and the
# wall-clock rate of the whole job (item loops + flushes + evaluation).
#   bench/mf-throughput.sh [--build DIR] [--size U,I,R] [--rank K]
#                          [--clocks N] [--threads "1 2"]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build size=20000,2000,2000000 rank=10 clocks=6 threads="1 2"
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--size) size=$2; shift ;;
	--rank) rank=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--threads) threads=$2; shift ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mf-throughput.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
bin=$build/bin/flexrr
[ -x "$bin" ] || { echo "mf-throughput.sh: $bin not built; run scripts/setup.sh or pass --build DIR" >&2; exit 2; }
csv=$(mktemp /tmp/frr-mf-tp-XXXXXX.csv)
trap 'rm -f "$csv"' EXIT

echo "# MF SGD throughput: synthetic $size, rank $rank, $clocks clocks, shm, $(nproc) cores"
printf "%-8s %-6s %14s %10s %16s %18s\n" threads rank updates/clock wall_s "updates/s(wall)" "updates/s/core"
for t in $threads; do
	out=$("$bin" run -n 1 -t "$t" --backend shm --clocks "$clocks" -q \
		--metrics "$csv" mf --synthetic "$size" --rank "$rank")
	upd=$(sed -n 's/.* sgd_updates=\([0-9]*\).*/\1/p' <<<"$out")
	wall=$(sed -n 's/.* time_s=\([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "$upd" ] && [ -n "$wall" ] || { echo "mf-throughput.sh: no summary from flexrr run:" >&2; echo "$out" >&2; exit 1; }
	# compute_s summed over workers and clocks >= 1
	comp=$(awk -F, 'NR > 1 && $1 >= 1 { s += $4 } END { printf "%.6f", s }' "$csv")
	awk -v t="$t" -v k="$rank" -v u="$upd" -v w="$wall" -v c="$comp" -v n="$clocks" 'BEGIN {
		printf "%-8d %-6d %14d %10.3f %16.3e %18.3e\n", t, k, u, w,
		       u * n / w, (c > 0 ? u * (n - 1) / c : 0) }'
done
