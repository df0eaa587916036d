#!/usr/bin/env bash
# A job whose model does not fit one process's memory but fits the job's
# (issue 21's measure; not a test: it needs root and memory cgroups).
#   1. the job on one big process (1 x P*T threads, no limit): its answer;
#   2. the same process in a memory cgroup of LIMIT = model x --frac (0.5:
#      the model is twice the limit): refused by the memory check, or
#      killed by the kernel;
#   3. P ranks of T threads, each started by hand (tcp bootstrap on
#      127.0.0.1) inside its own cgroup of LIMIT: it must run, and its BSP
#      summary must equal run 1's (time_s, procs and threads aside).
# Prints each rank's cgroup peak (what the kernel charged it: its memory
# and the shm pages it touched first) and its peak RSS against LIMIT.
#   bench/fits.sh [--build DIR] [--procs P] [--threads T] [--frac F]
#       [--synthetic U,I,R] [--rank K] [--clocks N]
# Default: 16 x 1, mf --synthetic 400000,4000,1600000 --rank 64 (0.105 GB
# of tables), 3 clocks, F 0.5.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build P=16 T=1 frac=0.5 synth=400000,4000,1600000 rank=64 clocks=3
. bench/lib.sh
bench_parse fits.sh "--build=build --procs=P --threads=T --frac=frac --synthetic=synth --rank=rank --clocks=clocks" "$@"
bin=$build/bin/flexrr
bench_need_bin fits.sh "$bin"
[ "$(id -u)" = 0 ] || { echo "fits.sh: needs root (it makes memory cgroups)" >&2; exit 1; }
IFS=, read -r users items ratings <<<"$synth"
model=$(( (users + items) * (rank + 1) * 4 ))
limit=$(awk -v m="$model" -v f="$frac" 'BEGIN { printf "%d", m * f }')
W=$((P * T))
tmp=$(mktemp -d)
cgs=()

# --- memory cgroups: v2 (a sibling under the root, whose subtree may
# enable memory) or v1 (a child of this shell's memory cgroup) ---
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cgv=2 cgroot=/sys/fs/cgroup
	grep -qw memory $cgroot/cgroup.subtree_control ||
		echo +memory >$cgroot/cgroup.subtree_control
elif [ -d /sys/fs/cgroup/memory ]; then
	cgv=1
	cgroot=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
else
	echo "fits.sh: no memory cgroup (v1 or v2) under /sys/fs/cgroup" >&2
	exit 1
fi
cleanup() {
	local c
	for c in "${cgs[@]}"; do
		[ -d "$c" ] || continue
		# the ranks have exited; anything left (a killed rank's children)
		# goes back to the root before the directory can go
		while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$c/cgroup.procs"
		rmdir "$c" 2>/dev/null || true
	done
	[ -n "${FITS_KEEP:-}" ] && echo "fits.sh: outputs kept in $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
mkcg() { # name: a cgroup limited to $limit bytes, no swap, in $c
	c=$cgroot/flexrr-fits-$$-$1
	mkdir "$c"
	cgs+=("$c")
	if [ $cgv = 2 ]; then
		echo "$limit" >"$c/memory.max"
		[ -f "$c/memory.swap.max" ] && echo 0 >"$c/memory.swap.max"
	else
		echo "$limit" >"$c/memory.limit_in_bytes"
	fi
}
cgpeak() { # cgroup dir -> MiB
	local f=memory.max_usage_in_bytes
	[ $cgv = 2 ] && f=memory.peak
	[ -f "$1/$f" ] && awk '{ printf "%.0f", $1 / 1048576 }' "$1/$f" || echo n/a
}
# run_in CGROUP CMD...: CMD inside the cgroup (moved there before exec)
run_in() {
	local c=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$c" "$@"
}
opts=(--no-pin --backend shm --mode bsp --clocks "$clocks")
app=(mf --synthetic "$synth" --rank "$rank")
summary() { sed -n 's/^flexrr: done //p' "$1" | sed -E 's/ (procs|threads|time_s)=[^ ]*//g'; }

awk -v m="$model" -v l="$limit" -v P="$P" -v T="$T" 'BEGIN {
	printf "model %.1f MiB; limit per process %.1f MiB (model / limit %.2f); job %d x %d\n",
	       m / 1048576, l / 1048576, m / l, P, T }'

echo "== 1. one process, $W threads, no limit"
s=$SECONDS
"$bin" run "${opts[@]}" -n 1 -t "$W" "${app[@]}" >"$tmp/one.err" 2>&1 ||
	{ echo "fits.sh: the one-process job failed:"; tail -5 "$tmp/one.err"; exit 1; }
one=$(summary "$tmp/one.err")
echo "   $one ($((SECONDS - s)) s); $(grep -m1 'peak memory per rank' "$tmp/one.err")"

echo "== 2. one process, $W threads, in a cgroup of $((limit / 1048576)) MiB"
mkcg one
rc=0
run_in "$c" "$bin" run "${opts[@]}" -n 1 -t "$W" "${app[@]}" >"$tmp/lim.err" 2>&1 || rc=$?
if [ $rc = 0 ]; then
	echo "   it ran (cgroup peak $(cgpeak "$c") MiB): the limit does not bite; raise the model or lower --frac"
	exit 1
fi
why=$(grep -m1 -E 'error|killed' "$tmp/lim.err" || true)
[ $rc -gt 128 ] && why="killed by signal $((rc - 128)) (the kernel's OOM killer)"
echo "   refused or killed as it should be (exit $rc): ${why:-$(tail -1 "$tmp/lim.err")}"

echo "== 3. $P ranks x $T threads, each in its own cgroup of $((limit / 1048576)) MiB"
port=$((20000 + RANDOM % 20000))
export FLEXRR_RENDEZVOUS=127.0.0.1:$port FLEXRR_SIZE=$P
FLEXRR_JOB_TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export FLEXRR_JOB_TOKEN
pids=()
s=$SECONDS
for ((r = 0; r < P; r++)); do
	mkcg "r$r"
	FLEXRR_RANK=$r run_in "$c" "$bin" run "${opts[@]}" -t "$T" "${app[@]}" >"$tmp/r$r.err" 2>&1 &
	pids+=($!)
done
fail=0
for ((r = 0; r < P; r++)); do
	rc=0
	wait "${pids[$r]}" || rc=$?
	if [ $rc != 0 ]; then
		fail=1
		echo "   rank $r exit $rc: $(grep -m1 -E 'error|killed' "$tmp/r$r.err" || tail -1 "$tmp/r$r.err")"
	fi
done
secs=$((SECONDS - s))
peaks=""
for ((r = 0; r < P; r++)); do peaks+=" $(cgpeak "${cgs[$((r + 1))]}")"; done
echo "   cgroup peaks (MiB):$peaks (limit $((limit / 1048576)))"
echo "   $(grep -m1 'peak memory per rank' "$tmp/r0.err" || echo 'rank 0 printed no peak line')"
[ $fail = 0 ] || { echo "fits.sh: the $P-rank job failed under the limit"; exit 1; }
many=$(summary "$tmp/r0.err")
echo "   $many ($secs s)"
if [ "$many" = "$one" ]; then
	echo "fits: PASS: $P ranks under $((limit / 1048576)) MiB each ran the job one process cannot, and its BSP summary equals the one-process run's"
else
	echo "fits: FAIL: the summaries differ:"
	echo "   one process: $one"
	echo "   $P ranks:    $many"
	exit 1
fi
