#!/usr/bin/env bash
# SSP tolerating a delayed worker: time to N clocks of the toy app with BSP
# and with SSP (slack S) side by side, while a worker sleeps 1 clock-time
# every 5th clock (flexrr run --delay-worker).  Runs alternate BSP/SSP so
# machine load hits both alike; the table reports the median of the repeats.
#
# usage: bench/ssp-delay.sh [-n P] [-t T] [--clocks N] [--slack S]
#        [--repeat R] [--backend B] [--fixed W] [--bin PATH]
#   --fixed W   always delay worker W (default: a different worker each
#               time, i.e. --delay-worker -1,5,1.0: transient stragglers)
#   --cpu       item work burns CPU (toy --work-us) instead of sleeping
#               (toy --sleep-us, the default: one core per worker emulated,
#               so a loaded 2-core machine still gives comparable times)
# Exit status 0 when SSP's median time is below BSP's, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."

procs=2 threads=2 clocks=50 slack=3 repeat=5 backend=shm victim=-1 work=--sleep-us
bin=${FLEXRR_BIN:-build/bin/flexrr}
while [ $# -gt 0 ]; do
	case $1 in
	-n) procs=$2; shift ;;
	-t) threads=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--slack) slack=$2; shift ;;
	--repeat) repeat=$2; shift ;;
	--backend) backend=$2; shift ;;
	--fixed) victim=$2; shift ;;
	--cpu) work=--work-us ;;
	--bin) bin=$2; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "ssp-delay.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$bin" ] || { echo "ssp-delay.sh: $bin not found: build first (cmake --build build)" >&2; exit 2; }

app=(toy --items 200 "$work" 100)
delay="$victim,5,1.0"
run() { # mode-args... -> prints time_s
	"$bin" run -n "$procs" -t "$threads" --backend "$backend" --clocks "$clocks" -q \
		--delay-worker "$delay" "$@" "${app[@]}" |
		sed -n 's/.*time_s=\([0-9.]*\).*/\1/p'
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bsp=() ssp=()
for ((i = 0; i < repeat; i++)); do
	bsp+=("$(run --mode bsp)")
	ssp+=("$(run --mode ssp --slack "$slack")")
done
mb=$(printf '%s\n' "${bsp[@]}" | median)
ms=$(printf '%s\n' "${ssp[@]}" | median)

echo "# ssp-delay: toy app (${app[*]}), $procs procs x $threads threads, backend $backend, $clocks clocks"
echo "# delay: worker $([ "$victim" = -1 ] && echo '(rotating)' || echo "$victim") sleeps 1.0 x its clock time every 5th clock; $repeat runs each, median"
printf '%-12s %-8s %12s   %s\n' mode slack "time_s" "runs"
printf '%-12s %-8s %12s   %s\n' bsp 0 "$mb" "${bsp[*]}"
printf '%-12s %-8s %12s   %s\n' ssp "$slack" "$ms" "${ssp[*]}"
awk -v b="$mb" -v s="$ms" 'BEGIN { printf "ssp/bsp time ratio: %.3f\n", s / b; exit !(s < b) }'
