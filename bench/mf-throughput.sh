#!/usr/bin/env bash
# MF SGD updates/s per core (not a test): runs
#   flexrr run -n 1 -t T --clocks N --metrics CSV mf --synthetic SIZE --rank K
# for each T and reports, from the per-worker item-loop time in the metrics
# CSV (clock 0 skipped as warm-up), SGD updates per second per core, and the
# wall-clock rate of the whole job (item loops + flushes + evaluation).  The
# bare SGD kernel (apps/mf/mf_sgd.c on plain arrays, no runtime) runs on the
# same data in the same run, for the ratio: on a shared machine compare the
# rows with each other, not with other runs.
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
kdir=$(mktemp -d /tmp/frr-mf-kernel-XXXXXX)
trap 'rm -rf "$csv" "$kdir"' EXIT

# the bare kernel: one worker's partition of the same data, SGD passes
cat >"$kdir/k.c" <<'KEOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "mf.h"
int main(int argc, char **argv)
{
	struct mf_synth s;
	struct mf_part p;
	struct timespec t0, t1;
	int k = atoi(argv[2]), passes = atoi(argv[3]);
	size_t cols = (size_t)k + 1;
	double secs;

	mf_synth_defaults(&s);
	if (mf_synth_parse(argv[1], &s))
		return 2;
	s.rank = k;
	if (mf_synth_partition(&s, 0, 1, 0.1, 1, &p))
		return 1;
	float *P = malloc(sizeof(float) * cols * s.users);
	float *Q = malloc(sizeof(float) * cols * s.items);
	for (uint32_t u = 0; u < s.users; u++)
		mf_init_row(1, 0, u, P + u * cols, k);
	for (uint32_t i = 0; i < s.items; i++)
		mf_init_row(1, 1, i, Q + i * cols, k);
	struct mf_hyper h = { .rank = k, .lr = 0.01f, .lr_item = 0.01f,
			      .reg = 0.02f, .breg = 0.02f, .mu = 3.6f };
	mf_sgd_pass(P, Q, p.train, p.ntrain, &h); /* warm-up */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int c = 0; c < passes; c++)
		mf_sgd_pass(P, Q, p.train, p.ntrain, &h);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
	printf("%.6e\n", (double)p.ntrain * passes / secs);
	return 0;
}
KEOF
cc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -Iapps/mf "$kdir/k.c" apps/mf/mf_sgd.c \
	apps/mf/mf_synth.c apps/mf/mf_data.c base/log.c -lm -o "$kdir/k" ||
	{ echo "mf-throughput.sh: cannot compile the bare kernel (cc)" >&2; exit 1; }

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
	[ -n "${last:-}" ] || last=$(awk -v u="$upd" -v c="$comp" -v n="$clocks" 'BEGIN { printf "%.6e", (c > 0 ? u * (n - 1) / c : 0) }')
done
kern=$("$kdir/k" "$size" "$rank" "$((clocks - 1))")
awk -v k="$kern" -v r="$last" 'BEGIN {
	printf "bare kernel (no runtime, 1 core): %.3e updates/s; through the runtime (first row, per core): %.2f of it\n", k, r / k }'

