#!/usr/bin/env bash
# MF SGD updates/s on one core (not a test): flexrr's MF through the runtime
#   flexrr run -n 1 -t 1 --clocks N --metrics CSV mf --synthetic U,I,R --rank K
# side by side with a bare single-thread SGD loop (the anchor, a C file kept
# outside this project: --anchor FILE, built here with -O3 -march=native),
# runs interleaved, medians of --runs each.  flexrr's rate is taken from the
# metrics CSV (clock 0 skipped as warm-up): the item loops alone (loop) and
# the item loops plus the clock-end flushes (loop+flush, the training cost);
# evaluation (test RMSE) is not counted, as the anchor has none; and CPU
# seconds (user + system) per update of each, less sensitive to the load of
# a shared machine than wall time (see cpu_of below for what they include).
#   bench/mf-throughput.sh [--build DIR] [--anchor FILE] [--rank K]
#       [--runs N] [--sizes "cache netflix"] [--netflix-ratings R]
#       [--clocks N] [--netflix-clocks N]
# Sizes: cache = 20000 x 2000, 2M ratings; netflix = 480189 x 17770 with
# --netflix-ratings ratings (default 100480507, the Netflix prize's count).
# Netflix runs 8 clocks by default: flexrr's CPU figure is clocks 1..N-1
# against two runs' data generation, and with 3 clocks at 10 M ratings that
# difference was noise (one run came out negative).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

build=build rank=16 runs=5 sizes="cache netflix" nfr=100480507
clocks=11 nclocks=8 anchor=../shared/anchors/mf_bare.c
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--anchor) anchor=$2; [ "${anchor#/}" != "$anchor" ] || anchor=$here/$anchor; shift ;;
	--rank) rank=$2; shift ;;
	--runs) runs=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--netflix-ratings) nfr=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--netflix-clocks) nclocks=$2; shift ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mf-throughput.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
bin=$build/bin/flexrr
[ -x "$bin" ] || { echo "mf-throughput.sh: $bin not built; run scripts/setup.sh or pass --build DIR" >&2; exit 2; }
if [ ! -f "$anchor" ]; then
	echo "mf-throughput.sh: the bare SGD loop '$anchor' is missing: the side-by-side needs it" >&2
	echo "  (a single-file C program: args USERS ITEMS RATINGS K, prints '... N M updates/s/core ...');" >&2
	echo "  pass it with --anchor FILE" >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/frr-mf-tp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O3 -march=native -o "$tmp/anchor" "$anchor" -lm ||
	{ echo "mf-throughput.sh: cannot compile the anchor '$anchor' (cc)" >&2; exit 1; }

. bench/lib.sh # bench_median

# CPU seconds (user + system) of a command, its output to $tmp/out
cpu_of() {
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >"$tmp/out" ||
		{ echo "mf-throughput.sh: '$*' failed:" >&2; cat "$tmp/out" >&2; return 1; }
	awk '{ print $1 + $2 }' "$tmp/time"
}

# one flexrr run: prints "loop loop+flush cpu test_rmse", updates/s: loop
# and loop+flush from the metrics (wall time of the item loops and
# flushes), cpu = CPU time of clocks 1..N-1, i.e. the CPU seconds of an
# N-clock run minus a 1-clock run's (start-up, data, clock 0 cancel out;
# the per-clock evaluation stays in: a little pessimistic for flexrr)
flexrr_run() { # U I R clocks
	local c1 cn upd
	c1=$(cpu_of "$bin" run -n 1 -t 1 --backend shm --clocks 1 -q \
		mf --synthetic "$1,$2,$3" --rank "$rank")
	cn=$(cpu_of "$bin" run -n 1 -t 1 --backend shm --clocks "$4" -q \
		--metrics "$tmp/m.csv" mf --synthetic "$1,$2,$3" --rank "$rank")
	upd=$(sed -n 's/.* sgd_updates=\([0-9]*\).*/\1/p' "$tmp/out")
	[ -n "$upd" ] || { echo "mf-throughput.sh: no summary from flexrr run:" >&2; cat "$tmp/out" >&2; return 1; }
	awk -F, -v u="$upd" -v n="$4" -v c1="$c1" -v cn="$cn" \
		-v t="$(sed -n 's/.* test_rmse=\([0-9.]*\).*/\1/p' "$tmp/out")" '
		NR > 1 && $1 >= 1 { c += $4; f += $6 }
		END { printf "%.6e %.6e %.6e %s\n", u * (n - 1) / c, u * (n - 1) / (c + f),
		      u * (n - 1) / (cn - c1), t }' "$tmp/m.csv"
}

