#!/bin/bash
# Runs in both VMs of `softroce-vm.sh pair` for scripts/test-2vm.sh: flexrr jobs
# of two ranks, rank 0 in VM a and rank 1 in VM b, each started the way a
# launcher starts a rank (FLEXRR_RANK, FLEXRR_SIZE, FLEXRR_RENDEZVOUS = VM a's
# address, FLEXRR_JOB_TOKEN = the secret test-2vm.sh wrote), over --backend verbs.
#   guest-pair.sh BUILD_DIR SCRATCH
# SCRATCH (shared by both VMs and the host) holds the inputs (token, bsp.args)
# and, per job NAME and VM V, NAME.V.out / .err / .rc / .time; test-2vm.sh
# judges them.  Before each job both VMs wait for each other (files in
# SCRATCH: the VMs boot and finish jobs at different times, and a rank waits
# only 20 s at the rendezvous); in the kill job they coordinate there too.
# Jobs: bsp (BSP, fixed seed), rr (FlexRR, persistent straggler on rank 0,
# every item exactly once: test_rr_job), mtu (VM b's netdev MTU raised to
# 4200 first), recover (rank 1 SIGKILLs itself at clock 3, --on-failure
# recover: rank 0 runs both ranks from the checkpoint in SCRATCH), unshared
# (--checkpoint in each VM's own /tmp: refused at the start), kill (VM b
# SIGKILLs its rank mid-job; VM a times its rank's exit).
build=$1 out=$2
vm=$SOFTROCE_VM
B=$build/bin/flexrr
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(up)" 'BEGIN{printf "%.2f", b-a}'; }
if [ "$vm" = a ]; then rank=0; else rank=1; fi
export FLEXRR_SIZE=2 FLEXRR_RANK=$rank FLEXRR_TEST_BACKENDS=verbs
token=$(cat "$out/token")
rdv_ip=192.168.77.1 # VM a: rank 0 listens there

# barrier NAME: wait (up to 240 s) until the other VM reached NAME too
. "$(dirname "$0")/../lib/pair.sh"
barrier() { pair_barrier "$out" "$1"; }

# job NAME PORT CMD...: run this VM's rank of job NAME, bounded
job() {
	local name=$1 port=$2 t0 rc
	shift 2
	barrier "$name"
	echo "=== 2vm $vm: job $name (rank $rank)"
	t0=$(up)
	FLEXRR_RENDEZVOUS=$rdv_ip:$port FLEXRR_JOB_TOKEN=$token-$name \
		timeout 240 "$@" >"$out/$name.$vm.out" 2>"$out/$name.$vm.err"
	rc=$?
	echo "$rc" >"$out/$name.$vm.rc"
	since "$t0" >"$out/$name.$vm.time"
	echo "=== 2vm $vm: job $name: exit $rc ($(cat "$out/$name.$vm.time") s)"
}

echo "2vm $vm: rank $rank on $RXE_DEV/$RXE_NETDEV $RXE_IP, peer $RXE_PEER_IP, $(nproc) cpu(s)"
read -r -a bsp_args <"$out/bsp.args"
job bsp 7101 "$B" run --backend verbs "${bsp_args[@]}"

# Recover: rank 1 (VM b) SIGKILLs itself at clock 3; rank 0 finds its socket
# closed, runs rank 1 beside its own from the checkpoint both VMs share
job recover 7105 env FLEXRR_TEST_DIE=1:3:$out/recover.died "$B" run --backend verbs \
	--bootstrap tcp --checkpoint "$out/recover.ck" --checkpoint-every 1 \
	--on-failure recover "${bsp_args[@]}"

# A checkpoint directory the VMs do not share (each its own /tmp): refused
# at the start by both ranks, rank 0 naming rank 1 and its host
job unshared 7106 "$B" run --backend verbs --checkpoint /tmp/unshared.ck \
	"${bsp_args[@]}"

job rr 7102 "$build/tests/test_rr_job" --jobs 1 \
	--filter 'rr_job/launcher_started_rank_across_hosts'

# MTU mismatch: VM b's netdev MTU 4200 gives rxe0 an active MTU of 4096
# there, VM a keeps 1024; the job must warn and still finish.
# rxe re-reads the MTU on the netdev event: wait (up to 10 s) for the port
# to be ACTIVE with the new active MTU before starting the rank.
if [ "$vm" = b ]; then
	/usr/sbin/ip link set "$RXE_NETDEV" mtu 4200
	for _ in $(seq 1 100); do
		[ "$(cat "/sys/class/infiniband/$RXE_DEV/ports/1/state")" = "4: ACTIVE" ] &&
			ibv_devinfo -d "$RXE_DEV" | grep -q 'active_mtu:.*4096' && break
		sleep 0.1
	done
fi
ibv_devinfo -d "$RXE_DEV" | awk '/active_mtu/{print $2, $3}' >"$out/mtu.$vm.active"
job mtu 7103 "$B" run --backend verbs "${bsp_args[@]}"
[ "$vm" = b ] && /usr/sbin/ip link set "$RXE_NETDEV" mtu 1500

# Kill: a long job; once rank 0 has printed clock 3, VM b SIGKILLs rank 1
# and writes kill.mark; VM a timestamps the mark and its rank's exit
# (polling every 20 ms: the measured delay is short by at most that and
# 9p's latency).
kill_args=(run --backend verbs --clocks 100000 --seed 5 toy --items 40 --sleep-us 200)
barrier kill
echo "=== 2vm $vm: job kill (rank $rank)"
export FLEXRR_RENDEZVOUS=$rdv_ip:7104 FLEXRR_JOB_TOKEN=$token-kill
t0=$(up)
if [ "$vm" = a ]; then
	rm -f "$out/kill.a.done"
	(
		timeout 120 "$B" "${kill_args[@]}" >"$out/kill.a.out" 2>"$out/kill.a.err"
		echo $? >"$out/kill.a.done"
	) &
	tm="" te=""
	for _ in $(seq 1 6000); do # 120 s
		[ -z "$tm" ] && [ -e "$out/kill.mark" ] && tm=$(up)
		[ -z "$te" ] && [ -e "$out/kill.a.done" ] && te=$(up)
		[ -n "$tm" ] && [ -n "$te" ] && break
		sleep 0.02
	done
	wait
	cp "$out/kill.a.done" "$out/kill.a.rc" 2>/dev/null || echo 255 >"$out/kill.a.rc"
	if [ -n "$tm" ] && [ -n "$te" ]; then
		awk -v a="$tm" -v b="$te" 'BEGIN{printf "%.2f", b-a}' >"$out/kill.a.delay"
	fi
	echo "=== 2vm a: job kill: rank 0 exit $(cat "$out/kill.a.rc"), $(cat "$out/kill.a.delay" 2>/dev/null || echo '?') s after the kill"
else
	"$B" "${kill_args[@]}" >"$out/kill.b.out" 2>"$out/kill.b.err" &
	pid=$!
	for _ in $(seq 1 1200); do # 120 s for rank 0's 'clock 3'
		grep -q 'clock 3 ' "$out/kill.a.err" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid"
	touch "$out/kill.mark"
	wait "$pid"
	echo $? >"$out/kill.b.rc"
	echo "=== 2vm b: job kill: rank 1 SIGKILLed after $(since "$t0") s (exit $(cat "$out/kill.b.rc"))"
fi
since "$t0" >"$out/kill.$vm.time"
exit 0
