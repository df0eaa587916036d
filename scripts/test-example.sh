#!/usr/bin/env bash
# The out-of-tree examples, as a user gets them: flexrr installed to a
# prefix, examples/kmeans and examples/pagerank copied elsewhere and built
# against that prefix only (with pkg-config and with find_package), run as
# 2 x 2 jobs in several modes (with a straggler), their answers checked
# against the sequential references.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: scripts/test-example.sh [--build DIR | --prefix DIR] [--example NAME]
                               [--keep]

Installs the flexrr build DIR (default: build) to a temporary prefix
(cmake --install DIR --prefix TMP/prefix), copies each example
examples/NAME to TMP/NAME and builds it there against the prefix only:
'make' with pkg-config, and cmake with find_package(flexrr) in
TMP/NAME-build.  Then, for each build, k-means:
  bsp     kmeans -n 2 -t 2 --mode bsp: every clock's objective and the final
          centroids equal the sequential reference's (kmeans-ref) up to
          float rounding
  flexrr  kmeans -n 2 -t 2 --mode flexrr --stragglers persistent:0,3: every
          point counted once, the same fixed point as the reference within
          the tolerance explained in docs/writing-an-app.md
and PageRank, pagerank -n 2 -t 2 until the residual is <= 1e-9 (at most
400 clocks) in each of
  bsp, ssp --slack 2, flexrr --stragglers persistent:0,3, rr
          the saved vector within L1 distance 1e-6 of the sequential
          reference's (pagerank-ref), mass within 1e-6 of 1, no row pulled
          after clock 0 (part_rows declares every row read), and in flexrr
          items run by helpers

  --build DIR   the flexrr build tree to install (default: build)
  --prefix DIR  use a flexrr already installed in DIR and skip the install
                (scripts/test-install.sh calls it this way)
  --example NAME  only this example (kmeans or pagerank; may be repeated;
                default: both)
  --keep        keep TMP (it is kept anyway when a step fails)

Exit 0 when every step passes; otherwise the failing step, its log and TMP.
EOF
}

src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
prefix=
keep=0
examples=
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--build) build=$(cd "${2:?--build needs a directory}" && pwd); shift 2 ;;
	--prefix) prefix=$(cd "${2:?--prefix needs a directory}" && pwd); shift 2 ;;
	--example)
		case ${2:-} in
		kmeans | pagerank) examples+=" $2" ;;
		*) echo "test-example: --example wants kmeans or pagerank, got '${2:-}'" >&2; exit 2 ;;
		esac
		shift 2 ;;
	--keep) keep=1; shift ;;
	*) echo "test-example: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
examples=${examples:-kmeans pagerank}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flexrr-example.XXXXXX")
step=setup
finish() {
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "test-example: FAILED at step '$step'; logs and builds kept in $tmp" >&2
	elif [ $keep -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "test-example: kept $tmp"
	fi
}
trap finish EXIT

fail() {
	echo "test-example: $step: $*" >&2
	exit 1
}

# run LOG CMD...: run a step, its output in LOG, shown when it fails
run() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		fail "'$*' failed (log: $log)"
	fi
}

# A clean environment: nothing may reach the source tree by a variable.
clean_env() {
	env -i PATH="$PATH" HOME="${HOME:-/root}" TMPDIR="${TMPDIR:-/tmp}" "$@"
}

if [ -z "$prefix" ]; then
	step=install
	[ -f "$build/CMakeCache.txt" ] ||
		fail "$build is not a flexrr build tree: build first (cmake -S . -B build && cmake --build build) or pass --build DIR"
	prefix=$tmp/prefix
	run "$tmp/install.log" cmake --install "$build" --prefix "$prefix"
fi

