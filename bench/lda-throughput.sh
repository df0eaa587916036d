#!/usr/bin/env bash
# LDA sampling throughput per core, the sparse sampler (SparseLDA, the
# default) side by side with the dense O(K) one, on the KJV by chapter.
#   bench/lda-throughput.sh [--build DIR] [--runs R] [--clocks C]
#                           [--topics "20 200 1000"] [--callgrind]
# Each run: flexrr run -n 1 -t 1 (one worker thread: tokens/s per core),
# --clocks C, --max-doc-frac 0.25 (205,247 tokens per clock).  A run's
# figure is tokens x (C - 1) / the summed clock_s of clocks 1..C-1 (clock 0,
# from random assignments, is the slowest for the sparse sampler: reported
# apart); printed: the median over R runs, min-max, and sparse/dense.  The
# two samplers alternate run by run so load changes hit both alike.
# cpu_tok/s: the same tokens over CPU seconds instead (user + sys of the
# process, all threads, for C clocks minus the median for 1 clock): on a
# machine shared with other jobs, wall time counts the others' time too.
# --callgrind: also instructions per token and clock, counted by
# valgrind --tool=callgrind as (Ir of 3 clocks - Ir of 1 clock) / (2 x
# tokens): immune to the machine's load, unlike the times.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build runs=5 clocks=6 topics="20 200 1000" cg=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--runs) runs=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--topics) topics=$2; shift ;;
	--callgrind) cg=1 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "lda-throughput: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
flexrr=$build/bin/flexrr
[ -x "$flexrr" ] || { echo "lda-throughput: no $flexrr; build first (cmake --build $build)" >&2; exit 1; }
[ "$clocks" -ge 2 ] || { echo "lda-throughput: --clocks must be >= 2" >&2; exit 2; }
kjv=$build/data/kjv-chapters.txt
[ -r "$kjv" ] || scripts/make-kjv-corpus.sh "$kjv"
out=$(mktemp -d /tmp/lda-throughput.XXXXXX)
trap 'rm -rf "$out"' EXIT

# one run of $4 clocks: prints "tokens_per_s clock0_tokens_per_s cpu_s"
run() {
	/usr/bin/time -f "%U %S" -o "$out/t" "$flexrr" run -n 1 -t 1 --clocks "$4" \
		--seed "$3" lda --text "$kjv" --max-doc-frac 0.25 --topics "$1" \
		--sampler "$2" --no-progress >"$out/o" 2>"$out/e" || { cat "$out/e" >&2; exit 1; }
	tok=$(sed -n 's/.* tokens=\([0-9]*\).*/\1/p' "$out/o")
	cpu=$(awk '{ print $1 + $2 }' "$out/t")
	awk -v tok="$tok" -v cpu="$cpu" '/^flexrr: clock / {
		for (i = 1; i <= NF; i++) if ($i ~ /^clock_s=/) { split($i, a, "="); s = a[2] }
		if ($3 == 0) c0 = s; else { t += s; n++ }
	} END { printf "%.0f %.0f %s\n", n ? tok * n / t : 0, tok / c0, cpu }' "$out/e"
}

# median, min, max of the numbers on stdin (printf format $1, default %.0f)
stats() { sort -g | awk -v f="${1:-%.0f}" '{ v[NR] = $1 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf f " " f " " f "\n", m, v[1], v[NR] }'; }

echo "# lda tokens/s per core: -n 1 -t 1, KJV (205,247 tokens), $clocks clocks, median of $runs runs (clocks 1..$((clocks - 1)))"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %-7s %12s %25s %14s %14s\n" K sampler tokens/s "min-max" clock0_tok/s cpu_tok/s
for K in $topics; do
	for s in sparse dense; do : >"$out/$s"; : >"$out/one.$s"; done
	for r in $(seq 1 "$runs"); do
		for s in sparse dense; do
			run "$K" "$s" "$r" "$clocks" >>"$out/$s"
			run "$K" "$s" "$r" 1 | cut -d' ' -f3 >>"$out/one.$s"
		done
	done
	for s in sparse dense; do
		read -r med lo hi < <(cut -d' ' -f1 "$out/$s" | stats)
		read -r c0 _ _ < <(cut -d' ' -f2 "$out/$s" | stats)
		one=$(stats %.4f <"$out/one.$s" | cut -d' ' -f1)
		read -r cpu _ _ < <(awk -v one="$one" -v n=$((clocks - 1)) \
			'{ print 205247 * n / ($3 - one) }' "$out/$s" | stats)
		printf "%-6s %-7s %12s %25s %14s %14s\n" "$K" "$s" "$med" "$lo-$hi" "$c0" "$cpu"
		echo "$med $cpu" >"$out/med.$s"
	done
	awk -v K="$K" 'NR == 1 { a = $1; ac = $2 } NR == 2 { b = $1; bc = $2 }
		END { printf "%-6s sparse/dense = %.2fx (wall), %.2fx (cpu)\n", K, a / b, ac / bc }' \
		"$out/med.sparse" "$out/med.dense"
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

[ "$cg" = 1 ] || exit 0
command -v valgrind >/dev/null || { echo "lda-throughput: --callgrind needs valgrind" >&2; exit 1; }
echo
echo "# instructions per token per clock (callgrind, clocks 1-2: Ir(3 clocks) - Ir(1 clock))"
printf "%-6s %-7s %12s\n" K sampler Ir/token
ir() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$flexrr" run -q -n 1 -t 1 \
		--clocks "$3" --seed 1 lda --text "$kjv" --max-doc-frac 0.25 --topics "$1" \
		--sampler "$2" --no-progress 2>&1 >/dev/null |
		sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' |
		tr -d , | awk '{ s += $1 } END { print s }'
}
for K in $topics; do
	for s in sparse dense; do
		a=$(ir "$K" "$s" 1)
		b=$(ir "$K" "$s" 3)
		awk -v a="$a" -v b="$b" -v K="$K" -v s="$s" \
			'BEGIN { printf "%-6s %-7s %12.0f\n", K, s, (b - a) / (2 * 205247) }'
	done
done
