#!/usr/bin/env bash
# Send throughput of a rank's worker threads: each thread on its own
# transport context (the default) against all of them through the rank's
# one context under a lock (--shared-transport), side by side in one run
# (not a test; issue 21's "send throughput with 1, 2 and 4 threads per
# rank").  Two parts.  Transport: bench/tp-threads.c (built here against
# the build's libflexrr) has rank 1's T threads stream --size writes into
# rank 0 for --seconds, each on its own no-notify ctx or all through one
# ctx under a mutex; rank 0 waits blocked, so T threads have the cores to
# themselves up to the machine's.  Job: a bsp mf job with --metrics at
# -n P -t T for each T; per rank and
# clock (clocks >= 1) the send rate is the bytes its workers' batches
# carried over the longest of their flush_s (the time a worker spends
# sending its batch, waiting for the lock included), so threads that send
# at once add up and threads that take turns do not.  Rounds interleave the
# two ways; the table gives each one's median over the rounds and the ratio.
# A machine with fewer free cores than P x T threads cannot show growth past
# its cores: say how many it has beside the figures.
#   bench/send-threads.sh [--build DIR] [--backend shm|verbs] [--procs 2]
#       [--threads "1 2 4"] [--clocks N] [--rounds N] [--synthetic U,I,R]
#       [--size BYTES] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build backend=shm procs=2 threads="1 2 4" clocks=6 rounds=3
synthetic=200000,20000,2000000 size=65536 seconds=1
. bench/lib.sh
bench_parse send-threads.sh "--build=build --backend=backend --procs=procs --threads=threads --clocks=clocks --rounds=rounds --synthetic=synthetic --size=size --seconds=seconds" "$@"
bin=$build/bin/flexrr
bench_need_bin send-threads.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cc -std=gnu11 -O2 -D_GNU_SOURCE -I include -o "$tmp/tp-threads" bench/tp-threads.c \
	-L"$build/lib" -Wl,-rpath,"$(cd "$build/lib" && pwd)" -lflexrr -lpthread ||
	{ echo "send-threads.sh: cannot build bench/tp-threads.c against $build" >&2; exit 1; }
echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $backend"
echo "# transport: rank 1's threads stream $size-byte writes into rank 0 for $seconds s (MB = 10^6 B)"
echo "threads	own_MBps	shared_MBps	own_vs_shared"
for T in $threads; do
	: >"$tmp/own" && : >"$tmp/shared"
	for _ in $(seq "$rounds"); do
		for way in own shared; do
			"$tmp/tp-threads" "$backend" "$T" $way "$size" "$seconds" 2>"$tmp/err" |
				cut -f3 >>"$tmp/$way" ||
				{ echo "send-threads.sh: tp-threads failed: $(tail -1 "$tmp/err")" >&2; exit 1; }
		done
	done
	o=$(bench_median <"$tmp/own") s=$(bench_median <"$tmp/shared")
	awk -v T="$T" -v o="$o" -v s="$s" 'BEGIN { printf "%d\t%.0f\t%.0f\t%.2f\n", T, o, s, (s > 0 ? o / s : 0) }'
done

# one run: prints "MB/s bytes_per_rank_clock send_ms"
rate() { # T extra-args...
	local T=$1
	shift
	if ! "$bin" run -q --no-pin --backend "$backend" -n "$procs" -t "$T" \
		--clocks "$clocks" --metrics "$tmp/m.csv" "$@" \
		mf --synthetic "$synthetic" --rank 32 >/dev/null 2>"$tmp/err"; then
		echo "send-threads.sh: the run failed: $(tail -1 "$tmp/err")" >&2
		exit 1
	fi
	awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 >= 1 {
			k = $1 "," $col["rank"]
			b[k] += $col["bytes"]
			if ($col["flush_s"] > s[k]) s[k] = $col["flush_s"]
		}
		END {
			for (k in b) { n++; tb += b[k]; ts += s[k] }
			if (!n || ts <= 0) { print "0 0 0"; exit }
			printf "%.1f %.0f %.3f\n", tb / ts / 1e6, tb / n, ts / n * 1000
		}' "$tmp/m.csv"
}

echo "# job: $(nproc) cores; mf --synthetic $synthetic --rank 32, bsp, -n $procs, $clocks clocks, $backend, $rounds rounds"
echo "threads	own_MBps	shared_MBps	own_vs_shared	bytes_per_rank_clock	own_send_ms	shared_send_ms"
for T in $threads; do
	: >"$tmp/own" && : >"$tmp/shared"
	for _ in $(seq "$rounds"); do
		rate "$T" >>"$tmp/own"
		rate "$T" --shared-transport >>"$tmp/shared"
	done
	o=$(cut -d' ' -f1 "$tmp/own" | bench_median)
	s=$(cut -d' ' -f1 "$tmp/shared" | bench_median)
	by=$(cut -d' ' -f2 "$tmp/own" | bench_median)
	om=$(cut -d' ' -f3 "$tmp/own" | bench_median)
	sm=$(cut -d' ' -f3 "$tmp/shared" | bench_median)
	awk -v T="$T" -v o="$o" -v s="$s" -v by="$by" -v om="$om" -v sm="$sm" \
		'BEGIN { printf "%d\t%.1f\t%.1f\t%.2f\t%.0f\t%.3f\t%.3f\n", T, o, s, (s > 0 ? o / s : 0), by, om, sm }'
done
