#!/usr/bin/env bash
# softroce-compare.sh [BUILD_DIR] - flexrr bench vs perftest on one soft-RoCE
# device, in ONE boot of the soft-RoCE VM (scripts/softroce-vm.sh):
#   flexrr bench write_lat -s 8 / write_bw -s 65536 over verbs, and
#   ib_write_lat -s 8 / ib_write_bw -s 65536 (perftest) on the same rxe0,
# alternating, ROUNDS times each; prints every table, then the line
#   lat_ratio=X bw_ratio=Y
# (ours / perftest: median t_typical at 8 B, median BW average at 64 KiB;
# goals: lat_ratio <= 1.10, bw_ratio >= 0.90).  Servers run on vCPU 0,
# clients on vCPU 1 (taskset), for both tools.
# Options: --rounds N (3), --lat-iters N (1000), --bw-iters N (2000), -h.
# On a host with its own RDMA device use perftest and flexrr bench directly.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
build=$ROOT/build rounds=3 lat_n=1000 bw_n=2000 guest=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift ;;
	--lat-iters) lat_n=$2; shift ;;
	--bw-iters) bw_n=$2; shift ;;
	--guest) guest=1 ;;
	-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "softroce-compare.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd) ;;
	esac
	shift
done

if [ $guest = 0 ]; then
	[ -x "$build/bin/flexrr" ] || { echo "softroce-compare.sh: no $build/bin/flexrr: build first (scripts/setup.sh)" >&2; exit 2; }
	case $build/ in "$ROOT"/*) ;; *) echo "softroce-compare.sh: $build must be inside $ROOT" >&2; exit 2 ;; esac
	exec "$ROOT/scripts/softroce-vm.sh" run --timeout 900 --share "$ROOT" --libs-of "$build/bin/flexrr" -- \
		"bash $ROOT/bench/softroce-compare.sh --guest --rounds $rounds --lat-iters $lat_n --bw-iters $bw_n $build"
fi

# ---- in the guest: rxe0 exists, RXE_DEV / RXE_GID_IDX / RXE_IP are set ----
D=$RXE_DEV X=$RXE_GID_IDX IP=$RXE_IP
flexrr=$build/bin/flexrr
out=/tmp/compare
mkdir -p $out
pair() { # name server-cmd... -- client-args (client = server cmd + args)
	local name=$1 s=() rc
	shift
	while [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	# server on vCPU 0, client on vCPU 1, for both tools alike: fewer
	# migrations, less noise from the emulated scheduler
	timeout 300 taskset -c 0 "${s[@]}" >"$out/$name.srv" 2>&1 &
	local spid=$!
	sleep 1
	rc=0
	timeout 300 taskset -c 1 "${s[@]}" "$@" >"$out/$name" 2>&1 || rc=$?
	[ $rc = 0 ] || kill $spid 2>/dev/null || true
	wait $spid || true
	cat "$out/$name"
	[ $rc = 0 ] || { echo "softroce-compare: $name failed ($rc); server said:"; cat "$out/$name.srv"; return 1; }
}
# first data row: the line after the column header, column $col
value() { [ -f "$out/$1" ] || return 0; awk -v col="$2" 'hdr && NF >= col && $1 ~ /^[0-9]+$/ {print $col; exit} /#bytes/ {hdr=1}' "$out/$1"; }
# median of the finite values (perftest prints inf/nan when a run is disturbed)
median() { awk '$1 ~ /^[0-9.]+$/' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }

echo "soft-RoCE compare: $D gid $X ip $IP, $(nproc) vCPUs, $rounds round(s)"
# a failed run (perftest's TCP exchange is fragile under load) is retried once,
# then left out of the medians; every failure is printed
failed=0
try() { # name server-cmd... -- client-args
	pair "$@" && return 0
	sleep 2
	echo "softroce-compare: retrying $1"
	pair "$@" && return 0
	rm -f "$out/$1"
	failed=$((failed + 1))
}
for r in $(seq 1 "$rounds"); do
	try "perftest_lat_$r" ib_write_lat -d "$D" -x "$X" -s 8 -n "$lat_n" -- "$IP"
	try "flexrr_lat_$r" "$flexrr" bench write_lat --backend verbs -d "$D" -x "$X" -s 8 -n "$lat_n" -- "$IP"
	try "perftest_bw_$r" ib_write_bw -d "$D" -x "$X" -s 65536 -n "$bw_n" -- "$IP"
	try "flexrr_bw_$r" "$flexrr" bench write_bw --backend verbs -d "$D" -x "$X" -s 65536 -n "$bw_n" -- "$IP"
done
pl=$(for r in $(seq 1 "$rounds"); do value "perftest_lat_$r" 5; done | median)
fl=$(for r in $(seq 1 "$rounds"); do value "flexrr_lat_$r" 5; done | median)
pb=$(for r in $(seq 1 "$rounds"); do value "perftest_bw_$r" 4; done | median)
fb=$(for r in $(seq 1 "$rounds"); do value "flexrr_bw_$r" 4; done | median)
echo
echo "summary (medians of $rounds rounds; $failed run(s) failed twice and are left out):"
printf '  %-34s %12s %12s\n' "" perftest flexrr
printf '  %-34s %12s %12s\n' "write latency 8 B, t_typical [us]" "$pl" "$fl"
printf '  %-34s %12s %12s\n' "write BW 64 KiB, average [MB/s]" "$pb" "$fb"
awk -v pl="$pl" -v fl="$fl" -v pb="$pb" -v fb="$fb" 'BEGIN {
	if (pl <= 0 || pb <= 0) { print "softroce-compare: missing figures"; exit 1 }
	printf "lat_ratio=%.3f bw_ratio=%.3f\n", fl / pl, fb / pb }'
