#!/usr/bin/env bash
# What --eager buys and costs under SSP (not a test; issue 25 item 2): each
# app run with and without --eager, interleaved, --reps times, at the same
# seed and shape.  --eager makes a shard apply each update batch as it
# arrives and push the rows at once, so a read shows every update its rank
# has, not only those of complete clocks.  Per run: the objective after
# each clock (from the progress lines), seconds for all clocks, and the row
# bytes the shards pushed per rank per clock (--metrics column `pushed`).
# The k-means example is built against this build, installed to a temporary
# prefix (as scripts/test-example.sh does).  Prints one line per (app, run)
# and then the mean objective per clock of each side.
#   bench/eager.sh [--build DIR] [--reps N] [--shape "-n 2 -t 2"]
#       [--slack S] [--mode ssp|flexrr|async] [--apps "mf mlr lda kmeans"]
#       [--kjv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build reps=2 shape="-n 2 -t 2" slack=1 mode=ssp apps="mf mlr lda kmeans" kjv=""
. bench/lib.sh
bench_parse eager.sh "--build=build --reps=reps --shape=shape --slack=slack --mode=mode --apps=apps --kjv=kjv" "$@"
flexrr=$build/bin/flexrr
bench_need_bin eager.sh "$flexrr"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"

if [[ " $apps " == *" kmeans "* ]]; then
	cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
		{ echo "eager.sh: installing $build failed: $tmp/install.log" >&2; cat "$tmp/install.log" >&2; exit 1; }
	cp -r examples/kmeans "$tmp/kmeans"
	pc=$(find "$tmp/prefix" -name flexrr.pc -print -quit)
	PKG_CONFIG_PATH=$(dirname "$pc") make -s -C "$tmp/kmeans" kmeans >"$tmp/make.log" 2>&1 ||
		{ echo "eager.sh: building the k-means example failed:" >&2; cat "$tmp/make.log" >&2; exit 1; }
fi

# the program and its run options, then the app and its options
app_cmd() { # app
	case $1 in
	mf) echo "$flexrr run --clocks 12 APP mf --synthetic 200000,20000,2000000 --rank 32" ;;
	mlr) echo "$flexrr run --clocks 12 APP mlr --data fashion-mnist --train-limit 20000 --test-limit 2000 --no-progress" ;;
	lda) echo "$flexrr run --clocks 12 APP lda --text $kjv --topics 100 --no-progress" ;;
	kmeans) echo "$tmp/kmeans/kmeans --clocks 12 APP kmeans --points 200000 --k 16" ;;
	esac
}

echo "app	eager	rep	time_s	pushed_per_rank_per_clock	objective_by_clock"
for app in $apps; do
	for rep in $(seq 1 "$reps"); do
		for eager in no yes; do
			flag=""
			[ $eager = yes ] && flag=--eager
			cmd=$(app_cmd "$app")
			run=${cmd%% APP *} rest=${cmd#* APP }
			# shellcheck disable=SC2086
			if ! $run --no-pin --backend shm $shape --mode "$mode" \
				--slack "$slack" --seed 7 $flag --metrics "$tmp/m.csv" \
				$rest >"$tmp/out" 2>"$tmp/err"; then
				echo "$app	$eager	$rep	failed: $(tail -1 "$tmp/err")"
				continue
			fi
			t=$(sed -n 's/^flexrr: done.* time_s=\([^ ]*\).*/\1/p' "$tmp/out" "$tmp/err" | head -1)
			objs=$(sed -n 's/^flexrr: clock [0-9]* objective=\([^ ]*\).*/\1/p' "$tmp/err" | paste -sd' ')
			P=$(sed -n 's/.*-n \([0-9]*\).*/\1/p' <<<"$shape")
			pushed=$(awk -F, -v P="${P:-1}" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pushed") k = i }
				NR > 1 && k { b[$1] += $k }
				END { n = 0; s = 0; for (c in b) { s += b[c]; n++ }
				      printf "%.0f", n ? s / n / P : 0 }' "$tmp/m.csv")
			echo "$app	$eager	$rep	$t	$pushed	$objs"
		done
	done
done | tee "$tmp/all.tsv"

echo
echo "mean objective by clock (no eager / eager):"
awk -F'\t' '$1 != "app" && $6 != "" {
		n = split($6, o, " ")
		for (i = 1; i <= n; i++) { s[$1, $2, i] += o[i]; c[$1, $2, i]++ }
		if (n > N[$1]) N[$1] = n
		apps[$1] = 1
	}
	END {
		for (a in apps) {
			line = a ":"
			for (i = 1; i <= N[a]; i++)
				line = line sprintf(" %d=%.4g/%.4g", i - 1,
					s[a, "no", i] / c[a, "no", i], s[a, "yes", i] / c[a, "yes", i])
			print line
		}
	}' "$tmp/all.tsv"
