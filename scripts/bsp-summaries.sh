#!/usr/bin/env bash
# Print the summary line (time_s removed) of a fixed set of BSP jobs with
# fixed seeds, one per line, for comparing two builds bit for bit:
#   scripts/bsp-summaries.sh BIN [KJV_CORPUS_DIR] > out.txt
# Data-plane changes must leave these lines unchanged (issue 21).
set -euo pipefail
case ${1:-} in
-h | --help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
bin=${1:?usage: bsp-summaries.sh BIN [KJV_DIR]}
kjv=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # label args...
	local label=$1; shift
	local out
	if ! out=$("$bin" run -q --no-pin --backend shm "$@" 2>"$tmp/err"); then
		echo "$label: FAILED: $(tail -2 "$tmp/err")"; return
	fi
	echo "$label: $(grep '^flexrr: done' <<<"$out" | sed 's/ time_s=[^ ]*//')"
}
for shape in "-n 1 -t 1" "-n 1 -t 3" "-n 2 -t 2" "-n 3 -t 1"; do
	# shellcheck disable=SC2086
	{
	run "toy $shape" $shape --clocks 8 --seed 3 toy --items 300 --dim 40
	run "toy-adagrad $shape" $shape --clocks 6 --seed 2 toy --adagrad
	run "mf $shape" $shape --clocks 6 --seed 5 --save "$tmp/mf.model" mf --synthetic 4000,600,120000 --rank 8
	echo "mf $shape model: $(md5sum <"$tmp/mf.model" | cut -c1-32)"
	run "mlr $shape" $shape --clocks 3 --seed 1 mlr --data fashion-mnist --train-limit 6000 --test-limit 1000 --no-progress
	if [ -n "$kjv" ]; then
		run "lda $shape" $shape --clocks 4 --seed 1 lda --text "$kjv" --topics 20 --no-progress
	fi
	}
done
