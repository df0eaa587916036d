#!/usr/bin/env bash
# MF SGD updates/s on one core (not a test): flexrr's MF through the runtime
#   flexrr run -n 1 -t 1 --clocks N --metrics CSV mf --synthetic U,I,R --rank K
# side by side with a bare single-thread SGD loop (the anchor, a C file kept
# outside this project: --anchor FILE, built here with -O3 -march=native),
# runs interleaved, medians of --runs each.  flexrr's rate is taken from the
# metrics CSV (clock 0 skipped as warm-up): the item loops alone (loop) and
# the item loops plus the clock-end flushes (loop+flush, the training cost);
# evaluation (test RMSE) is not counted, as the anchor has none.
#   bench/mf-throughput.sh [--build DIR] [--anchor FILE] [--rank K]
#       [--runs N] [--sizes "cache netflix"] [--netflix-ratings R]
#       [--clocks N] [--netflix-clocks N]
# Sizes: cache = 20000 x 2000, 2M ratings; netflix = 480189 x 17770 with
# --netflix-ratings ratings (default 100480507, the Netflix prize's count).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

build=build rank=16 runs=5 sizes="cache netflix" nfr=100480507
clocks=11 nclocks=3 anchor=../shared/anchors/mf_bare.c
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
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# one flexrr run: prints "loop_rate loop+flush_rate test_rmse" (updates/s)
flexrr_run() { # U I R clocks
	local out upd
	out=$("$bin" run -n 1 -t 1 --backend shm --clocks "$4" -q \
		--metrics "$tmp/m.csv" mf --synthetic "$1,$2,$3" --rank "$rank")
	upd=$(sed -n 's/.* sgd_updates=\([0-9]*\).*/\1/p' <<<"$out")
	[ -n "$upd" ] || { echo "mf-throughput.sh: no summary from flexrr run:" >&2; echo "$out" >&2; return 1; }
	awk -F, -v u="$upd" -v n="$4" -v t="$(sed -n 's/.* test_rmse=\([0-9.]*\).*/\1/p' <<<"$out")" '
		NR > 1 && $1 >= 1 { c += $4; f += $6 }
		END { printf "%.6e %.6e %s\n", u * (n - 1) / c, u * (n - 1) / (c + f), t }' "$tmp/m.csv"
}

# one anchor run: updates/s
anchor_run() { # U I R
	"$tmp/anchor" "$1" "$2" "$3" "$rank" | sed -n 's/.*: \([0-9.]*\) M updates.*/\1e6/p'
}

one_size() { # name U I R clocks
	local name=$1 U=$2 I=$3 R=$4 n=$5 a f
	: >"$tmp/a" && : >"$tmp/f" && : >"$tmp/r"
	echo "# $name: $U x $I, $R ratings, rank $rank, $runs runs interleaved; load $(cut -d' ' -f1-3 /proc/loadavg)"
	for r in $(seq "$runs"); do
		a=$(anchor_run "$U" "$I" "$R")
		f=$(flexrr_run "$U" "$I" "$R" "$n")
		echo "$a" >>"$tmp/a" && echo "$f" >>"$tmp/f"
		awk -v a="$a" -v f="$f" 'BEGIN { split(f, v, " "); print v[2] / a }' >>"$tmp/r"
		printf "  run %d: bare %.3e  flexrr loop %.3e  loop+flush %.3e  test_rmse %s\n" "$r" "$a" $f
	done
	a=$(median <"$tmp/a")
	lo=$(cut -d' ' -f1 "$tmp/f" | median)
	lf=$(cut -d' ' -f2 "$tmp/f" | median)
	pr=$(median <"$tmp/r")
	awk -v n="$name" -v a="$a" -v lo="$lo" -v lf="$lf" -v pr="$pr" 'BEGIN {
		printf "%s: bare %.3e updates/s; flexrr loop %.3e (%.2fx), loop+flush %.3e (%.2fx)  [medians]; median of per-run ratios (loop+flush / bare) %.2f\n",
		       n, a, lo, lo / a, lf, lf / a, pr }'
	echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

echo "# MF SGD updates/s, one core: flexrr (shm, -n 1 -t 1) vs the bare loop $anchor (-O3 -march=native); $(nproc) cores"
for s in $sizes; do
	case $s in
	cache) one_size cache 20000 2000 2000000 "$clocks" ;;
	netflix) one_size netflix 480189 17770 "$nfr" "$nclocks" ;;
	*) echo "mf-throughput.sh: unknown size '$s' (cache, netflix)" >&2; exit 2 ;;
	esac
done
