# shellcheck shell=bash
# Sourced inside the VMs of `scripts/softroce-vm.sh pair` (SOFTROCE_VM=a|b,
# RXE_DEV, RXE_GID_IDX, RXE_PEER_IP set) by the scripts that run jobs across
# the pair: bench/comm.sh, scripts/softroce/guest-pair.sh (CI's two-host
# stage) and scripts/softroce/guest-jobs.sh (the simulator's validation
# over the wire).  One copy of the barrier, the bandwidth measure and the
# launch of a job's ranks in both VMs.
#
#   pair_barrier DIR NAME   wait (up to 240 s) until the other VM reached
#                           NAME too (files NAME.a / NAME.b under DIR, a
#                           directory both VMs share); 1 if it did not
#   pair_write_bw BIN DIR N write_bw of N 1 MiB writes from VM b to VM a
#                           (VM a serves); both VMs get the MB/s in
#                           $pair_bw ("" if none), also in DIR/bw
#   pair_ranks BIN DIR NAME PORT P TOKEN OUT ARGS...
#                           this VM's ranks of a job of P ranks (VM a ranks
#                           0 .. P/2 - 1, VM b the rest), each started as a
#                           launcher starts it (FLEXRR_RANK, FLEXRR_SIZE,
#                           FLEXRR_RENDEZVOUS = VM a's address:PORT,
#                           FLEXRR_JOB_TOKEN = TOKEN), `BIN run --backend
#                           verbs ARGS...` under a 600 s timeout; rank r's
#                           stdout and stderr in OUT.r.out / OUT.r.err, its
#                           status in OUT.r.rc; after a barrier NAME, and
#                           a barrier NAME-done once all ended; 0 if every
#                           rank here exited 0

pair_barrier() {
	local dir=$1 name=$2 other=b
	[ "$SOFTROCE_VM" = b ] && other=a
	touch "$dir/sync.$name.$SOFTROCE_VM"
	for _ in $(seq 1 4800); do
		[ -e "$dir/sync.$name.$other" ] && return 0
		sleep 0.05
	done
	echo "pair: VM $other did not reach '$name' within 240 s" >&2
	return 1
}

pair_write_bw() {
	local bin=$1 dir=$2 n=$3
	local vb=(--backend verbs -d "$RXE_DEV" -x "$RXE_GID_IDX" -s 1M -n "$n")
	pair_barrier "$dir" bw || return 1
	if [ "$SOFTROCE_VM" = a ]; then
		timeout 300 "$bin" bench write_bw "${vb[@]}" >/dev/null 2>&1 || true
	else
		sleep 1
		timeout 300 "$bin" bench write_bw "${vb[@]}" -- "$RXE_PEER_IP" 2>/dev/null |
			awk '$1 == 1048576 { print $4 }' >"$dir/bw" || true
	fi
	pair_barrier "$dir" bw-done || return 1
	pair_bw=$(cat "$dir/bw" 2>/dev/null || true)
}

pair_ranks() {
	local bin=$1 dir=$2 name=$3 port=$4 P=$5 token=$6 out=$7 r lo hi rc=0
	local pids=()
	shift 7
	pair_barrier "$dir" "$name" || return 1
	lo=0 hi=$((P / 2))
	[ "$SOFTROCE_VM" = b ] && lo=$((P / 2)) hi=$P
	for ((r = lo; r < hi; r++)); do
		(
			FLEXRR_RANK=$r FLEXRR_SIZE=$P \
				FLEXRR_RENDEZVOUS=192.168.77.1:$port \
				FLEXRR_JOB_TOKEN=$token \
				timeout 600 "$bin" run --backend verbs "$@" \
				>"$out.$r.out" 2>"$out.$r.err"
			echo $? >"$out.$r.rc"
		) &
		pids+=($!)
	done
	for r in "${pids[@]}"; do wait "$r"; done
	for ((r = lo; r < hi; r++)); do
		[ "$(cat "$out.$r.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	pair_barrier "$dir" "$name-done" || return 1
	return $rc
}
