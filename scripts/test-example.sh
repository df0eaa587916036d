#!/usr/bin/env bash
# The out-of-tree example, as a user gets it: flexrr installed to a prefix,
# examples/kmeans copied elsewhere and built against that prefix only (with
# pkg-config and with find_package), run as a 2 x 2 job in BSP and in flexrr
# mode with a straggler, its answer checked against the sequential reference.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: scripts/test-example.sh [--build DIR | --prefix DIR] [--keep]

Installs the flexrr build DIR (default: build) to a temporary prefix
(cmake --install DIR --prefix TMP/prefix), copies examples/kmeans to
TMP/kmeans and builds it there against the prefix only: 'make' with
pkg-config, and cmake with find_package(flexrr).  Then, for each build:
  bsp     kmeans -n 2 -t 2 --mode bsp: every clock's objective and the final
          centroids equal the sequential reference's (kmeans-ref) up to
          float rounding
  flexrr  kmeans -n 2 -t 2 --mode flexrr --stragglers persistent:0,3: every
          point counted once, the same fixed point as the reference within
          the tolerance explained in docs/writing-an-app.md

  --build DIR   the flexrr build tree to install (default: build)
  --prefix DIR  use a flexrr already installed in DIR and skip the install
                (scripts/test-install.sh calls it this way)
  --keep        keep TMP (it is kept anyway when a step fails)

Exit 0 when every step passes; otherwise the failing step, its log and TMP.
EOF
}

src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
prefix=
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--build) build=$(cd "${2:?--build needs a directory}" && pwd); shift 2 ;;
	--prefix) prefix=$(cd "${2:?--prefix needs a directory}" && pwd); shift 2 ;;
	--keep) keep=1; shift ;;
	*) echo "test-example: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

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
cp -r "$src/examples/kmeans" "$tmp/kmeans"
rm -rf "$tmp/kmeans/build" "$tmp/kmeans"/*.o "$tmp/kmeans/kmeans" "$tmp/kmeans/kmeans-ref"

# no_tree LOG: no command in LOG names the source or build tree
no_tree() {
	if grep -e "$src" -e "$build" "$1" >&2; then
		fail "the commands above use a path into the source or build tree"
	fi
}

# -Werror: the installed headers must compile cleanly in a user's build
step="make"
run "$tmp/make.log" clean_env PKG_CONFIG_PATH="$(dirname "$pc")" \
	make -C "$tmp/kmeans" CFLAGS="-O2 -g -Werror"
no_tree "$tmp/make.log"

step=cmake
run "$tmp/cmake.log" clean_env cmake -S "$tmp/kmeans" -B "$tmp/cmake-build" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Werror"
run "$tmp/cmake-build.log" clean_env cmake --build "$tmp/cmake-build" -v
no_tree "$tmp/cmake-build.log"

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

step=help
clean_env "$tmp/kmeans/kmeans" kmeans --help >"$tmp/help.log" 2>&1 ||
	fail "kmeans kmeans --help failed: $(cat "$tmp/help.log")"
grep -q -- '--points N' "$tmp/help.log" || fail "kmeans --help lacks the app's options"

for b in make cmake; do
	bin=$tmp/kmeans
	[ $b = cmake ] && bin=$tmp/cmake-build
	step="$b ldd"
	libs=$(ldd "$bin/kmeans") # not piped into grep -q: pipefail and SIGPIPE
	grep "libflexrr.so.* => $prefix/" <<<"$libs" >/dev/null ||
		fail "$bin/kmeans does not load libflexrr.so from $prefix: $(grep -i flexrr <<<"$libs")"
	check_bsp "$bin" "$b"
	check_flexrr "$bin" "$b"
done
step="finished"
echo "test-example: ok"
