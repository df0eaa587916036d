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
  --reps N        repetitions of each emulated run, median (default 3)
  --quick         small sizes (a smoke test of the script, not results)
  -h, --help      this text
Takes about 25 minutes on an idle 2-core machine.  Needs gnuplot and python3
(scripts/setup.sh --bench), the fashion-mnist data set and bible-kjv (same).
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build out=$here/docs/results parts=a,b,c reps=3 quick=0
cmdline="bench/experiment.sh $*"
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift ;;
	--out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift ;;
	--parts) parts=$2; shift ;;
	--reps) reps=$2; shift ;;
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
a_clocks=30 a_items=64 a_sleep=800
[ $quick = 1 ] && a_clocks=8 reps=1
real_run() { # mode pattern [metrics] -> time_s
	local sl="" me=""
	case $1 in ssp|flexrr) sl="--slack $slack" ;; esac
	[ -n "${3:-}" ] && me="--metrics $3"
	# shellcheck disable=SC2086
	"$bin" run -n 2 -t 4 --backend shm --no-pin -q --clocks $a_clocks --seed $seed \
		--mode "$1" $sl --stragglers "$2" $me toy --items $a_items --sleep-us $a_sleep |
		sed -n 's/.*time_s=\([0-9.]*\).*/\1/p'
}
part_a() {
	local f=$out/emulated-runs.csv r p m t
	log "(a) emulated runs, 2 x 4, $reps repetitions"
	echo "pattern,mode,rep,time_s" >"$f"
	: >"$tmp/cal.csv"
	for ((r = 1; r <= reps; r++)); do
		for m in bsp ssp rr flexrr; do
			t=$(real_run $m none "$tmp/c.csv")
			[ $m = bsp ] && cat "$tmp/c.csv" >>"$tmp/cal.csv"
			echo "none,$m,$r,$t" >>"$f"
			log "  rep $r none $m $t s"
		done
		for p in "${patterns[@]}"; do
			for m in bsp ssp rr flexrr; do
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
b_clocks=20 b_strag="slow-worker:0.25,1.0"
app_args() { # app -> its options
	case $1 in
	mf) echo "--synthetic 20000,2000,2000000 --rank 8" ;;
	mlr) echo "--data fashion-mnist --train-limit 30000" ;;
	lda) echo "--text $tmp/kjv.txt --topics 20" ;;
	esac
}
part_b() {
	local app m f spec name
	[ $quick = 1 ] && b_clocks=4
	log "(b) apps with real compute, 2 x 2 workers, $b_strag"
	[ -r "$tmp/kjv.txt" ] || "$here/scripts/make-kjv-corpus.sh" "$tmp/kjv.txt" >/dev/null
	for app in mf mlr lda; do
		f=$out/apps-$app.csv
		echo "run,mode,stragglers,clock,time_s,objective" >"$f"
		for m in ideal bsp ssp rr flexrr; do
			spec=$b_strag name=$m
			[ $m = ideal ] && { spec=none; m=bsp; }
			local sl=""
			case $m in ssp|flexrr) sl="--slack $slack" ;; esac
			# shellcheck disable=SC2046,SC2086
			"$bin" run -n 2 -t 2 --backend shm --clocks $b_clocks --seed $seed \
				--mode $m $sl --stragglers $spec --metrics "$out/apps-$app-$name-metrics.csv" \
				$app $(app_args $app) 2>"$tmp/err" >/dev/null ||
				{ echo "experiment.sh: $app $name failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
			awk -v run=$name -v mode=$m -v s=$spec '
				/^flexrr: clock [0-9]+ objective=/ {
					split($4, o, "="); split($5, c, "="); t += c[2]
					printf "%s,%s,\"%s\",%d,%.4f,%s\n", run, mode, s, $3, t, o[2] }' \
				"$tmp/err" >>"$f"
			log "  $app $name: $(tail -1 "$f")"
		done
	done
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

case ",$parts," in *,a,*) part_a ;; esac
case ",$parts," in *,b,*) part_b ;; esac
case ",$parts," in *,c,*) part_c ;; esac

# ---- the page ----------------------------------------------------------------
machine="$(uname -srm), $(nproc) cpus ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
python3 "$here/bench/experiment_page.py" --out "$out" --cmd "$cmdline" --machine "$machine" \
	--reps "$reps" --a-config "2 x 4 workers, $a_clocks clocks, toy $a_items items x $a_sleep us (sleeps), slack $slack, seed $seed, shm" \
	--b-config "2 x 2 workers, $b_clocks clocks, --stragglers $b_strag, slack $slack, seed $seed, shm" \
	--gnuplot gnuplot
log "wrote $out/README.md"
