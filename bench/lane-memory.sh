#!/usr/bin/env bash
# What the per-thread lanes cost in memory on verbs (not a test; issue 21:
# the lanes are not in the memory plan).  In the soft-RoCE VM
# (scripts/softroce-vm.sh, rxe0, 2 emulated CPUs, 1 GiB), toy jobs of
# P ranks x T threads over verbs, each with its lanes (the default: every
# thread its own context, P - 1 QPs and two CQs) and with
# --shared-transport (none), one after the other; per job each rank's peak
# memory (VmHWM, the job's own end line) and the VM's MemAvailable drop
# (sampled every 50 ms: kernel memory too, but noisy).  The lanes' cost per
# rank is the difference of the two.  --lanes "1 2" adds jobs whose
# threads share that many lanes (--lanes N).
#   bench/lane-memory.sh [--build DIR] [--procs "2 4"] [--threads "1 4"]
#       [--clocks N] [--lanes "N ..."]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build procs="2 4" threads="1 4" clocks=40 lanes=""
. bench/lib.sh
bench_parse lane-memory.sh "--build=build --procs=procs --threads=threads --clocks=clocks --lanes=lanes" "$@"
bin=$build/bin/flexrr
bench_need_bin lane-memory.sh "$bin"

bench_in_vm 1200 "$bin" --build "$build" --procs "$procs" \
	--threads "$threads" --clocks "$clocks" --lanes "$lanes"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
printf 'procs\tthreads\ttransport\trank_peaks_mib\tmax_mib\tsum_mib\tvm_drop_kib\n'
for P in $procs; do
	for T in $threads; do
		sts=(lanes)
		for n in $lanes; do [ "$n" -lt "$T" ] && sts+=("--lanes=$n"); done
		for st in "${sts[@]}" --shared-transport; do
			opt=()
			[ "$st" = lanes ] || opt=("$st")
			a0=$(avail) low=$a0
			"$bin" run -n "$P" -t "$T" --backend verbs "${opt[@]}" \
				--clocks "$clocks" toy --items 64 --sleep-us 2000 \
				>"$out" 2>&1 &
			pid=$!
			while kill -0 $pid 2>/dev/null; do
				a=$(avail)
				[ "$a" -lt "$low" ] && low=$a
				sleep 0.05
			done
			wait $pid || { echo "lane-memory.sh: P=$P T=$T $st failed:" >&2; tail -3 "$out" >&2; exit 1; }
			# "peak memory per rank (MiB): 0=7 1=10; max 10, sum 17"
			line=$(grep 'peak memory per rank' "$out")
			peaks=$(echo "$line" | sed 's/.*(MiB): //; s/;.*//')
			max=$(echo "$line" | sed 's/.*max \([0-9]*\).*/\1/')
			sum=$(echo "$line" | sed 's/.*sum \([0-9]*\).*/\1/')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$P" "$T" "${st#--}" \
				"$peaks" "$max" "$sum" $((a0 - low))
		done
	done
done
