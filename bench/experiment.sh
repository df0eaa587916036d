#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# experiment.sh: regenerate docs/results/ (the straggler study) with one
# command, on this machine:
#   (a) emulated real runs, 2 x 4 workers, toy items as sleeps (one core per
#       worker emulated), every mode and straggler pattern, and the same
#       configurations in the simulator;
#   (b) the three apps (mf, mlr, lda) with real compute under stragglers:
#       objective vs wall time per mode, time to a target objective;
#   (c) the simulator at 16, 64, 256 and 1,024 workers: every mode's time over
#       the ideal and over the balanced bound, per pattern;
# then the goals of issue 11, met or not, and docs/results/README.md with the
# exact command and the machine.  Plots: gnuplot (scripts/setup.sh --bench).
set -euo pipefail

usage() {
	cat <<EOF
usage: bench/experiment.sh [options]
  --build DIR     build tree with bin/flexrr (default: build)
  --out DIR       where the results go (default: docs/results)
  --parts LIST    any of a,b,c (default a,b,c); the page is rebuilt from
                  whatever data DIR holds
  --part NAME     one part: emulated (a), apps (b) or sim (c); apps takes
                  about 8 minutes on an idle 2-core machine
  --reps N        repetitions of each emulated run and app run, median
                  (default 3 emulated, 5 apps)
  --quick         small sizes (a smoke test of the script, not results)
  -h, --help      this text
Takes about 25 minutes on an idle 2-core machine.  On a busy one run it at
a higher priority (as root: nice -n -5 bench/experiment.sh ...); the page
records the niceness and the load.  Needs gnuplot and python3
(scripts/setup.sh --bench), the fashion-mnist data set and bible-kjv (same).
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build out=$here/docs/results parts=a,b,c reps=3 b_reps=5 quick=0
cmdline="bench/experiment.sh $*"
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift ;;
	--out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift ;;
	--parts) parts=$2; shift ;;
	--part)
		case $2 in
		emulated|a) parts=a ;; apps|b) parts=b ;; sim|c) parts=c ;;
		*) echo "experiment.sh: --part: '$2' is not emulated, apps or sim" >&2; exit 2 ;;
		esac
		shift ;;
	--reps) reps=$2 b_reps=$2; shift ;;
	--quick) quick=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "experiment.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
bin=$build/bin/flexrr
[ -x "$bin" ] || { echo "experiment.sh: no $bin; build first (scripts/setup.sh) or pass --build" >&2; exit 2; }
for t in gnuplot python3; do
	command -v $t >/dev/null || { echo "experiment.sh: $t is missing: run scripts/setup.sh --bench" >&2; exit 2; }
done
mkdir -p "$out"
tmp=$(mktemp -d /tmp/flexrr-experiment.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
log() { echo "experiment: $*" >&2; }

patterns=("slow-worker:0.1,1.0" "disrupted-machine:0.05,2,2" "power-law:11" "persistent:0,2" "contention:0")
seed=7 slack=1

# ---- (a) emulated real runs at 2 x 4 -----------------------------------------
# toy: 64 items of 800 us (sleeps) per worker and clock, one per chunk
a_clocks=30 a_items=64 a_sleep=800 a_modes="bsp ssp rr flexrr backup"
[ $quick = 1 ] && a_clocks=8 reps=1 b_reps=1
real_run() { # mode pattern [metrics] -> time_s,dropped_share
	local sl="" me=""
	case $1 in ssp|flexrr) sl="--slack $slack" ;; esac
	[ -n "${3:-}" ] && me="--metrics $3"
	# backup: the share of the items its cuts dropped (0 in other modes)
	# shellcheck disable=SC2086
	"$bin" run -n 2 -t 4 --backend shm --no-pin -q --clocks $a_clocks --seed $seed \
		--mode "$1" $sl --stragglers "$2" $me toy --items $a_items --sleep-us $a_sleep |
		awk '/^flexrr: done/ { t = ""; d = 0
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^time_s=/) t = substr($i, 8)
				if ($i ~ /^dropped_share=/) d = substr($i, 15) }
			print t "," d }'
}
part_a() {
	local f=$out/emulated-runs.csv r p m t
	log "(a) emulated runs, 2 x 4, $reps repetitions"
	echo "pattern,mode,rep,time_s,dropped_share" >"$f"
	: >"$tmp/cal.csv"
	for ((r = 1; r <= reps; r++)); do
		for m in $a_modes; do
			t=$(real_run $m none "$tmp/c.csv")
			[ $m = bsp ] && cat "$tmp/c.csv" >>"$tmp/cal.csv"
			echo "none,$m,$r,$t" >>"$f"
			log "  rep $r none $m $t s"
		done
		for p in "${patterns[@]}"; do
			for m in $a_modes; do
				t=$(real_run $m "$p")
				echo "\"$p\",$m,$r,$t" >>"$f"
				log "  rep $r $p $m $t s"
			done
		done
	done
	# the same configurations simulated, costs from the no-straggler BSP
	# runs (docs/simulator.md); contention is the measured real effect
	# in (a), a factor 2 in the simulator
	"$bin" simulate -n 2 -t 4 --clocks $a_clocks --items $a_items --slack $slack \
		--seed $seed --net shm --cost "metrics-mean:$tmp/cal.csv" -q \
		--csv "$out/emulated-sim.csv" >/dev/null
}

