#!/usr/bin/env bash
# test-slurm.sh BUILD_DIR - the Slurm stage (scripts/test.sh runs it): a real
# one-node Slurm cluster (Debian's slurm-wlm, munge) started by this script
# in a temp dir, then
#   srun    srun -n 4 flexrr run ... toy: the summary line says procs=4 and
#           equals the one of the same job started locally (flexrr run -n 4);
#           the ranks met at the TCP rendezvous (no PMIx without --mpi=pmix)
#   pmix    srun -n 4 --mpi=pmix: the same line, and the ranks met through
#           PMIx (rank 0's stderr says 'bootstrap pmix')
#   sbatch  sbatch --wait of a script whose one step is srun flexrr run ...:
#           its output file has the same summary line
#   pin     srun -n 2 with FLEXRR_LOG=debug: the two ranks' threads pin to
#           different CPUs (node-local ranks 0 and 1, from SLURM_LOCALID)
#   die     rank 1 of an srun -n 4 job SIGKILLs itself at clock 5: the
#           step fails, and srun again with --resume DIR (the batch loop of
#           docs/cluster.md) ends with the uninterrupted job's summary
#   recover the same death with --on-failure recover: one srun, the
#           survivors carry on (rank 2's process runs rank 1 too) and print
#           the uninterrupted job's summary; srun exits 137; ranks that met
#           at the TCP rendezvous, and through PMIx (--mpi=pmix); and
#           through PMIx without --checkpoint (one node: rank 0's directory
#           in memory, gone after the job)
#   doctor  the preflight, srun -n 2 flexrr doctor --json: one JSON line per
#           task, and srun's exit status 1 exactly when one says unhealthy
#           (this host may have no RDMA device: unhealthy is fine here)
# Everything runs in a private network namespace (unshare -n) that has only
# loopback: the daemons' ports cannot collide with anything on the host and no
# packet can leave it.  The node declares 4 CPUs whatever the machine has
# (SlurmdParameters=config_overrides), so 4 tasks fit on 2 cores.  munged,
# slurmctld and slurmd are stopped on any exit, with every process left in
# the namespace (slurmstepd, tasks).  Installs slurm-wlm and munge if missing.
# Options: --keep (keep the temp dir: configuration and logs), -h/--help.
set -euo pipefail
build="" keep=0
for a in "$@"; do
	case $a in
	--keep) keep=1 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "test-slurm.sh: unknown option '$a' (see --help)" >&2; exit 2 ;;
	*) build=$a ;;
	esac
done
[ -n "$build" ] || { echo "usage: scripts/test-slurm.sh BUILD_DIR (see --help)" >&2; exit 2; }
[ -x "$build/bin/flexrr" ] || { echo "test-slurm.sh: no $build/bin/flexrr: build it first (scripts/setup.sh)" >&2; exit 2; }
build=$(cd "$build" && pwd)
log() { printf '[test-slurm %s] %s\n' "$(date +%T)" "$*"; }

# ---- outside the namespace: packages, then re-run inside a fresh one
if [ "${FLEXRR_SLURM_NETNS:-}" != "$$" ]; then
	missing=()
	for p in slurm-wlm munge; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		[ "$(id -u)" = 0 ] || { echo "test-slurm.sh: missing ${missing[*]}: run as root or apt-get install ${missing[*]}" >&2; exit 2; }
		log "apt-get install ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
	fi
	command -v unshare >/dev/null && unshare -n true 2>/dev/null ||
		{ echo "test-slurm.sh: cannot create a network namespace (unshare -n): run as root" >&2; exit 2; }
	# exec keeps the pid, which tells the inner run it is inside
	export FLEXRR_SLURM_NETNS=$$
	exec unshare -n -- bash "$0" "$@"
fi

