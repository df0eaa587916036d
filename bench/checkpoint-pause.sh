#!/usr/bin/env bash
# The pause of a checkpoint against the disk: runs an SSP mf job with
# --checkpoint every 2 clocks in DIR's file system and prints, per
# checkpoint, rank 0's bytes, its file time (the writer thread's) and its
# whole pause (server thread: copying the cut, and holding it while the
# last checkpoint was still being written), next to bytes / the write
# bandwidth dd measures there (the same bytes, conv=fsync, measured just
# after) and the ratio; then the job's time_s with and without
# checkpoints.
#   bench/checkpoint-pause.sh [BIN] [DIR]   (default build/bin/flexrr, /tmp)
# env PROCS (2), MODE (--mode ssp --slack 2), APP (mf JOB), JOB (the mf
# data), e.g. lda under lb-bsp, whose item states are copied once every
# shard applied the cut's clock: MODE="-t 2 --mode lb-bsp --stragglers
# persistent:0,3" APP="lda --text KJV".
# Goal (issue 22): pause <= 1.5x bytes / bandwidth.  Prints, asserts nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_help_if "${1:-}"
bin=${1:-build/bin/flexrr}
base=${2:-/tmp}
procs=${PROCS:-2}
job=${JOB:-"--synthetic 200000,20000,1000000 --rank 64"}
tmp=$(mktemp -d "$base/flexrr-ckpt-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
read -ra mode <<<"${MODE:---mode ssp --slack 2}"
read -ra app <<<"${APP:-mf $job}"
run=("$bin" run --no-pin -n "$procs" "${mode[@]}" --clocks 12)
"${run[@]}" --checkpoint "$tmp/ck" --checkpoint-every 2 "${app[@]}" 2>"$tmp/log" >"$tmp/out"
mib=$(sed -n 's/.*rank 0 wrote \([0-9.]*\) MiB.*/\1/p' "$tmp/log" | head -1)
# the same bytes, once per rank at the same time (the ranks share the disk)
bw() {
	local t0 t1
	t0=$(date +%s.%N)
	for r in $(seq "$procs"); do
		dd if=/dev/zero of="$tmp/dd$r" bs=1M count="${mib%.*}" conv=fsync status=none &
	done
	wait
	t1=$(date +%s.%N)
	rm -f "$tmp"/dd*
	echo "$t1 - $t0" | bc -l
}
ideal=$(bw)
echo "rank 0 share: $mib MiB, $procs ranks writing; dd of the same: ${ideal:0:6} s"
# (a binary from before the writer thread prints no "of which ... holding")
sed -En 's/.*checkpoint of clock ([0-9]+) .* in ([0-9.]+) s \(files\), paused ([0-9.]+) s( \(of which ([0-9.]+) s holding)?.*/\1 \2 \3 \5/p' "$tmp/log" |
	while read -r c files pause held; do
		printf 'clock %s: files %.4f s, pause %.4f s (held %.4f s), pause / dd %.2fx\n' \
			"$c" "$files" "$pause" "${held:-0}" "$(echo "$pause / $ideal" | bc -l)"
	done
grep 'checkpoints in' "$tmp/log" || true
with=$(sed -n 's/.*done .*time_s=\([0-9.]*\).*/\1/p' "$tmp/out")
"${run[@]}" "${app[@]}" 2>/dev/null >"$tmp/out0"
without=$(sed -n 's/.*done .*time_s=\([0-9.]*\).*/\1/p' "$tmp/out0")
echo "job time_s: $with with checkpoints, $without without (run after)"