# ---- (b) the apps with real compute ------------------------------------------
# 2 processes x 1 worker thread: one worker per core of a 2-core machine, so
# the compute is real and a straggler's injected sleep leaves its core idle,
# as a slow machine's would (more threads than cores would share the cores
# and hide the stragglers, docs/demo.md)
# Patterns: a transient one, and two persistent ones, the second real (a CPU
# hog thread pinned on worker 0's core, which the compute shares); without
# stragglers the ideal (BSP), SSP and FlexRR.  Repetitions: b_reps.
b_patterns="slow-worker:0.25,1.0 persistent:0,2 contention:0"
b_modes="bsp ssp flexrr rr backup" b_none="ssp flexrr"
app_args() { # app -> its options
	case $1 in
	mf) echo "--synthetic 20000,2000,2000000 --rank 8" ;;
	mlr) echo "--data fashion-mnist --train-limit 30000" ;;
	lda) echo "--text $tmp/kjv.txt --topics 50" ;;
	esac
}
app_clocks() { # app -> clocks (each app's clock is ~0.1-0.5 s on an idle core)
	if [ $quick = 1 ]; then echo 4; return; fi
	case $1 in mf) echo 20 ;; mlr) echo 15 ;; lda) echo 30 ;; esac
}
load_sampler() { # every 5 s the 1-minute load average, until killed
	while :; do cut -d' ' -f1 /proc/loadavg; sleep 5; done
}
app_run() { # app name mode spec rep -> per-clock rows on stdout
	local app=$1 name=$2 m=$3 spec=$4 rep=$5 sl=""
	case $m in ssp|flexrr) sl="--slack $slack" ;; esac
	# shellcheck disable=SC2046,SC2086
	"$bin" run -n 2 -t 1 --backend shm --clocks $(app_clocks $app) --seed $seed \
		--mode $m $sl --stragglers $spec $app $(app_args $app) 2>"$tmp/err" >/dev/null ||
		{ echo "experiment.sh: $app $name failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
	awk -v run="$name" -v mode="$m" -v s="$spec" -v rep="$rep" '
		/^flexrr: clock [0-9]+ objective=/ {
			split($4, o, "="); split($5, c, "="); t += c[2]
			printf "%s,%s,\"%s\",%d,%d,%.4f,%s\n", run, mode, s, rep, $3, t, o[2] }' "$tmp/err"
}
b_run() { # app name mode spec rep: one run appended to apps-APP.csv
	app_run "$1" "$2" "$3" "$4" "$5" >>"$out/apps-$1.csv"
	log "  rep $5 $1 $2 $4: $(tail -1 "$out/apps-$1.csv")"
}
part_b() {
	local app m spec sampler
	log "(b) apps with real compute, 2 x 1 workers, $b_patterns, $b_reps repetitions"
	[ -r "$tmp/kjv.txt" ] || "$here/scripts/make-kjv-corpus.sh" "$tmp/kjv.txt" >/dev/null
	load_sampler >"$tmp/load" &
	sampler=$!
	for app in mf mlr lda; do
		echo "run,mode,stragglers,rep,clock,time_s,objective" >"$out/apps-$app.csv"
	done
	# repetitions interleaved, so a burst of load hits one rep, not one mode
	for ((r = 1; r <= b_reps; r++)); do
		for app in mf mlr lda; do
			b_run "$app" ideal bsp none "$r"
			for m in $b_none; do b_run "$app" "$m" "$m" none "$r"; done
			for spec in $b_patterns; do
				for m in $b_modes; do b_run "$app" "$m" "$m" "$spec" "$r"; done
			done
		done
	done
	kill $sampler
}

# ---- (c) the simulator at scale ----------------------------------------------
part_c() {
	local w clocks=100 items=1000
	[ $quick = 1 ] && clocks=10 items=100
	log "(c) simulator, 16 to 1,024 workers"
	for w in 16 64 256 1024; do
		"$bin" simulate -n $((w / 4)) -t 4 --clocks $clocks --items $items --slack $slack \
			--seed $seed --net ib -q --csv "$out/sim-$w.csv" --json "$out/sim-$w.json"
	done
}

machine() {
	echo "$(uname -srm), $(nproc) cpus ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg), nice $(nice)$(
		[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] &&
			echo " (autogroup on: nice ranks processes of one session only)")"
}
meta() { # part [key=value...]: what the page says about that part's run
	local p=$1
	shift
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
		echo "cmd=$cmdline"
		echo "machine=$(machine)"
		printf '%s\n' "$@"
	} >"$out/meta-$p.txt"
}
case ",$parts," in *,a,*)
	part_a
	meta a "reps=$reps" "config=2 x 4 workers, $a_clocks clocks, toy $a_items items x $a_sleep us (sleeps), slack $slack, seed $seed, shm"
	;;
esac
case ",$parts," in *,b,*)
	part_b
	meta b "strag=$b_patterns" "reps=$b_reps" \
		"config=2 x 1 workers (one per core), clocks mf $(app_clocks mf), mlr $(app_clocks mlr), lda $(app_clocks lda), slack $slack, seed $seed, shm" \
		"apps=mf $(app_args mf) | mlr $(app_args mlr) | lda --text kjv-chapters.txt --topics 50" \
		"$(sort -n "$tmp/load" | awk '{ v[NR] = $1; s += $1 }
			END { if (NR) printf "load=%.2f %.2f %.2f %d\n", v[1], s / NR, v[NR], NR }')"
	;;
esac
case ",$parts," in *,c,*) part_c; meta c ;; esac

# ---- the page ----------------------------------------------------------------
python3 "$here/bench/experiment_page.py" --out "$out" --gnuplot gnuplot
log "wrote $out/README.md"
