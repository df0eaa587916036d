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
# rxe's loopback, not the VM pair's virtual wire).  With --vms 2 it boots
# the VM pair instead (2 emulated CPUs each, one virtual wire): write_bw
# runs from VM b to VM a, and a job of P ranks runs P/2 in each VM (rank 0
# in VM a), each rank started as a launcher starts it (FLEXRR_RANK, ...), so
# half of every rank's traffic crosses the wire (--dead-timeout 20000 there:
# four emulated CPUs on a 2-core host starve rxe, and a flush of the
# default third of 5 s failed once in 5 runs).  Per job it also prints the
# split of the communication (flush, apply + push) for where the time goes.
# On shm it also measures write_bw with the writes rotating over 256 MiB
# (--span: memory bandwidth; the 1 MiB loop stays in the caches, a clock's
# tens of MB do not) and gives the ratio against both.
#   bench/comm.sh [--build DIR] [--backend shm|verbs] [--procs "2 4"]
#       [--apps "mf lda"] [--clocks N] [--kjv FILE] [--mf USERS,ITEMS,RATINGS]
#       [--vms 1|2]
set -euo pipefail
cd "$(dirname "$0")/.."

args=("$@")
build=build backend=shm procs="2 4" apps="mf lda" clocks=6 kjv="" vms=1
mf=200000,20000,2000000 scratch=""
. bench/lib.sh
bench_parse comm.sh "--build=build --backend=backend --procs=procs --apps=apps --clocks=clocks --kjv=kjv --mf=mf --vms=vms --scratch=scratch" "$@"
case $vms in 1 | 2) ;; *) echo "comm.sh: --vms takes 1 or 2" >&2; exit 2 ;; esac
[ "$vms" = 1 ] || [ "$backend" = verbs ] ||
	{ echo "comm.sh: --vms 2 needs --backend verbs" >&2; exit 2; }
