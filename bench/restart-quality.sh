#!/usr/bin/env bash
# Quality and cost of --on-failure restart or recover (issue 22 item 5; not
# a test): for each app and seed, the job uninterrupted, then the same job
# with checkpoints every 2 clocks in which rank 1 SIGKILLs itself at a
# random clock (env FLEXRR_TEST_DIE, the test hook: an emulated crash) and
# the launcher restarts it from the newest checkpoint (restart), or the
# survivor carries on from it, running rank 1 too (recover).  Prints per run the
# final objectives and the time the death cost, then per app whether every
# restarted run's objective lies within the spread of the uninterrupted
# ones.  BSP restarts are exact (test_runtime_checkpoint); the interesting
# modes are those whose result depends on timing (default flexrr).
#   bench/restart-quality.sh [--build DIR] [--mode M] [--seeds N]
#       [--apps "mf lda mlr"] [--kjv FILE] [--on-failure restart|recover]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build mode=flexrr seeds=5 apps="mf lda" kjv="" how=restart
. bench/lib.sh
bench_parse restart-quality.sh "--build=build --mode=mode --seeds=seeds --apps=apps --kjv=kjv --on-failure=how" "$@"
case $how in
restart) said='restarting the job' ;;
recover) said='recovering (epoch' ;;
*) echo "restart-quality.sh: --on-failure restart or recover, not '$how'" >&2; exit 2 ;;
esac
bin=$build/bin/flexrr
bench_need_bin restart-quality.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"
clocks=16
app_args() {
	case $1 in
	mf) echo "mf --synthetic 20000,2000,400000 --rank 16" ;;
	lda) echo "lda --text $kjv --topics 20 --no-progress" ;;
	mlr) echo "mlr --data fashion-mnist --train-limit 6000 --test-limit 1000 --no-progress" ;;
	*) echo "restart-quality.sh: no job for app '$1'" >&2; exit 2 ;;
	esac
}
objective() { sed -n 's/^flexrr: done .* objective=\([^ ]*\).*/\1/p' "$1"; }

echo "mode $mode, -n 2 -t 2, $clocks clocks, checkpoints every 2, rank 1 killed at a random clock, --on-failure $how"
printf '%-4s %-4s %-6s %-14s %-14s %-8s %s\n' app seed killed objective "$how"ed ref_s extra_s
for app in $apps; do
	refs=() rest=()
	for ((s = 1; s <= seeds; s++)); do
		# shellcheck disable=SC2046
		job=(run -q --no-pin --backend shm -n 2 -t 2 --mode "$mode" --clocks "$clocks" --seed "$s")
		t0=$(date +%s.%N)
		"$bin" "${job[@]}" $(app_args "$app") >"$tmp/ref.out" 2>"$tmp/ref.err" ||
			{ echo "uninterrupted $app seed $s failed:"; tail -3 "$tmp/ref.err"; exit 1; }
		t1=$(date +%s.%N)
		at=$((2 + RANDOM % (clocks - 4)))
		rm -rf "$tmp/ck" "$tmp/died"
		# shellcheck disable=SC2046
		FLEXRR_TEST_DIE=1:$at:$tmp/died "$bin" "${job[@]}" --checkpoint "$tmp/ck" \
			--checkpoint-every 2 --on-failure "$how" $(app_args "$app") \
			>"$tmp/re.out" 2>"$tmp/re.err" ||
			{ echo "$how $app seed $s failed:"; tail -3 "$tmp/re.err"; exit 1; }
		t2=$(date +%s.%N)
		grep -qF "$said" "$tmp/re.err" ||
			{ echo "$app seed $s: no $how happened:"; tail -3 "$tmp/re.err"; exit 1; }
		a=$(objective "$tmp/ref.out") b=$(objective "$tmp/re.out")
		refs+=("$a") rest+=("$b")
		awk -v app="$app" -v s="$s" -v at="$at" -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v t2="$t2" \
			'BEGIN { printf "%-4s %-4s %-6s %-14s %-14s %-8.2f %.2f\n", app, s, at, a, b, t1 - t0, (t2 - t1) - (t1 - t0) }'
	done
	printf '%s\n' "${refs[@]}" >"$tmp/refs"
	printf '%s\n' "${rest[@]}" >"$tmp/rest"
	awk -v app="$app" -v how="$how" 'NR == FNR { if (lo == "" || $1 < lo) lo = $1; if (hi == "" || $1 > hi) hi = $1; next }
		{ n++; if ($1 >= lo && $1 <= hi) in_++; if (rlo == "" || $1 < rlo) rlo = $1; if (rhi == "" || $1 > rhi) rhi = $1 }
		END { printf "%s: uninterrupted %s .. %s, %sed %s .. %s: %d of %d within the uninterrupted spread\n", app, lo, hi, how, rlo, rhi, in_, n }' \
		"$tmp/refs" "$tmp/rest"
done