# one anchor run: "wall cpu" updates/s; its CPU time includes making its
# data (a few % of it: a little pessimistic for the anchor)
anchor_run() { # U I R
	local cpu w
	cpu=$(cpu_of "$tmp/anchor" "$1" "$2" "$3" "$rank")
	w=$(sed -n 's/.*: \([0-9.]*\) M updates.*/\1e6/p' "$tmp/out")
	awk -v w="$w" -v c="$cpu" -v n="$3" 'BEGIN { printf "%.6e %.6e\n", w, 10 * n / c }'
}

col_median() { cut -d' ' -f"$1" "$2" | bench_median; }

one_size() { # name U I R clocks
	local name=$1 U=$2 I=$3 R=$4 n=$5 a f aw ac flo flf fc ft
	: >"$tmp/a" && : >"$tmp/f" && : >"$tmp/r" && : >"$tmp/rc"
	echo "# $name: $U x $I, $R ratings, rank $rank, $runs runs interleaved; load $(cut -d' ' -f1-3 /proc/loadavg)"
	for r in $(seq "$runs"); do
		a=$(anchor_run "$U" "$I" "$R")
		f=$(flexrr_run "$U" "$I" "$R" "$n")
		echo "$a" >>"$tmp/a" && echo "$f" >>"$tmp/f"
		read -r aw ac <<<"$a" && read -r flo flf fc ft <<<"$f"
		awk -v x="$flf" -v y="$aw" 'BEGIN { print x / y }' >>"$tmp/r"
		awk -v x="$fc" -v y="$ac" 'BEGIN { print x / y }' >>"$tmp/rc"
		printf "  run %d: wall: bare %.3e  flexrr loop %.3e  loop+flush %.3e | CPU: bare %.3e  flexrr %.3e | test_rmse %s\n" "$r" "$aw" "$flo" "$flf" "$ac" "$fc" "$ft"
	done
	awk -v n="$name" -v a="$(col_median 1 "$tmp/a")" -v lo="$(col_median 1 "$tmp/f")" \
		-v lf="$(col_median 2 "$tmp/f")" -v pr="$(bench_median <"$tmp/r")" \
		-v ac="$(col_median 2 "$tmp/a")" -v fc="$(col_median 3 "$tmp/f")" -v prc="$(bench_median <"$tmp/rc")" 'BEGIN {
		printf "%s wall: bare %.3e updates/s; flexrr loop %.3e (%.2fx), loop+flush %.3e (%.2fx); median of per-run ratios %.2f\n",
		       n, a, lo, lo / a, lf, lf / a, pr
		printf "%s CPU:  bare %.3e updates/CPU-s; flexrr %.3e (%.2fx); median of per-run ratios %.2f\n",
		       n, ac, fc, fc / ac, prc }'
	echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

echo "# MF SGD updates/s, one core: flexrr (shm, -n 1 -t 1) vs the bare loop $anchor (-O3 -march=native); $(nproc) cores"
echo "# flexrr's kernels: FLEXRR_SIMD=${FLEXRR_SIMD:-auto} (off: the portable baseline; docs/benchmarks.md)"
for s in $sizes; do
	case $s in
	cache) one_size cache 20000 2000 2000000 "$clocks" ;;
	netflix) one_size netflix 480189 17770 "$nfr" "$nclocks" ;;
	*) echo "mf-throughput.sh: unknown size '$s' (cache, netflix)" >&2; exit 2 ;;
	esac
done
