#!/usr/bin/env bash
# Peak memory of whole jobs (not a test), issue 21's measure: for each
# mode and shape, the job's peak is MemAvailable before the job minus the
# lowest MemAvailable sampled every 50 ms while it runs (what the host
# really gave it: shared transport regions counted once), beside the ranks'
# own peak RSS (the job's "peak memory per rank" line).  With --old BIN the
# same jobs run with that binary too, interleaved, so the table shows the
# ratio of the two data planes measured in one run on one machine.
#   bench/memory.sh [--build DIR] [--old BIN] [--modes "bsp ssp flexrr"]
#       [--shapes "1x1 1x2 1x4 2x1 2x2 4x1"] [--synthetic U,I,R] [--rank K]
#       [--clocks N] [--out FILE.tsv]
# Default job: mf --synthetic 2000000,20000,4000000 --rank 64 (user and
# item rows of 65 floats: 0.53 GB of tables), 3 clocks, ssp/flexrr with
# --slack 1.  Other users of the machine move MemAvailable too: run it on
# an idle machine; every row says which binary and what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build old="" modes="bsp ssp flexrr" shapes="1x1 1x2 1x4 2x1 2x2 4x1"
synth=2000000,20000,4000000 rank=64 clocks=3 out=""
. bench/lib.sh
bench_parse memory.sh "--build=build --old=old --modes=modes --shapes=shapes --synthetic=synth --rank=rank --clocks=clocks --out=out" "$@"
new=$build/bin/flexrr
bench_need_bin memory.sh "$new"
IFS=, read -r users items ratings <<<"$synth"
model=$(( (users + items) * (rank + 1) * 4 ))
# the input: ratings (user, item, value: 12 bytes) as loaded
input=$(( ratings * 12 ))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

avail_kib() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

# one job: prints "peak_job_mib rank_peaks rc"
measure() { # bin mode P T
	local bin=$1 mode=$2 P=$3 T=$4 before low now pid rc=0 slack=()
	[ "$mode" = bsp ] || slack=(--slack 1)
	before=$(avail_kib); low=$before
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
	local ranks
	ranks=$(sed -n 's/^flexrr: peak memory per rank (MiB): \(.*\);.*/\1/p' "$tmp/err")
	if [ $rc != 0 ]; then
		ranks="failed: $(grep -m1 -E 'error|killed' "$tmp/err" | cut -c1-160)"
	fi
	echo "$(( (before - low) / 1024 ))	${ranks:-n/a}	$rc"
}

awk -v m="$model" -v i="$input" -v u="$users" -v it="$items" -v c=$((rank + 1)) \
	'BEGIN { printf "model %.3f GB (users %s, items %s, %s cols), input %.3f GB\n", m / 1e9, u, it, c, i / 1e9 }'
header="mode	shape	binary	job_peak_mib	x_model_input	rank_peaks_mib	rc"
echo "$header"
[ -z "$out" ] || echo "$header" >"$out"
for mode in $modes; do
	for shape in $shapes; do
		P=${shape%x*} T=${shape#*x}
		for which in new old; do
			bin=$new
			if [ $which = old ]; then
				[ -n "$old" ] || continue
				bin=$old
			fi
			IFS=$'\t' read -r peak ranks rc < <(measure "$bin" "$mode" "$P" "$T")
			x=$(awk -v p="$peak" -v m="$model" -v i="$input" 'BEGIN { printf "%.2f", p * 1048576 / (m + i) }')
			row="$mode	$shape	$which	$peak	$x	$ranks	$rc"
			echo "$row"
			[ -z "$out" ] || echo "$row" >>"$out"
		done
	done
done
