#!/usr/bin/env bash
# What a reassigned item costs its helper (not a test; issue 23 item 4):
# 2 x 1 workers on shm, worker 0 a persistent straggler (2x), lda on the
# KJV chapters (its items carry state, shipped to the helper and back) and
# mf (no item state), flexrr and rr, --reps runs each, with --trace.  From
# the timeline, for the helper (worker 1): its time per unit of the app's
# item cost on its own items ("work" spans) and on the items it ran for
# worker 0 ("help" spans: the help cache's fetches, the items, the batch
# flushed and, for lda, the item state written back), their ratio, and the
# share of worker 0's items it ran; and the wait from worker 0's offer
# (DoThis, sent after the item state was shipped) to the helper starting
# it (BegunHelping).  An app without item_cost (mf) is compared per item.
#   bench/reassign-cost.sh [--build DIR] [--reps N] [--apps "lda mf"]
#       [--modes "flexrr rr"] [--clocks N] [--kjv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build reps=3 apps="lda mf" modes="flexrr rr" clocks=30 kjv=""
. bench/lib.sh
bench_parse reassign-cost.sh "--build=build --reps=reps --apps=apps --modes=modes --clocks=clocks --kjv=kjv" "$@"
bin=$build/bin/flexrr
bench_need_bin reassign-cost.sh "$bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_kjv "$tmp"

app_args() { # app
	case $1 in
	lda) echo "lda --text $kjv --topics 50" ;;
	mf) echo "mf --synthetic 20000,2000,2000000 --rank 8" ;;
	esac
}

printf 'app\tmode\trep\town_us_per_unit\thelp_us_per_unit\thelp/own\treassigned_share\toffer_to_start_ms_median\thelp_inside_own_list\tunit\n'
for app in $apps; do
	for mode in $modes; do
		for rep in $(seq 1 "$reps"); do
			sl=""
			[ "$mode" = flexrr ] && sl="--slack 1"
			# shellcheck disable=SC2046,SC2086
			if ! "$bin" run -n 2 -t 1 --backend shm --clocks "$clocks" \
				--seed "$rep" --mode "$mode" $sl --stragglers persistent:0,2 \
				--trace "$tmp/trace.json" $(app_args "$app") \
				>/dev/null 2>"$tmp/err"; then
				echo "reassign-cost.sh: $app $mode rep $rep failed:" >&2
				tail -3 "$tmp/err" >&2
				exit 1
			fi
			printf '%s\t%s\t%s\t' "$app" "$mode" "$rep"
			/usr/bin/python3 - "$tmp/trace.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))
def units(e):  # the span's item cost, or its item count without one
    a = e["args"]
    return a.get("cost", a["end"] - a["begin"])
def per_unit(spans):
    n = sum(units(e) for e in spans)
    return sum(e["dur"] for e in spans) / n if n else float("nan"), n
own = [e for e in ev if e.get("name") == "work" and e["tid"] == 1]
helped = [e for e in ev if e.get("name") == "help w0" and e["tid"] == 1]
w0 = [e for e in ev if e.get("name") == "work" and e["tid"] == 0]
# a helper ahead of its helpee may serve an offer inside its own list (the
# progress check): that help is not own work
def nested(w):
    return sum(e["dur"] for e in helped
               if e["ts"] >= w["ts"] and e["ts"] < w["ts"] + w["dur"])
n_own = sum(units(e) for e in own)
o = sum(e["dur"] - nested(e) for e in own) / n_own
h, hn = per_unit(helped)
inside = sum(1 for e in helped if any(
    e["ts"] >= w["ts"] and e["ts"] < w["ts"] + w["dur"] for w in own))
_, w0n = per_unit(w0)
key = lambda e: (e["args"]["clock"], e["args"]["begin"])
offer = {key(e): e["ts"] for e in ev if e.get("name") == "DoThis"}
lat = sorted(e["ts"] - offer[key(e)] for e in ev
             if e.get("name") == "BegunHelping" and key(e) in offer)
unit = "cost" if any("cost" in e["args"] for e in own) else "item"
print("%.3f\t%.3f\t%.3f\t%.3f\t%s\t%d/%d\t%s" % (
    o, h, h / o, hn / (hn + w0n) if hn + w0n else 0.0,
    "%.2f" % (lat[len(lat) // 2] / 1e3) if lat else "-", inside,
    len(helped), unit))
EOF
		done
	done
done