# ---- inside: only lo exists.  Slurm resolves even "127.0.0.1" with
# AI_ADDRCONFIG, which glibc answers only when some IPv4 address other than
# 127.0.0.1 is configured: a second loopback address is enough.
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
t0=$SECONDS
dir=$(mktemp -d /tmp/flexrr-slurm.XXXXXX)
chmod 700 "$dir"
mynet=$(readlink /proc/$$/ns/net)
pids=()
cleanup() {
	local p left=()
	set +e
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null; done
	for _ in $(seq 1 50); do
		left=()
		for p in ${pids[@]+"${pids[@]}"}; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
		[ ${#left[@]} = 0 ] && break
		sleep 0.2
	done
	for p in ${left[@]+"${left[@]}"}; do kill -9 "$p" 2>/dev/null; done
	# whatever else runs in this namespace was started by this script
	# (slurmstepd, tasks of a failed step): stop it, by pid
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$mynet" ] || continue
		log "stopping leftover pid $p ($(cat "/proc/$p/comm" 2>/dev/null))"
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ $keep = 1 ]; then log "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# ---- munge: our own daemon, key and socket
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge.key"
munged -F --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
	--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
	--seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
pids+=($!)

# ---- slurm.conf: one node, 4 CPUs, everything under $dir
host=$(hostname -s)
export SLURM_CONF=$dir/slurm.conf # never let a client look for a config elsewhere (DNS)
cat >"$SLURM_CONF" <<EOF
# flexrr test cluster (scripts/test-slurm.sh): one node, runs as root
ClusterName=flexrr
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=flexrr-node NodeAddr=127.0.0.1 CPUs=4 RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=flexrr-node Default=YES MaxTime=10 State=UP
EOF
mkdir -p "$dir/state" "$dir/spool"
for _ in $(seq 1 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge.sock" ] || { log "munged did not start:"; cat "$dir/munged.out" "$dir/munged.log" 2>/dev/null; exit 1; }
slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N flexrr-node >"$dir/slurmd.out" 2>&1 &
pids+=($!)
state=""
while [ $((SECONDS - t0)) -lt 60 ]; do
	state=$(timeout 5 sinfo -h -N -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.2
done
if [ "$state" != idle ]; then
	log "the node did not come up (state '${state:-none}'); logs:"
	tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/*.out 2>/dev/null || true
	exit 1
fi
log "slurmctld + slurmd up ($(sinfo -h -o '%P %D node(s) %c cpus %T'), $((SECONDS - t0)) s)"

# ---- the jobs
B=$build/bin/flexrr
args=(run --backend shm --clocks 5 --seed 3 toy --items 30)
fails=0 results=() ntests=0
summary() { { grep -m1 '^flexrr: done' "$1" 2>/dev/null || true; } | sed -E 's/ time_s=[^ ]*//'; }
# show FILE...: the last lines of each file that exists (diagnostics never
# end the script: under set -e a failing tail would hide the results)
show() { local f; for f in "$@"; do [ -e "$f" ] && { echo "--- $f (last lines)"; tail -n 5 "$f"; }; done; return 0; }
verdict() { # ok name detail
	ntests=$((ntests + 1))
	if [ "$1" = 1 ]; then results+=("PASS  $2: $3"); else
		results+=("FAIL  $2: $3"); fails=$((fails + 1))
	fi
}
"$B" "${args[@]:0:1}" -n 4 "${args[@]:1}" >"$dir/local.out" 2>/dev/null
want=$(summary "$dir/local.out")

# srun_job NAME BOOTSTRAP [srun options]: 4 tasks, met through BOOTSTRAP
srun_job() {
	local name=$1 boot=$2 s=$SECONDS rc=0 got how ok=0
	shift 2
	timeout 120 srun -n 4 --time=2 "$@" "$B" "${args[@]}" >"$dir/$name.out" 2>"$dir/$name.err" || rc=$?
	got=$(summary "$dir/$name.out")
	how=$(grep -m1 '^flexrr: bootstrap' "$dir/$name.err" || true)
	[ $rc = 0 ] && [ -n "$got" ] && [ "$got" = "$want" ] && [[ $got == *" procs=4 "* ]] &&
		[[ $how == "flexrr: bootstrap $boot"* ]] && ok=1
	verdict $ok "srun -n 4${*:+ $*} ($((SECONDS - s)) s)" "exit $rc; '${how:-no bootstrap line}'; '${got:-no summary line}'"
	[ $ok = 1 ] || show "$dir/$name.err"
}
# a job secret for the ranks that meet over tcp (srun exports the
# environment by default); the pmix job has it too
export FLEXRR_JOB_TOKEN=$(openssl rand -hex 32)
srun_job srun tcp
srun_job pmix pmix --mpi=pmix

# two ranks on one node pin their threads to different CPUs: the node-local
# rank comes from srun's SLURM_LOCALID (FLEXRR_LOG=debug names each CPU)
s=$SECONDS rc=0
FLEXRR_LOG=debug timeout 60 srun -n 2 --time=1 "$B" run --backend shm --clocks 2 -q \
	toy --items 30 >"$dir/pin.out" 2>"$dir/pin.err" || rc=$?
pins=$(grep -o 'node-local rank [0-9]*, thread 0) pinned to CPU [0-9]*' "$dir/pin.err" || true)
npins=$(printf '%s' "$pins" | grep -c . || true)
ncpus=$(printf '%s\n' "$pins" | sed 's/.*CPU //' | sort -u | grep -c . || true)
ok=0
[ $rc = 0 ] && [ "$npins" = 2 ] && [ "$ncpus" = 2 ] &&
	grep -q 'node-local rank 0,' <<<"$pins" && grep -q 'node-local rank 1,' <<<"$pins" && ok=1
verdict $ok "srun -n 2 pins to 2 CPUs ($((SECONDS - s)) s)" "exit $rc; $(tr '\n' ';' <<<"${pins:-no pinned lines}")"
[ $ok = 1 ] || show "$dir/pin.err"

s=$SECONDS rc=0
cat >"$dir/job.sh" <<EOF
#!/bin/bash
#SBATCH --ntasks=4
#SBATCH --time=2
#SBATCH --output=$dir/sbatch.out
srun $B ${args[*]}
EOF
timeout 150 sbatch --wait "$dir/job.sh" >"$dir/sbatch.submit" 2>&1 || rc=$?
got=$(summary "$dir/sbatch.out")
ok=0
[ $rc = 0 ] && [ -n "$got" ] && [ "$got" = "$want" ] && ok=1
verdict $ok "sbatch --wait ($((SECONDS - s)) s)" "exit $rc; $(head -1 "$dir/sbatch.submit"); '${got:-no summary line}'"
[ $ok = 1 ] || show "$dir/sbatch.out" "$dir/sbatch.submit"

# a rank dies (FLEXRR_TEST_DIE: rank 1 SIGKILLs itself at clock 5, once):
# srun ends the step, and the batch script's loop of docs/cluster.md ("When
# a rank dies": srun again, with --resume DIR once DIR has a checkpoint)
# ends with the uninterrupted answer
s=$SECONDS tries=0 rc=1 first=""
ck=$dir/ck
rargs=(--backend shm --clocks 8 --seed 3)
"$B" run -n 4 "${rargs[@]}" toy --items 30 >"$dir/die-ref.out" 2>/dev/null
dwant=$(summary "$dir/die-ref.out")
rm -rf "$ck" "$dir/died"
while [ $rc != 0 ] && [ $tries -lt 3 ]; do
	tries=$((tries + 1)) rc=0
	resume=()
	[ -e "$ck/latest" ] && resume=(--resume "$ck")
	FLEXRR_TEST_DIE=1:5:$dir/died timeout 120 srun -n 4 --time=2 "$B" run "${rargs[@]}" \
		--checkpoint "$ck" --checkpoint-every 2 "${resume[@]}" toy --items 30 \
		>"$dir/die.out" 2>"$dir/die-$tries.err" || rc=$?
	[ $tries = 1 ] && first="exit $rc: $(grep -m1 -E '^srun: error' "$dir/die-1.err" || echo 'no srun error line')"
done
got=$(summary "$dir/die.out")
ok=0
[ $rc = 0 ] && [ $tries = 2 ] && [ -n "$got" ] && [ "$got" = "$dwant" ] && ok=1
verdict $ok "srun loop after a rank died ($((SECONDS - s)) s)" "$tries srun(s); first $first; then '${got:-no summary line}'"
[ $ok = 1 ] || show "$dir"/die-*.err "$dir/die.out"

# --on-failure recover under srun (docs/cluster.md): the same death, one
# srun; the survivors (srun leaves them running: KillOnBadExit is 0) agree
# who is left, rank 2's process runs rank 1 too, and the job ends with the
# uninterrupted answer; srun's exit is the killed task's (137).  Both ways
# of meeting: the TCP rendezvous, and PMIx (--mpi=pmix), after which the
# survivors meet again over TCP; the last without --checkpoint (all tasks
# on this one node: rank 0's directory in memory, removed at the end)
for boot in tcp pmix pmix-mem; do
	s=$SECONDS rc=0
	rm -rf "$ck" "$dir/died"
	how=(--bootstrap tcp) mpi=() ckpt=(--checkpoint "$ck")
	[ $boot != tcp ] && how=(--bootstrap pmix) mpi=(--mpi=pmix)
	[ $boot = pmix-mem ] && ckpt=()
	FLEXRR_TEST_DIE=1:5:$dir/died timeout 120 srun -n 4 --time=2 "${mpi[@]}" "$B" run "${rargs[@]}" \
		"${how[@]}" "${ckpt[@]}" --checkpoint-every 2 --on-failure recover \
		toy --items 30 >"$dir/rec-$boot.out" 2>"$dir/rec-$boot.err" || rc=$?
	got=$(summary "$dir/rec-$boot.out" | sed -E 's/ recovered: .*//')
	mem=$(sed -n 's|.* in memory at \(/dev/shm/flexrr-ckpt-[A-Za-z0-9]*\),.*|\1|p' "$dir/rec-$boot.err" | head -1)
	ok=0
	[ $rc = 137 ] && [ -n "$got" ] && [ "$got" = "$dwant" ] &&
		grep -q 'recovering (epoch 1): this process runs ranks 1, 2' "$dir/rec-$boot.err" &&
		grep -q "^flexrr: bootstrap ${boot%-mem}" "$dir/rec-$boot.err" && ok=1
	if [ $boot = pmix-mem ] && { [ -z "$mem" ] || [ -e "$mem" ]; }; then
		ok=0 got="checkpoints in memory: '${mem:-none announced}' not removed ($got)"
	fi
	verdict $ok "srun --on-failure recover after a rank died, ranks met through ${boot/-mem/ without --checkpoint} ($((SECONDS - s)) s)" "exit $rc; '${got:-no summary line}'"
	[ $ok = 1 ] || show "$dir/rec-$boot.err" "$dir/rec-$boot.out"
done

s=$SECONDS rc=0
timeout 60 srun -n 2 --time=1 "$B" doctor --json >"$dir/doctor.out" 2>"$dir/doctor.err" || rc=$?
lines=$(grep -c '^{"host":"' "$dir/doctor.out" || true)
bad=$(grep -c '"verdict":"unhealthy"' "$dir/doctor.out" || true)
ok=0
[ "$lines" = 2 ] && [ "$(wc -l <"$dir/doctor.out")" = 2 ] &&
	{ { [ $rc = 0 ] && [ "$bad" = 0 ]; } || { [ $rc = 1 ] && [ "$bad" != 0 ]; }; } && ok=1
verdict $ok "srun -n 2 flexrr doctor --json ($((SECONDS - s)) s)" "exit $rc; $lines JSON line(s), $bad unhealthy; $(head -c 100 "$dir/doctor.out")..."
[ $ok = 1 ] || show "$dir/doctor.out" "$dir/doctor.err"

echo
echo "Slurm (one node, 4 CPUs) results; want '$want':"
printf '  %s\n' "${results[@]}"
if [ $fails != 0 ]; then
	for f in slurmctld.log slurmd.log; do
		echo "--- $f (last lines)"
		tail -n 8 "$dir/$f" || true
	done
fi
echo "test-slurm: $((ntests - fails)) of $ntests passed; $((SECONDS - t0)) s"
[ $fails = 0 ]
