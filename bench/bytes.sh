#!/usr/bin/env bash
# Update-batch bytes per clock (not a test), issue 21's second measure:
# each worker's payload bytes sent per clock (the --metrics column
# `bytes`), summed over the job and divided by the ranks, for mf, mlr and
# lda at P = 2, 4, 8 processes of one thread (bytes, not time: 8
# processes on 2 cores are fine), with this build and, given --old BIN,
# with that binary in the same run.  Clock 0 is skipped (first touches).
#   bench/bytes.sh [--build DIR] [--old BIN] [--procs "2 4 8"]
#       [--apps "mf mlr lda"] [--clocks N] [--kjv FILE] [--opts "OPTIONS"]
# --opts adds run options to every job of both binaries (e.g. "--mode
# flexrr", whose ranks also hold their helpees' rows, dormant until used;
# with "--mode flexrr --rr-rows-from-start" pushed from the start).
# Also the row bytes each rank's shard pushes per clock to the ranks that
# hold the rows (the column `pushed`; the job's total pushed is the total
# received), and the same job with FLEXRR_HOLD_ALL=1 (every rank holds every
# row: the pushes of the data plane before part_rows, in the same run).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build old="" procs="2 4 8" apps="mf mlr lda" clocks=4 kjv="" opts=""
. bench/lib.sh
bench_parse bytes.sh "--build=build --old=old --procs=procs --apps=apps --clocks=clocks --kjv=kjv --opts=opts" "$@"
bench_need_bin bytes.sh "$build/bin/flexrr"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"
read -r -a extra <<<"$opts"

app_args() { # app
	case $1 in
	mf) echo "mf --synthetic 200000,20000,2000000 --rank 32" ;;
	mlr) echo "mlr --data fashion-mnist --train-limit 20000 --test-limit 1000 --no-progress" ;;
	lda) echo "lda --text $kjv --topics 100 --no-progress" ;;
	esac
}

# mean bytes received per rank per clock (clocks >= 1), from the CSV
per_rank() { # csv P
	awk -F, -v P="$2" 'NR > 1 && $1 >= 1 { b[$1] += $8 }
		END { n = 0; s = 0; for (c in b) { s += b[c]; n++ }
		      printf "%.0f", n ? s / n / P : 0 }' "$1"
}

# mean row bytes pushed (= received) per rank per clock (clocks >= 1)
pushed_per_rank() { # csv P
	awk -F, -v P="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pushed") k = i }
		NR > 1 && $1 >= 1 && k { b[$1] += $k }
		END { n = 0; s = 0; for (c in b) { s += b[c]; n++ }
		      printf "%.0f", n ? s / n / P : 0 }' "$1"
}

pushes() { # app P: "new all ratio" row bytes pushed per rank per clock
	local b all
	for hold in 0 1; do
		# shellcheck disable=SC2046
		FLEXRR_HOLD_ALL=$hold "$build/bin/flexrr" run -q --no-pin --backend shm \
			-n "$2" -t 1 --clocks "$clocks" --metrics "$tmp/p.csv" "${extra[@]}" \
			$(app_args "$1") >/dev/null 2>"$tmp/err" || { echo "failed - -"; return; }
		if [ $hold = 0 ]; then b=$(pushed_per_rank "$tmp/p.csv" "$2")
		else all=$(pushed_per_rank "$tmp/p.csv" "$2"); fi
	done
	echo "$b $all $(awk -v n="$b" -v o="$all" 'BEGIN { printf "%.3f", o ? n / o : 0 }')"
}

echo "app	procs	binary	batch_bytes_per_rank_per_clock	new_vs_old	rows_pushed_per_rank_per_clock	hold_all	held_vs_all"
for app in $apps; do
	for P in $procs; do
		new_b="" 
		for which in new old; do
			bin=$build/bin/flexrr
			if [ $which = old ]; then
				[ -n "$old" ] || continue
				bin=$old
			fi
			# shellcheck disable=SC2046
			if ! "$bin" run -q --no-pin --backend shm -n "$P" -t 1 \
				--clocks "$clocks" --metrics "$tmp/m.csv" "${extra[@]}" \
				$(app_args "$app") >/dev/null 2>"$tmp/err"; then
				echo "$app	$P	$which	failed: $(tail -1 "$tmp/err")"
				continue
			fi
			b=$(per_rank "$tmp/m.csv" "$P")
			ratio=-
			if [ $which = new ]; then
				new_b=$b
			elif [ -n "$new_b" ] && [ "$b" != 0 ]; then
				ratio=$(awk -v n="$new_b" -v o="$b" 'BEGIN { printf "%.3f", n / o }')
			fi
			push="-	-	-"
			if [ $which = new ]; then
				read -r pn pa pr <<<"$(pushes "$app" "$P")"
				push="$pn	$pa	$pr"
			fi
			echo "$app	$P	$which	$b	$ratio	$push"
		done
	done
done
