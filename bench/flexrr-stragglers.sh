#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# flexrr-stragglers.sh: time to N clocks of BSP, SSP and FlexRR side by side,
# without stragglers ("ideal") and under injected stragglers, on this machine,
# in one run, with the same seed (the straggler schedule depends only on the
# seed, the worker and the clock, so every mode sees the same stragglers).
# Not a test: it prints a table (and ratios) and, with --plot, a PNG.
#
# Runs are interleaved (every configuration once per repetition) and the
# median of the repetitions is reported, so a shared, loaded machine hurts
# every column alike.  Compare ratios, not absolute times.
#
# Goals (docs/rapidreassignment.md): FlexRR <= 1.15 x ideal, SSP >= 1.3 x
# FlexRR under stragglers, and FlexRR <= 1.03 x SSP without stragglers.
set -euo pipefail

usage() {
	cat <<EOF
usage: bench/flexrr-stragglers.sh [options]
  --bin PATH        flexrr binary (default: build/bin/flexrr, then build-*/bin/flexrr)
  -n P -t T         processes x threads (default 2 x 4)
  --clocks N        clocks per run (default 50)
  --reps R          repetitions (default 5)
  --stat median|min statistic over the repetitions (default median; min is
                    the least disturbed run on a busy machine)
  --slack S         SSP / FlexRR slack (default 1)
  --seed S          seed of data and stragglers (default 7)
  --backend B       shm | verbs | auto (default shm)
  --app-args "..."  toy options (default "--items 200 --sleep-us 100": item work
                    as a sleep, one core per worker emulated; "--work-us 100" burns CPU)
  --slow SPEC       slow-worker spec (default slow-worker:0.1,1.0)
  --disrupted SPEC  disrupted-machine spec (default disrupted-machine:0.05,2,2)
  --plot FILE.png   also draw a bar chart (gnuplot or python3-matplotlib)
  --csv FILE        also write the raw times
  -h, --help        this text
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
bin=""
P=2 T=4 clocks=50 reps=5 slack=1 seed=7 backend=shm
app_args="--items 200 --sleep-us 100"
slow="slow-worker:0.1,1.0"
disrupted="disrupted-machine:0.05,2,2"
plot="" csv="" stat=median
while [ $# -gt 0 ]; do
	case "$1" in
	--bin) bin=$2; shift ;;
	-n) P=$2; shift ;;
	-t) T=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--reps) reps=$2; shift ;;
	--slack) slack=$2; shift ;;
	--seed) seed=$2; shift ;;
	--backend) backend=$2; shift ;;
	--app-args) app_args=$2; shift ;;
	--slow) slow=$2; shift ;;
	--disrupted) disrupted=$2; shift ;;
	--plot) plot=$2; shift ;;
	--stat) stat=$2; shift ;;
	--csv) csv=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "flexrr-stragglers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "$bin" ]; then
	for b in "$here"/build/bin/flexrr "$here"/build-*/bin/flexrr; do
		[ -x "$b" ] && { bin=$b; break; }
	done
fi
case "$stat" in median|min) ;; *) echo "flexrr-stragglers.sh: --stat median|min" >&2; exit 2 ;; esac
[ -x "${bin:-}" ] || { echo "flexrr-stragglers.sh: no flexrr binary; build first or pass --bin" >&2; exit 2; }

