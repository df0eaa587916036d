#!/usr/bin/env bash
# Per-clock communication against the wire time of its bytes (not a test;
# issue 21's third measure).  In one run: `flexrr bench write_bw` on the
# backend (1 MiB writes: the bandwidth BW), then jobs with --metrics; per
# rank and clock (clocks >= 1) the communication is the workers' flush_s
# (sending their update batches) plus the server's apply_s (applying the
# clock and pushing its rows), the bytes are the batches' payload plus the
# rows pushed, and the wire time is bytes / BW.  The ratio is the mean of
# communication over the mean wire time; apply_s includes the adds of the
# apply itself, so the ratio is an upper bound on the transport's share.
#   bench/comm.sh [--build DIR] [--backend shm|verbs] [--procs "2 4"]
#       [--apps "mf lda"] [--clocks N] [--kjv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build backend=shm procs="2 4" apps="mf lda" clocks=6 kjv=""
. bench/lib.sh
bench_parse comm.sh "--build=build --backend=backend --procs=procs --apps=apps --clocks=clocks --kjv=kjv" "$@"
bin=$build/bin/flexrr
bench_need_bin comm.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"

bw=$("$bin" bench write_bw --backend "$backend" -s 1M -n 300 2>/dev/null |
	awk '$1 == 1048576 { print $4 }')
[ -n "$bw" ] || { echo "comm.sh: flexrr bench write_bw printed no figure" >&2; exit 1; }
echo "# write_bw, 1 MiB writes, $backend: $bw MB/s"

app_args() { # app
	case $1 in
	mf) echo "mf --synthetic 200000,20000,2000000 --rank 32" ;;
	lda) echo "lda --text $kjv --topics 100 --no-progress" ;;
	mlr) echo "mlr --data fashion-mnist --train-limit 20000 --test-limit 1000 --no-progress" ;;
	esac
}

echo "app	procs	comm_ms_per_rank_clock	bytes_per_rank_clock	wire_ms	comm_vs_wire"
for app in $apps; do
	for P in $procs; do
		# shellcheck disable=SC2046
		if ! "$bin" run -q --no-pin --backend "$backend" -n "$P" -t 1 \
			--clocks "$clocks" --metrics "$tmp/m.csv" \
			$(app_args "$app") >/dev/null 2>"$tmp/err"; then
			echo "$app	$P	failed: $(tail -1 "$tmp/err")"
			continue
		fi
		awk -F, -v P="$P" -v bw="$bw" -v app="$app" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$1 >= 1 {
				comm += $col["flush_s"] + $col["apply_s"]
				bytes += $col["bytes"] + $col["pushed"]
				n[$1] = 1
			}
			END {
				c = 0; for (k in n) c++
				if (!c) { print app "\t" P "\tno clocks"; exit }
				cm = comm / c / P * 1000; by = bytes / c / P
				wire = by / (bw * 1e6) * 1000
				ratio = wire > 0 ? cm / wire : 0
				printf "%s\t%d\t%.3f\t%.0f\t%.3f\t%.2f\n", app, P, cm,
				       by, wire, ratio
			}' "$tmp/m.csv"
	done
done