bin=$build/bin/flexrr
bench_need_bin comm.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$backend" = verbs ] && [ -z "${RXE_DEV:-}" ] &&
	! ls /sys/class/infiniband 2>/dev/null | grep -q .; then
	# the guest sees only this tree: the binary and the corpus inside it
	bdir=$(cd "$build" && pwd)
	case $bdir/ in "$PWD"/*) ;; *)
		echo "comm.sh: --backend verbs here boots the soft-RoCE VM, which sees only this tree: give a --build inside $PWD" >&2
		exit 2 ;;
	esac
	if [ -z "$kjv" ] && [[ " $apps " == *" lda "* ]]; then
		kjv=$bdir/comm-kjv.txt
		scripts/make-kjv-corpus.sh "$kjv" >/dev/null
		args+=(--kjv "$kjv")
	fi
	if [ "$vms" = 2 ]; then
		# the pair's scratch: in the shared tree, judged there by VM a
		scratch=$(mktemp -d "$bdir/comm-pair.XXXXXX")
		trap 'rm -rf "$tmp" "$scratch"' EXIT
		od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$scratch/token"
		scripts/softroce-vm.sh pair --smp 2 --timeout 3000 --share "$PWD" \
			--libs-of "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" -- \
			"$(printf '%q ' bash bench/comm.sh "${args[@]}" --scratch "$scratch")" |
			sed -n 's/^[ab]| \(#\|app\|mf\|lda\|mlr\)/\1/p'
		exit "${PIPESTATUS[0]}"
	fi
	bench_in_vm 3000 "$bin" "${args[@]}"
fi
bench_kjv "$tmp"

if [ -n "${SOFTROCE_VM:-}" ]; then
	# in the pair (scripts/lib/pair.sh): VM b writes across the wire to VM a
	. scripts/lib/pair.sh
	pair_write_bw "$bin" "$scratch" 300 || exit 1
	bw=$pair_bw
elif [ -n "${RXE_DEV:-}" ]; then
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
	# the same writes rotating over 256 MiB: memory bandwidth, which a
	# clock's tens of MB of batches and pushes see on shm (the 1 MiB loop
	# above stays in the caches)
	bwm=$("$bin" bench write_bw --backend "$backend" -s 1M -n 1000 --span 256M 2>/dev/null |
		awk '$1 == 1048576 { print $4 }')
fi
bwm=${bwm:-$bw}
[ -n "$bw" ] || { echo "comm.sh: flexrr bench write_bw printed no figure" >&2; exit 1; }
where="${RXE_DEV:+ ($RXE_DEV in the soft-RoCE VM)}"
[ -n "${SOFTROCE_VM:-}" ] && where=" ($RXE_DEV, VM b to VM a across the pair's wire)"
echo "# write_bw, 1 MiB writes, $backend$where: $bw MB/s; rotating over 256 MiB: $bwm MB/s"

app_args() { # app
	case $1 in
	mf) echo "mf --synthetic $mf --rank 32" ;;
	lda) echo "lda --text $kjv --topics 100 --no-progress" ;;
	mlr) echo "mlr --data fashion-mnist --train-limit 20000 --test-limit 1000 --no-progress" ;;
	esac
}

# run_job APP P METRICS: the job on this host or VM, or this VM's half of
# it in the pair (ranks 0 .. P/2 - 1 in VM a, the rest in VM b); 0 or not
port=7300
run_job() {
	local app=$1 P=$2 m=$3 r lo hi rc=0
	if [ -z "${SOFTROCE_VM:-}" ]; then
		# shellcheck disable=SC2046
		"$bin" run -q --no-pin --backend "$backend" -n "$P" -t 1 \
			--clocks "$clocks" --metrics "$m" $(app_args "$app") \
			>/dev/null 2>"$tmp/err"
		return
	fi
	port=$((port + 1))
	lo=0 hi=$((P / 2))
	[ "$SOFTROCE_VM" = b ] && lo=$((P / 2)) hi=$P
	# shellcheck disable=SC2046
	pair_ranks "$bin" "$scratch" "job-$app-$P" "$port" "$P" \
		"$(cat "$scratch/token")-$app-$P" "$tmp/r" -q --no-pin -t 1 \
		--dead-timeout 20000 --clocks "$clocks" --metrics "$m" \
		$(app_args "$app") || rc=1
	# every rank's first error line here (the others only follow it)
	for ((r = lo; r < hi; r++)); do
		grep -m1 'error' "$tmp/r.$r.err" || true
	done >"$tmp/err"
	return $rc
}

[ "${SOFTROCE_VM:-a}" = a ] &&
	echo "app	procs	comm_ms_per_rank_clock	bytes_per_rank_clock	wire_ms	comm_vs_wire	flush_ms	apply_push_ms	wire_ms_256M	comm_vs_wire_256M"
for app in $apps; do
	for P in $procs; do
		m=$tmp/m.csv
		[ -n "${SOFTROCE_VM:-}" ] && m=$scratch/m-$app-$P.csv
		if ! run_job "$app" "$P" "$m"; then
			echo "$app	$P	failed (VM ${SOFTROCE_VM:-host}): $(tr '\n' ' ' <"$tmp/err")"
			continue
		fi
		[ "${SOFTROCE_VM:-a}" = a ] || continue
		awk -F, -v P="$P" -v bw="$bw" -v bwm="$bwm" -v app="$app" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$1 >= 1 {
				fl += $col["flush_s"]; ap += $col["apply_s"]
				bytes += $col["bytes"] + $col["pushed"]
				n[$1] = 1
			}
			END {
				c = 0; for (k in n) c++
				if (!c) { print app "\t" P "\tno clocks"; exit }
				cm = (fl + ap) / c / P * 1000; by = bytes / c / P
				wire = by / (bw * 1e6) * 1000
				ratio = wire > 0 ? cm / wire : 0
				wm = by / (bwm * 1e6) * 1000
				printf "%s\t%d\t%.3f\t%.0f\t%.3f\t%.2f\t%.3f\t%.3f\t%.3f\t%.2f\n",
				       app, P, cm, by, wire, ratio, fl / c / P * 1000,
				       ap / c / P * 1000, wm, (wm > 0 ? cm / wm : 0)
			}' "$m"
	done
done