# name | mode args | stragglers
configs=(
	"ideal-bsp|--mode bsp|none"
	"ideal-ssp|--mode ssp --slack $slack|none"
	"ideal-flexrr|--mode flexrr --slack $slack|none"
	"slow-bsp|--mode bsp|$slow"
	"slow-ssp|--mode ssp --slack $slack|$slow"
	"slow-flexrr|--mode flexrr --slack $slack|$slow"
	"slow-rr|--mode rr|$slow"
	"disr-bsp|--mode bsp|$disrupted"
	"disr-ssp|--mode ssp --slack $slack|$disrupted"
	"disr-flexrr|--mode flexrr --slack $slack|$disrupted"
)
tmp=$(mktemp -d /tmp/flexrr-stragglers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

run_one() { # name margs spec -> seconds
	local out
	# shellcheck disable=SC2086
	if ! out=$(timeout 600 "$bin" run -n "$P" -t "$T" --backend "$backend" \
		--no-pin -q --clocks "$clocks" --seed "$seed" $2 \
		--stragglers "$3" toy $app_args 2>"$tmp/err"); then
		echo "flexrr-stragglers.sh: run '$1' failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	sed -n 's/.*time_s=\([0-9.]*\).*/\1/p' <<<"$out"
}

echo "# flexrr-stragglers: $P x $T workers, $clocks clocks, slack $slack, seed $seed," \
	"backend $backend, toy $app_args, $reps reps ($stat), $(nproc) cpus," \
	"load $(cut -d' ' -f1 /proc/loadavg)" >&2
for ((r = 1; r <= reps; r++)); do
	for c in "${configs[@]}"; do
		IFS='|' read -r name margs spec <<<"$c"
		s=$(run_one "$name" "$margs" "$spec")
		echo "$name $r $s" >>"$tmp/times"
		printf '  rep %d %-14s %8.3f s\n' "$r" "$name" "$s" >&2
	done
done
[ -n "$csv" ] && awk 'BEGIN{print "config,rep,time_s"} {print $1","$2","$3}' "$tmp/times" >"$csv"

median() { grep "^$1 " "$tmp/times" | awk '{print $3}' | sort -g | awk -v st="$stat" '{a[NR]=$1} END{print st=="min" ? a[1] : (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
declare -A med
for c in "${configs[@]}"; do
	name=${c%%|*}
	med[$name]=$(median "$name")
done
ideal=${med[ideal-ssp]}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }

printf '\n%-22s %10s %10s %10s %10s\n' "stragglers" "BSP" "SSP" "FlexRR" "RR(BSP+RR)"
printf '%-22s %10.3f %10.3f %10.3f %10s\n' "none (ideal)" "${med[ideal-bsp]}" "${med[ideal-ssp]}" "${med[ideal-flexrr]}" "-"
printf '%-22s %10.3f %10.3f %10.3f %10.3f\n' "${slow}" "${med[slow-bsp]}" "${med[slow-ssp]}" "${med[slow-flexrr]}" "${med[slow-rr]}"
printf '%-22s %10s %10s %10s %10s\n' "  x ideal" "$(ratio "${med[slow-bsp]}" "$ideal")" "$(ratio "${med[slow-ssp]}" "$ideal")" \
	"$(ratio "${med[slow-flexrr]}" "$ideal")" "$(ratio "${med[slow-rr]}" "$ideal")"
printf '%-22s %10.3f %10.3f %10.3f %10s\n' "${disrupted}" "${med[disr-bsp]}" "${med[disr-ssp]}" "${med[disr-flexrr]}" "-"
printf '%-22s %10s %10s %10s %10s\n' "  x ideal" "$(ratio "${med[disr-bsp]}" "$ideal")" "$(ratio "${med[disr-ssp]}" "$ideal")" \
	"$(ratio "${med[disr-flexrr]}" "$ideal")" "-"
echo
goal() { # label value op limit
	local ok
	ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN{print (op=="<=" ? v<=l : v>=l) ? "met" : "MISSED"}')
	printf '  %-44s %6s %s %-5s %s\n' "$1" "$2" "$3" "$4" "$ok"
}
echo "goals ($stat of $reps runs per cell):"
goal "FlexRR / ideal (slow-worker)" "$(ratio "${med[slow-flexrr]}" "$ideal")" "<=" 1.15
goal "FlexRR / ideal (disrupted-machine)" "$(ratio "${med[disr-flexrr]}" "$ideal")" "<=" 1.15
goal "SSP / FlexRR (slow-worker)" "$(ratio "${med[slow-ssp]}" "${med[slow-flexrr]}")" ">=" 1.3
goal "SSP / FlexRR (disrupted-machine)" "$(ratio "${med[disr-ssp]}" "${med[disr-flexrr]}")" ">=" 1.3
goal "FlexRR / SSP without stragglers" "$(ratio "${med[ideal-flexrr]}" "${med[ideal-ssp]}")" "<=" 1.03

if [ -n "$plot" ]; then
	cat >"$tmp/data" <<EOF
none ${med[ideal-bsp]} ${med[ideal-ssp]} ${med[ideal-flexrr]}
slow-worker ${med[slow-bsp]} ${med[slow-ssp]} ${med[slow-flexrr]}
disrupted ${med[disr-bsp]} ${med[disr-ssp]} ${med[disr-flexrr]}
EOF
	if command -v gnuplot >/dev/null; then
		gnuplot <<EOF
set terminal pngcairo size 800,500 noenhanced
set output "$plot"
set title "time to $clocks clocks, $P x $T workers ($stat of $reps)"
set ylabel "seconds"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
plot "$tmp/data" using 2:xtic(1) title "BSP", "" using 3 title "SSP", "" using 4 title "FlexRR"
EOF
	else
		python3 - "$tmp/data" "$plot" <<'EOF'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [l.split() for l in open(sys.argv[1])]
x = range(len(rows))
for i, name in enumerate(["BSP", "SSP", "FlexRR"]):
    plt.bar([k + i * 0.27 for k in x], [float(r[i + 1]) for r in rows], 0.27, label=name)
plt.xticks([k + 0.27 for k in x], [r[0] for r in rows])
plt.ylabel("seconds"); plt.legend(); plt.savefig(sys.argv[2])
EOF
	fi
	echo "plot: $plot"
fi
