#!/usr/bin/env bash
# What the server's idle polls cost the workers (not a test): the study's
# part (b) shapes (2 x 1 workers, one per core, shm: mf 10 M ratings at
# rank 8 over 20 clocks, mlr on Fashion-MNIST over 15, lda at 200 topics
# over 60) without stragglers and with a CPU hog on worker 0's core, in
# bsp, ssp and flexrr (slack 1), with this build and, given --old BIN, with
# that binary (e.g. a build whose server naps a fixed 200 us), interleaved,
# --reps times.  Prints each run's seconds for all clocks, then per case
# the medians and this build's over the old one's.
#   bench/server-naps.sh [--build DIR] [--old BIN] [--reps N]
#       [--apps "lda mf mlr"] [--patterns "none contention:0"] [--kjv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build old="" reps=3 apps="lda mf mlr" patterns="none contention:0" kjv=""
. bench/lib.sh
bench_parse server-naps.sh "--build=build --old=old --reps=reps --apps=apps --patterns=patterns --kjv=kjv" "$@"
new=$build/bin/flexrr
bench_need_bin server-naps.sh "$new"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"

app_args() { # app -> clocks, app and its options (bench/experiment.sh part b)
	case $1 in
	mf) echo "--clocks 20 mf --synthetic 100000,2000,10000000 --rank 8" ;;
	mlr) echo "--clocks 15 mlr --data fashion-mnist" ;;
	lda) echo "--clocks 60 lda --text $kjv --topics 200" ;;
	esac
}

echo "app	pattern	mode	binary	rep	time_s" | tee "$tmp/runs"
for rep in $(seq 1 "$reps"); do
	for app in $apps; do
		for pat in $patterns; do
			for mode in bsp ssp flexrr; do
				for which in new old; do
					bin=$new
					if [ $which = old ]; then
						[ -n "$old" ] || continue
						bin=$old
					fi
					sl=""
					[ $mode = bsp ] || sl="--slack 1"
					# shellcheck disable=SC2046,SC2086
					if ! "$bin" run -n 2 -t 1 --backend shm --seed 1 \
						--mode $mode $sl --stragglers $pat \
						$(app_args "$app") >"$tmp/out" 2>"$tmp/err"; then
						echo "server-naps.sh: $app $pat $mode ($which) failed:" >&2
						tail -3 "$tmp/err" >&2
						exit 1
					fi
					t=$(sed -n 's/^flexrr: done .* time_s=\([^ ]*\).*/\1/p' "$tmp/out")
					echo "$app	$pat	$mode	$which	$rep	$t" | tee -a "$tmp/runs"
				done
			done
		done
	done
done
echo
echo "app	pattern	mode	median_new_s	median_old_s	new/old"
times_of() { # app pattern mode which -> its runs' seconds, one a line
	awk -F'\t' -v k="$1	$2	$3	$4" 'NR > 1 && $1 "\t" $2 "\t" $3 "\t" $4 == k { print $6 }' "$tmp/runs"
}
for app in $apps; do
	for pat in $patterns; do
		for mode in bsp ssp flexrr; do
			mn=$(times_of "$app" "$pat" "$mode" new | bench_median)
			mo=$(times_of "$app" "$pat" "$mode" old | bench_median)
			printf '%s\t%s\t%s\t%.3f\t%s\t%s\n' "$app" "$pat" "$mode" "$mn" \
				"${mo:--}" "$([ -n "$mo" ] && awk -v a="$mn" -v b="$mo" 'BEGIN { printf "%.3f", a / b }' || echo -)"
		done
	done
done
