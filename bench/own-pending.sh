#!/usr/bin/env bash
# What read-my-writes on every ADD table costs and buys under SSP (not a
# test; issue 25 item 1): mf, mlr and lda with --slack 2, with this build
# and, given --old BIN (a build from before it became the default: only
# tables flagged FRR_TABLE_SEE_OWN_PENDING kept their pushes), with that
# binary, interleaved, --reps times.  Per run: seconds for all clocks, the
# objective after them, and the ranks' largest peak RSS.  BSP is not
# measured: it keeps no pending rows (its answer is bit-identical).
#   bench/own-pending.sh [--build DIR] [--old BIN] [--reps N]
#       [--shape "-n 1 -t 2"] [--apps "mf mlr lda"] [--kjv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build old="" reps=3 shape="-n 1 -t 2" apps="mf mlr lda" kjv=""
. bench/lib.sh
bench_parse own-pending.sh "--build=build --old=old --reps=reps --shape=shape --apps=apps --kjv=kjv" "$@"
new=$build/bin/flexrr
bench_need_bin own-pending.sh "$new"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"

app_args() { # app
	case $1 in
	mf) echo "--clocks 10 mf --synthetic 200000,20000,2000000 --rank 32" ;;
	mlr) echo "--clocks 8 mlr --data fashion-mnist --train-limit 20000 --test-limit 2000 --no-progress" ;;
	lda) echo "--clocks 8 lda --text $kjv --topics 100 --no-progress" ;;
	esac
}

echo "app	binary	rep	time_s	objective	max_rank_peak_mib"
for app in $apps; do
	for rep in $(seq 1 "$reps"); do
		for which in new old; do
			bin=$new
			if [ $which = old ]; then
				[ -n "$old" ] || continue
				bin=$old
			fi
			# shellcheck disable=SC2046,SC2086
			if ! "$bin" run --no-pin --backend shm $shape --mode ssp \
				--slack 2 --seed 7 $(app_args "$app") \
				>"$tmp/out" 2>"$tmp/err"; then
				echo "$app	$which	$rep	failed: $(tail -1 "$tmp/err")"
				continue
			fi
			line=$(grep '^flexrr: done' "$tmp/out")
			t=$(sed 's/.* time_s=\([^ ]*\).*/\1/' <<<"$line")
			obj=$(sed 's/.* objective=\([^ ]*\).*/\1/' <<<"$line")
			mib=$(sed -n 's/.*; max \([0-9]*\),.*/\1/p' "$tmp/err")
			echo "$app	$which	$rep	$t	$obj	${mib:--}"
		done
	done
done
