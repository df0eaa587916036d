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
# --backend verbs on a host without an RDMA device boots the soft-RoCE VM
# (scripts/softroce-vm.sh: rxe0, 2 emulated CPUs) and runs all of it there,
# write_bw and the jobs on the same rxe0 (one VM: the ranks talk through
# rxe's loopback, not the VM pair's virtual wire).
#   bench/comm.sh [--build DIR] [--backend shm|verbs] [--procs "2 4"]
#       [--apps "mf lda"] [--clocks N] [--kjv FILE] [--mf USERS,ITEMS,RATINGS]
set -euo pipefail
cd "$(dirname "$0")/.."

args=("$@")
build=build backend=shm procs="2 4" apps="mf lda" clocks=6 kjv=""
mf=200000,20000,2000000
. bench/lib.sh
bench_parse comm.sh "--build=build --backend=backend --procs=procs --apps=apps --clocks=clocks --kjv=kjv --mf=mf" "$@"
bin=$build/bin/flexrr
bench_need_bin comm.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$backend" = verbs ] && [ -z "${RXE_DEV:-}" ] &&
	! ls /sys/class/infiniband 2>/dev/null | grep -q .; then
	# the guest sees only this tree: make the corpus inside it
	if [ -z "$kjv" ] && [[ " $apps " == *" lda "* ]]; then
		kjv=$PWD/$build/comm-kjv.txt
		scripts/make-kjv-corpus.sh "$kjv" >/dev/null
		args+=(--kjv "$kjv")
	fi
	bench_in_vm 3000 "$bin" "${args[@]}"
fi
bench_kjv "$tmp"

if [ -n "${RXE_DEV:-}" ]; then
	# in the VM: the server side in the background, the client to it
	vb=(--backend verbs -d "$RXE_DEV" -x "$RXE_GID_IDX" -s 1M -n 300)
	"$bin" bench write_bw "${vb[@]}" >"$tmp/bw-srv" 2>&1 &
	spid=$!
	sleep 1
	bw=$("$bin" bench write_bw "${vb[@]}" -- "$RXE_IP" 2>/dev/null |
		awk '$1 == 1048576 { print $4 }') || true
	wait $spid || true
else
	bw=$("$bin" bench write_bw --backend "$backend" -s 1M -n 300 2>/dev/null |
		awk '$1 == 1048576 { print $4 }')
fi
[ -n "$bw" ] || { echo "comm.sh: flexrr bench write_bw printed no figure" >&2; exit 1; }
echo "# write_bw, 1 MiB writes, $backend${RXE_DEV:+ ($RXE_DEV in the soft-RoCE VM)}: $bw MB/s"

app_args() { # app
	case $1 in
	mf) echo "mf --synthetic $mf --rank 32" ;;
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
