#!/usr/bin/env bash
# Start-up time and peak memory per rank of one 'flexrr run' (docs/benchmarks.md,
# issue 13).  Runs BIN run ARGS...; start-up = wall time minus the run's time_s
# (the clocks), peak memory = each rank's VmHWM (/proc/PID/status, sampled every
# 0.2 s while the ranks live: a high-water mark, so the last sample is the peak).
# Run it with --clocks 1 so the clocks add little.
set -euo pipefail
case ${1:-} in
-h | --help)
	echo "usage: bench/mf-startup.sh BIN run -n P ... --clocks 1 mf ..."
	exit 0
	;;
"")
	echo "usage: bench/mf-startup.sh BIN run -n P ... --clocks 1 mf ..." >&2
	exit 2
	;;
esac
bin=$1
shift
log=$(mktemp /tmp/frr-startup-XXXXXX)
t0=$(date +%s.%N)
"$bin" "$@" >"$log" 2>&1 &
launcher=$!
declare -A hwm
while kill -0 "$launcher" 2>/dev/null; do
	kids=$(pgrep -P "$launcher" || true)
	for pid in $launcher $kids $(for k in $kids; do pgrep -P "$k" || true; done); do
		v=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$v" ] && hwm[$pid]=$v
	done
	sleep 0.2
done
wait "$launcher" && rc=0 || rc=$?
t1=$(date +%s.%N)
grep -E "error|done " "$log" | tail -3
clocks=$(grep -o 'time_s=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
echo "exit=$rc wall_s=$(echo "$t1 - $t0" | bc) clocks_s=${clocks:-?}" \
	"startup_s=$(echo "$t1 - $t0 - ${clocks:-0}" | bc)"
for pid in "${!hwm[@]}"; do
	[ "$pid" = "$launcher" ] && who=launcher || who=rank
	echo "$who pid $pid VmHWM $((hwm[$pid] / 1024)) MiB"
done
rm -f "$log"