step=prefix
pc=$(find "$prefix" -name flexrr.pc -print -quit)
[ -n "$pc" ] || fail "no flexrr.pc under $prefix"
cfg=$(find "$prefix" \( -name flexrrConfig.cmake -o -name flexrr-config.cmake \) -print -quit)
[ -n "$cfg" ] || fail "no flexrr CMake package config under $prefix"
# The installed text files (headers, .pc, CMake config) must not name the
# source or build tree: the prefix alone has to be enough.
leaks=$(grep -rIl -e "$src" -e "$build" "$prefix" || true)
[ -z "$leaks" ] || fail "installed files name the source or build tree: $leaks"

step=copy
for ex in $examples; do
	cp -r "$src/examples/$ex" "$tmp/$ex"
	rm -rf "$tmp/$ex/build" "$tmp/$ex"/*.o "$tmp/$ex/$ex" "$tmp/$ex/$ex-ref"
done

# no_tree LOG: no command in LOG names the source or build tree
no_tree() {
	if grep -e "$src" -e "$build" "$1" >&2; then
		fail "the commands above use a path into the source or build tree"
	fi
}

# -Werror: the installed headers must compile cleanly in a user's build
for ex in $examples; do
	step="$ex make"
	run "$tmp/$ex-make.log" clean_env PKG_CONFIG_PATH="$(dirname "$pc")" \
		make -C "$tmp/$ex" CFLAGS="-O2 -g -Werror"
	no_tree "$tmp/$ex-make.log"

	step="$ex cmake"
	run "$tmp/$ex-cmake.log" clean_env cmake -S "$tmp/$ex" -B "$tmp/$ex-build" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Werror"
	run "$tmp/$ex-build.log" clean_env cmake --build "$tmp/$ex-build" -v
	no_tree "$tmp/$ex-build.log"
done

data=(--points 100000 --dim 4 --k 8 --data-seed 2)

# check_bsp DIR: objective of every clock and the final centroids vs the
# reference.  Same path as the sequential algorithm; only the summation
# order differs (float sums in the table, double in the reference).
check_bsp() {
	local bin=$1 out=$tmp/$2.bsp
	step="$2 bsp run"
	run "$out.log" clean_env timeout 300 "$bin/kmeans" -n 2 -t 2 --mode bsp \
		--clocks 12 --seed 1 --save "$out.txt" kmeans "${data[@]}"
	step="$2 bsp check"
	run "$out.ref" "$bin/kmeans-ref" "${data[@]}" --iters 12 \
		--compare "$out.txt" --tol 1e-6 --ctol 1e-3
	# "flexrr: clock N objective=V" (6 digits) vs "iter N ... sse_per_point=S"
	awk '
		FNR == NR && /^iter / { sub("sse_per_point=", "", $4); ref[$2] = $4; last = $2; next }
		/flexrr: clock [0-9]+ objective=/ {
			c = $3; v = $4; sub("objective=", "", v)
			r = (c in ref) ? ref[c] : ref[last]
			d = (v - r) / r; if (d < 0) d = -d
			n++
			if (d > 1e-5) { printf "clock %d: objective %s, reference %s\n", c, v, r; bad = 1 }
		}
		END { if (!n) { print "no progress lines"; bad = 1 } exit bad }
	' "$out.ref" "$out.log" >"$out.cmp" ||
		fail "objectives differ from the reference: $(cat "$out.cmp")"
	echo "test-example: $2 bsp: $(grep -h 'kmeans-ref: match' "$out.ref")"
}

# check_flexrr DIR: stragglers and RapidReassignment; the run must reach
# the reference's fixed point (tolerances: docs/writing-an-app.md).
check_flexrr() {
	local bin=$1 out=$tmp/$2.flexrr moved
	step="$2 flexrr run"
	run "$out.log" clean_env FLEXRR_LOG=info timeout 300 "$bin/kmeans" \
		-n 2 -t 2 --mode flexrr --stragglers persistent:0,3 \
		--clocks 30 --seed 1 --save "$out.txt" kmeans "${data[@]}"
	step="$2 flexrr check"
	run "$out.ref" "$bin/kmeans-ref" "${data[@]}" --iters 30 \
		--compare "$out.txt" --tol 1e-4 --ctol 5e-3
	moved=$(grep -ho 'items reassigned [0-9]*' "$out.log" |
		awk '{ s += $3 } END { print s + 0 }')
	echo "test-example: $2 flexrr: $(grep -h 'kmeans-ref: match' "$out.ref") ($moved items run by helpers)"
}

pr_data=(--vertices 20000 --avg-degree 8 --graph-seed 3)

# check_pagerank DIR BUILD MODE...: one run to the target, its saved vector
# vs the reference.  The tolerance (docs/writing-an-app.md): a residual of
# 1e-9 leaves the vector within ~1e-8 of the fixed point, and rounding in
# the tables (a value is hi + lo floats) adds ~1e-7; every mode measured
# 4e-8 - 1.2e-7.  A push lost or counted twice moves mass by ~1e-3.
check_pagerank() {
	local bin=$1 name="$2 pagerank ${*:3}" out moved pulls clocks
	out=$tmp/$2.pagerank.${3}
	step="$name run"
	run "$out.log" clean_env FLEXRR_LOG=info timeout 120 "$bin/pagerank" \
		-n 2 -t 2 --mode "${@:3}" --clocks 400 --target 1e-9 --seed 1 \
		--metrics "$out.csv" --save "$out.txt" pagerank "${pr_data[@]}"
	step="$name check"
	run "$out.ref" "$bin/pagerank-ref" "${pr_data[@]}" --compare "$out.txt" \
		--tol 1e-6
	clocks=$(grep -o 'done .* clocks=[0-9]*' "$out.log" | grep -o '[0-9]*$')
	[ "${clocks:-400}" -lt 400 ] || fail "no residual <= 1e-9 in 400 clocks"
	# column 15 of --metrics: rows fetched from their owner (undeclared)
	pulls=$(awk -F, 'NR > 1 && $1 > 0 { s += $15 } END { print s + 0 }' "$out.csv")
	[ "$pulls" = 0 ] || fail "$pulls rows pulled after clock 0: part_rows misses rows"
	moved=$({ grep -ho 'items reassigned [0-9]*' "$out.log" || true; } |
		awk '{ s += $3 } END { print s + 0 }')
	[ "$3" != flexrr ] || [ "$moved" -gt 0 ] || fail "no item run by a helper"
	[ "$moved" = 0 ] && moved= || moved=" ($moved items run by helpers)"
	echo "test-example: $name: $clocks clocks, $(grep -h 'l1=' "$out.ref" | sed 's/.*: l1/l1/')$moved"
}

for ex in $examples; do
	step="$ex help"
	clean_env "$tmp/$ex/$ex" $ex --help >"$tmp/$ex-help.log" 2>&1 ||
		fail "$ex $ex --help failed: $(cat "$tmp/$ex-help.log")"
	opt=--points
	[ $ex = pagerank ] && opt=--vertices
	grep -q -- "$opt N" "$tmp/$ex-help.log" || fail "$ex --help lacks the app's options"
done

for b in make cmake; do
	for ex in $examples; do
		bin=$tmp/$ex
		[ $b = cmake ] && bin=$tmp/$ex-build
		step="$b $ex ldd"
		libs=$(ldd "$bin/$ex") # not piped into grep -q: pipefail and SIGPIPE
		grep "libflexrr.so.* => $prefix/" <<<"$libs" >/dev/null ||
			fail "$bin/$ex does not load libflexrr.so from $prefix: $(grep -i flexrr <<<"$libs")"
		if [ $ex = kmeans ]; then
			check_bsp "$bin" "$b"
			check_flexrr "$bin" "$b"
			continue
		fi
		check_pagerank "$bin" "$b" bsp
		check_pagerank "$bin" "$b" ssp --slack 2
		check_pagerank "$bin" "$b" flexrr --stragglers persistent:0,3
		check_pagerank "$bin" "$b" rr
	done
done
step="finished"
echo "test-example: ok"
