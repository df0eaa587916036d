#!/usr/bin/env bash
# Peak memory of whole jobs (not a test), issue 21's measure: for each
# mode and shape, sampled every 50 ms:
#   job_avail: MemAvailable before the job minus its lowest while the job
#     runs, as issue 21 measures and judges it (moves with every other
#     process on the host and with the page cache);
#   job_pss (bench/memsample.py): the highest sum of the job's processes'
#     PSS (a page shared by k processes counts 1/k in each), what the job
#     itself holds, shown beside it because other users do not move it;
#   rank_own: each rank's highest RSS without the pages of the other
#     ranks' regions it writes into (the holder's memory, in the holder's
#     RSS too): what lives in the rank, which is what job/memplan.c plans
#     (plan_mib: rank:peak:untouched, its figure in step and how much of
#     it shm leaves untouched until used, FLEXRR_LOG=debug; woke:
#     rank:woken/dormant, the (owner, helpee rank) pairs whose rows it
#     woke of those it held dormant);
#   rank_rss: each rank's peak RSS (VmHWM: the job's "peak memory per
#     rank" line).  With --old BIN the
# same jobs run with that binary too, interleaved, so the table shows the
# ratio of the two data planes measured in one run on one machine.
# --opts "..." adds run options to the build's jobs only (e.g. --opts
# --no-standby --old build/bin/flexrr: one binary with and without).
#   bench/memory.sh [--build DIR] [--old BIN] [--modes "bsp ssp flexrr"]
#       [--shapes "1x1 1x2 1x4 2x1 2x2 4x1"] [--synthetic U,I,R] [--rank K]
#       [--clocks N] [--stragglers SPEC] [--opts "OPTIONS"] [--out FILE.tsv]
# Default job: mf --synthetic 2000000,20000,4000000 --rank 64 (user and
# item rows of 65 floats: 0.53 GB of tables), 3 clocks, ssp/flexrr with
# --slack 1.  --stragglers SPEC (flexrr run's, e.g. persistent:0,2) slows a
# worker, so flexrr's helpers fill their help caches (without it they stay
# nearly empty and the plan's help-cache bound is not exercised).
# Other users of the machine move MemAvailable too: run it on
# an idle machine; every row says which binary and what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build old="" modes="bsp ssp flexrr" shapes="1x1 1x2 1x4 2x1 2x2 4x1"
synth=2000000,20000,4000000 rank=64 clocks=3 out="" strag="" opts=""
. bench/lib.sh
bench_parse memory.sh "--build=build --old=old --modes=modes --shapes=shapes --synthetic=synth --rank=rank --clocks=clocks --stragglers=strag --opts=opts --out=out" "$@"
new=$build/bin/flexrr
bench_need_bin memory.sh "$new"
IFS=, read -r users items ratings <<<"$synth"
model=$(( (users + items) * (rank + 1) * 4 ))
# the input: ratings (user, item, value: 12 bytes) as loaded
input=$(( ratings * 12 ))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

avail_kib() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

# one job: prints "peak_job_mib rank_peaks rc job_pss_mib rank_own plans"
measure() { # bin mode P T [run options...]
	local bin=$1 mode=$2 P=$3 T=$4 before low now pid rc=0 slack=()
	shift 4
	slack=("$@")
	[ "$mode" = bsp ] || slack+=(--slack 1)
	[ -z "$strag" ] || slack+=(--stragglers "$strag")
	before=$(avail_kib); low=$before
	FLEXRR_LOG=debug /usr/bin/python3 bench/memsample.py -- \
		"$bin" run --no-pin --backend shm -n "$P" -t "$T" --mode "$mode" \
		"${slack[@]}" --clocks "$clocks" mf --synthetic "$synth" \
		--rank "$rank" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		now=$(avail_kib)
		[ "$now" -lt "$low" ] && low=$now
		sleep 0.05
	done
	wait "$pid" || rc=$?
	local ranks pss own plan
	ranks=$(sed -n 's/^flexrr: peak memory per rank (MiB): \(.*\);.*/\1/p' "$tmp/err")
	pss=$(sed -n 's/^memsample: job_pss_mib=\([0-9]*\) .*/\1/p' "$tmp/err")
	own=$(sed -n 's/^memsample: .* rank_own_mib=\([^ ]*\) .*/\1/p' "$tmp/err" | tr , ' ')
	# job/memplan.c's plan of each rank's peak (in step), FLEXRR_LOG=debug
	# rank:peak:untouched, untouched the pages shm leaves alone until
	# used (helpees' dormant rows, the pull room; rank:peak from a
	# binary older than that figure)
	plan=$(sed -n -e 's/.*memory plan of rank \([0-9]*\): .*peak about \([0-9]*\) MiB.*; \([0-9]*\) MiB of it untouched.*/\1:\2:\3/p' \
		-e 's/.*memory plan of rank \([0-9]*\): .*peak about \([0-9]*\) MiB.*/\1:\2/p' \
		"$tmp/err" | sort -n | tr '\n' ' ')
	# rank:woken/dormant, the (owner, helpee rank) pairs whose dormant
	# rows each rank woke (table/hold.c's end line; "-" from a binary
	# older than it)
	woke=$(sed -n 's/.*rank \([0-9]*\) held .* woke \([0-9]*\) of the \([0-9]*\) (owner, helpee rank) pairs.*/\1:\2\/\3/p' \
		"$tmp/err" | sort -n | tr '\n' ' ')
	if [ $rc != 0 ]; then
		ranks="failed: $(grep -m1 -E 'error|killed' "$tmp/err" | cut -c1-160)"
	fi
	echo "$(( (before - low) / 1024 ))	${ranks:-n/a}	$rc	${pss:-0}	${own:-n/a}	${plan:-n/a}	${woke:--}"
}

awk -v m="$model" -v i="$input" -v u="$users" -v it="$items" -v c=$((rank + 1)) \
	'BEGIN { printf "model %.3f GB (users %s, items %s, %s cols), input %.3f GB\n", m / 1e9, u, it, c, i / 1e9 }'
header="mode	shape	binary	job_avail_mib	x_model_input	job_pss_mib	x_pss	rank_own_mib	plan_mib	woke	rank_rss_mib	rc"
echo "$header"
[ -z "$out" ] || echo "$header" >"$out"
for mode in $modes; do
	for shape in $shapes; do
		P=${shape%x*} T=${shape#*x}
		for which in new old; do
			bin=$new extra=()
			read -r -a extra <<<"$opts"
			if [ $which = old ]; then
				[ -n "$old" ] || continue
				bin=$old extra=()
			fi
			IFS=$'\t' read -r peak ranks rc pss own plan woke < <(measure "$bin" "$mode" "$P" "$T" "${extra[@]}")
			x=$(awk -v p="$peak" -v m="$model" -v i="$input" 'BEGIN { printf "%.2f", p * 1048576 / (m + i) }')
			xp=$(awk -v p="$pss" -v m="$model" -v i="$input" 'BEGIN { printf "%.2f", p * 1048576 / (m + i) }')
			row="$mode	$shape	$which	$peak	$x	$pss	$xp	$own	$plan	$woke	$ranks	$rc"
			echo "$row"
			[ -z "$out" ] || echo "$row" >>"$out"
		done
	done
done
