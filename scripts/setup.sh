#!/usr/bin/env bash
# Install what is missing (Debian 12, as root or with sudo) and build flexrr.
#   scripts/setup.sh [--tests] [--bench] [--build-dir DIR] [cmake -D options...]
# --tests adds what the test suite needs (Criterion, qemu + kernel for the
# soft-RoCE VM, Open MPI, Slurm + munge, PMIx, the real data sets, clang +
# libFuzzer for scripts/fuzz.sh and the clang build); --bench adds the peers
# we measure against (perftest, ucx-utils, scikit-learn, gensim), gnuplot for
# the plots and the data sets of bench/experiment.sh.  Builds RelWithDebInfo
# (-O3 -g); warnings are not errors here (scripts/test.sh makes them errors).
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0 want_bench=0 build=build
cmake_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--tests) want_tests=1 ;;
	--bench) want_bench=1 ;;
	--build-dir) build=$2; shift ;;
	-D*) cmake_args+=("$1") ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

pkgs=(cmake make gcc libc6-dev pkg-config libibverbs-dev librdmacm-dev
      libnuma-dev zlib1g-dev ibverbs-providers rdma-core ibverbs-utils
      libcriterion-dev iproute2 libssl-dev)
[ $want_tests = 1 ] && pkgs+=(qemu-system-x86 busybox-static perftest
      rdmacm-utils cpio kmod xz-utils openmpi-bin dataset-fashion-mnist
      bible-kjv-text bible-kjv clang-format clang libclang-rt-14-dev
      slurm-wlm munge libpmix-dev openssl)
[ $want_bench = 1 ] && pkgs+=(perftest ucx-utils python3-sklearn python3-gensim
      python3-numpy openmpi-bin gnuplot-nox python3 dataset-fashion-mnist
      bible-kjv bible-kjv-text)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "setup: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
