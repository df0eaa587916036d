#!/usr/bin/env bash
# Install flexrr from BUILD_DIR (default build/, already built) to a
# temporary prefix and build programs against that prefix alone, as a user
# would: with pkg-config (flexrr.pc: shared library, flexrr-static.pc: static)
# and with find_package(flexrr)
# (flexrr::flexrr shared, flexrr::flexrr_static); run them.  Fails if an
# installed file or a compile/link command names the source or build tree.
#   scripts/test-install.sh [BUILD_DIR]
set -euo pipefail
case ${1:-} in -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$ROOT/build}" && pwd)
tmp=$(mktemp -d /tmp/flexrr-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix work=$tmp/work
fail() { echo "test-install.sh: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	{ cat "$tmp/install.log"; fail "cmake --install failed"; }
for f in include/flexrr/flexrr.h include/flexrr/job.h include/flexrr/base.h \
	include/flexrr/bootstrap.h include/flexrr/transport.h bin/flexrr; do
	[ -e "$prefix/$f" ] || fail "not installed: $f"
done
pcdir=$(dirname "$(find "$prefix" -name flexrr.pc | head -1)")
libdir=$(dirname "$pcdir")
[ -e "$libdir/libflexrr.a" ] && ls "$libdir"/libflexrr.so.* >/dev/null ||
	fail "libflexrr.so / libflexrr.a not installed in $libdir"
if grep -rlI -e "$ROOT" -e "$build" "$prefix"; then
	fail "the files above name the source or build tree"
fi

# the programs live outside the tree: copy them, then forget the tree
mkdir -p "$work"
cp "$ROOT/tests/install/hello.c" "$ROOT/tests/install/CMakeLists.txt" "$work/"
cd "$work"
check_cmds() { # log: no -I/-L/rpath into the tree
	if grep -e "$ROOT" -e "$build" "$1"; then
		fail "the commands above use a path into the source or build tree"
	fi
}

echo "--- pkg-config"
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs flexrr)
echo "cc hello.c $flags" | tee pc.log
cc -O2 -Wall -Wextra -Werror hello.c $flags \
	-Wl,-rpath,"$(pkg-config --variable=libdir flexrr)" -o hello-pc
check_cmds pc.log
./hello-pc >pc.out || { cat pc.out; fail "hello (pkg-config) failed"; }
grep -q "hello: ok" pc.out || fail "hello (pkg-config) did not say ok"
ldd ./hello-pc >ldd.out
grep "$prefix.*libflexrr.so" ldd.out >/dev/null ||
	fail "hello (pkg-config) does not use the installed libflexrr.so"
# the README's static line: flexrr-static.pc names libflexrr.a itself
flags=$(pkg-config --cflags --libs flexrr-static)
echo "cc hello.c $flags" | tee pcs.log
cc -O2 -Wall -Wextra -Werror hello.c $flags -o hello-pcs
check_cmds pcs.log
./hello-pcs >pcs.out || { cat pcs.out; fail "hello (flexrr-static.pc) failed"; }
grep -q "hello: ok" pcs.out || fail "hello (flexrr-static.pc) did not say ok"
ldd ./hello-pcs >ldd.out
if grep libflexrr ldd.out; then fail "hello (flexrr-static.pc) links libflexrr.so"; fi

echo "--- find_package(flexrr)"
cmake -S . -B b -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Werror" >cm.log
cmake --build b -v >>cm.log 2>&1 || { cat cm.log; fail "find_package build failed"; }
check_cmds cm.log
for p in hello hello_static; do
	./b/$p >$p.out || { cat $p.out; fail "$p (find_package) failed"; }
	grep -q "hello: ok" $p.out || fail "$p (find_package) did not say ok"
done
ldd ./b/hello_static >ldd.out
if grep libflexrr ldd.out; then fail "hello_static links libflexrr.so"; fi

# The out-of-tree examples from the same prefix: copied out of the tree,
# built with make (pkg-config) and cmake (find_package), run -n 2 -t 2
# (k-means in bsp and flexrr with a straggler, PageRank in bsp, ssp, flexrr
# with a straggler and rr), checked against their references.
echo "--- examples/kmeans, examples/pagerank"
"$ROOT/scripts/test-example.sh" --prefix "$prefix" --build "$build" ||
	fail "an out-of-tree example failed (see above)"

echo "test-install.sh: installed to a temporary prefix; pkg-config and" \
	"find_package builds and the k-means and PageRank examples pass"
