#!/usr/bin/env bash
# Hot kernels without the runtime (not a test): MF's SGD pass (2 M ratings
# on 20000 x 2000, rank 16) at each level of apps/common/simd.h and LDA's
# dense draw (20000 draws at K = 200 and 1000), in alternating passes; CPU
# seconds of the thread per pass, min and median.  With --before DIR also a tree from before simd.h
# (a source checkout with its build in DIR/build), its one level.
#   bench/simd-kernels.sh [--build DIR] [--passes N] [--before SRCDIR]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build passes=9 before=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--passes) passes=$2; shift ;;
	--before) before=$2; shift ;;
	-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "simd-kernels.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -f "$build/lib/libfrr_apps.a" ] ||
	{ echo "simd-kernels.sh: no $build/lib/libfrr_apps.a; build first (cmake --build $build)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/frr-simd-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# the same flags as the build's RelWithDebInfo: -O3, portable
kb() { # SRCDIR BUILDDIR OUT [-DNO_SIMD]
	cc -std=gnu11 -O3 -D_GNU_SOURCE ${4:-} -I"$1/include" -I"$1/apps" \
		-o "$3" bench/simd-kernels.c "$2/lib/libfrr_apps.a" \
		"$2/lib/libflexrr.a" -lm -lpthread ||
		{ echo "simd-kernels.sh: cannot build the harness against $2" >&2; exit 1; }
}
kb . "$build" "$tmp/after"
echo "# load $(cut -d' ' -f1-3 /proc/loadavg); $passes passes; $(nproc) cores"
if [ -n "$before" ]; then
	kb "$before" "$before/build" "$tmp/before" -DNO_SIMD
	echo "# before ($before):"
	"$tmp/before" "$passes"
fi
echo "# this tree ($build):"
"$tmp/after" "$passes"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
