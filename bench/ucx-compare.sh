#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# flexrr's shm backend vs UCX (posix,self) on this host, side by side in one
# run, and the ratios against the goals of issue 2:
#   8-byte counter latency   flexrr counter_lat -s 8  <= 1.5 x ucp_put_lat -s 8
#   1 MiB write bandwidth    flexrr write_bw -s 1M    >= 0.8 x ucp_put_bw -s 1M
# Pairs run interleaved for ROUNDS rounds; medians are compared, so a busy
# machine hurts both sides alike.  Both sides pin to CPUs 0 and 1.
#
# usage: bench/ucx-compare.sh [--rounds R] [--lat-iters N] [--bw-iters N]
#                             [--flexrr PATH]
# needs: ucx_perftest (Debian/Ubuntu: apt install ucx-utils)
set -euo pipefail

ROUNDS=5
LAT_ITERS=100000
BW_ITERS=2000
here=$(cd "$(dirname "$0")" && pwd)
FLEXRR=${FLEXRR_BIN:-}

usage() {
	sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--lat-iters) LAT_ITERS=$2; shift 2 ;;
	--bw-iters) BW_ITERS=$2; shift 2 ;;
	--flexrr) FLEXRR=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "ucx-compare.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ -z "$FLEXRR" ]; then
	for c in "$here/../build/bin/flexrr" "$here"/../build-*/bin/flexrr; do
		if [ -x "$c" ]; then FLEXRR=$c; break; fi
	done
fi
if [ -z "$FLEXRR" ] || [ ! -x "$FLEXRR" ]; then
	echo "ucx-compare.sh: no flexrr binary; build first (cmake --build build) or pass --flexrr PATH" >&2
	exit 2
fi
if ! command -v ucx_perftest >/dev/null; then
	echo "ucx-compare.sh: ucx_perftest not found; install it (apt install ucx-utils)" >&2
	exit 2
fi

tmp=$(mktemp -d)
srv_pid=
cleanup() {
	if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
port=$((20000 + $$ % 20000))

export UCX_TLS=posix,self
export UCX_WARN_UNUSED_ENV_VARS=n

# ucx_perftest TEST SIZE ITERS -> the client's final line (-f) on stdout
ucx_run() {
	local test=$1 size=$2 iters=$3 out
	port=$((port + 1))
	timeout 120 ucx_perftest -p "$port" -c 0 >"$tmp/ucx-server.log" 2>&1 &
	srv_pid=$!
	out=
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.2
		if out=$(timeout 120 ucx_perftest 127.0.0.1 -p "$port" -c 1 \
			-t "$test" -s "$size" -n "$iters" -w $((iters / 10)) -f \
			2>"$tmp/ucx-client.err"); then
			break
		fi
		out=
	done
	wait "$srv_pid" 2>/dev/null || true
	srv_pid=
	if [ -z "$out" ]; then
		echo "ucx-compare.sh: ucx_perftest $test failed:" >&2
		cat "$tmp/ucx-client.err" "$tmp/ucx-server.log" >&2
		exit 1
	fi
	echo "$out"
}

# last data line of ucx -f output: iters p50 avg overall bw_avg bw_overall ...
ucx_field() { echo "$1" | awk 'NF >= 7 && $1 ~ /^[0-9]+$/ { l = $0 } END { print l }' | awk -v f="$2" '{ print $f }'; }
json_field() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1" | head -1; }
# shellcheck source=bench/lib.sh
. "$here/lib.sh" # bench_median

echo "flexrr: $FLEXRR"
echo "ucx:    $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1) (UCX_TLS=$UCX_TLS)"
echo "host:   $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds: $ROUNDS (medians compared); latency $LAT_ITERS iterations, bandwidth $BW_ITERS"
echo

for r in $(seq 1 "$ROUNDS"); do
	echo "== round $r/$ROUNDS" >&2
	"$FLEXRR" bench counter_lat -s 8 --backend shm -n "$LAT_ITERS" \
		--json "$tmp/lat.json" >"$tmp/flexrr-lat.txt"
	json_field "$tmp/lat.json" t_typical_us >>"$tmp/f_lat_typ"
	json_field "$tmp/lat.json" t_avg_us >>"$tmp/f_lat_avg"
	u=$(ucx_run ucp_put_lat 8 "$LAT_ITERS")
	echo "$u" >"$tmp/ucx-lat.txt"
	ucx_field "$u" 2 >>"$tmp/u_lat_typ"
	ucx_field "$u" 3 >>"$tmp/u_lat_avg"

	"$FLEXRR" bench write_bw -s 1048576 --backend shm -n "$BW_ITERS" \
		--json "$tmp/bw.json" >"$tmp/flexrr-bw.txt"
	json_field "$tmp/bw.json" bw_avg_mib_s >>"$tmp/f_bw"
	u=$(ucx_run ucp_put_bw 1048576 "$BW_ITERS")
	echo "$u" >"$tmp/ucx-bw.txt"
	ucx_field "$u" 6 >>"$tmp/u_bw"
done

echo "---- flexrr bench counter_lat -s 8 --backend shm (last round)"
cat "$tmp/flexrr-lat.txt"
echo "---- UCX_TLS=posix,self ucx_perftest -t ucp_put_lat -s 8 (last round)"
cat "$tmp/ucx-lat.txt"
echo
echo "---- flexrr bench write_bw -s 1048576 --backend shm (last round)"
cat "$tmp/flexrr-bw.txt"
echo "---- UCX_TLS=posix,self ucx_perftest -t ucp_put_bw -s 1048576 (last round)"
cat "$tmp/ucx-bw.txt"
echo

f_typ=$(bench_median <"$tmp/f_lat_typ"); u_typ=$(bench_median <"$tmp/u_lat_typ")
f_avg=$(bench_median <"$tmp/f_lat_avg"); u_avg=$(bench_median <"$tmp/u_lat_avg")
f_bw=$(bench_median <"$tmp/f_bw"); u_bw=$(bench_median <"$tmp/u_bw")

awk -v ft="$f_typ" -v ut="$u_typ" -v fa="$f_avg" -v ua="$u_avg" \
	-v fb="$f_bw" -v ub="$u_bw" -v rounds="$ROUNDS" 'BEGIN {
	printf "Summary (median of %d rounds; MB = 2^20 bytes on both sides)\n", rounds
	printf "%-38s %12s %12s %9s  %s\n", "metric", "flexrr", "UCX", "ratio", "goal"
	lt = ft / ut; la = fa / ua; bw = fb / ub
	printf "%-38s %12.3f %12.3f %8.2fx  %s\n", "8 B counter latency, typical [usec]", ft, ut, lt, (lt <= 1.5 ? "<= 1.5x: met" : "<= 1.5x: NOT MET")
	printf "%-38s %12.3f %12.3f %8.2fx  %s\n", "8 B counter latency, average [usec]", fa, ua, la, "(info: includes preemption on a busy host)"
	printf "%-38s %12.1f %12.1f %8.2fx  %s\n", "1 MiB write bandwidth [MB/sec]", fb, ub, bw, (bw >= 0.8 ? ">= 0.8x: met" : ">= 0.8x: NOT MET")
	exit !(lt <= 1.5 && bw >= 0.8)
}'
