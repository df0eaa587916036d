#!/usr/bin/env bash
# scripts/test.sh: the whole test suite, as CI runs it (.ci/run):
#   1. -Wall -Wextra -Werror build (RelWithDebInfo: -O3 -g), Criterion suites
#      (ctest), the installed library and the out-of-tree example built
#      from it (scripts/test-install.sh)
#   2. the same under ASan+UBSan, 3. under TSan
#   4. every build type with gcc (Release, Debug) and clang, -Werror
#   5. the verbs suites over a real soft-RoCE device: natively when this host
#      has an RDMA device, else inside the qemu soft-RoCE VM
#   6. two hosts: jobs with one rank in each of two soft-RoCE VMs; the
#      simulator against mf jobs across that pair (scripts/test-sim-pair.sh,
#      a second boot of the pair: ~30 s)
#   7. Slurm: a one-node slurmctld + slurmd, srun -n 4 and sbatch
#   8. every fuzz target for 12 s, one per CPU at once (scripts/fuzz.sh),
#   9. formatting and the include order of the layers (scripts/check-layers.sh)
# Ends with one line 'N passed, N failed'.  Options:
#   --quick   only stage 1 (development loop)      --no-vm  skip stages 5-6
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 vm=1
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--no-vm) vm=0 ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test.sh: unknown option '$a' (see --help)" >&2; exit 2 ;;
	esac
done

passed=0 failed=0 failures=()
t0=$SECONDS
stage() { # name cmd...
	local name=$1 s=$SECONDS; shift
	echo "=== stage: $name"
	if "$@"; then
		passed=$((passed + 1)); echo "=== stage: $name: PASS ($((SECONDS - s)) s)"
	else
		failed=$((failed + 1)); failures+=("$name"); echo "=== stage: $name: FAIL ($((SECONDS - s)) s)"
	fi
}

# ctest with a per-suite timeout; Criterion prints its own per-suite tallies
run_ctest() { ctest --test-dir "$1" --output-on-failure --timeout 900; }

# Under a sanitizer the suites read FLEXRR_TEST_SANITIZER (tests/test_util.h):
# the app suites run smaller data or fewer clocks, test_sim_validate one
# configuration without its timing judgement (that runs in stage 1 only).
run_asan_suites() {
	local -x FLEXRR_TEST_SANITIZER=asan
	run_ctest build-asan
}

# Criterion's runner cannot start under TSan (Snaipe/Criterion#274): the
# TSan build makes the in-process suites (transport, rr protocol, loaders,
# kernels) against tests/tsan/, the same test code on a small fork-per-test
# runner; the suites labelled "exec" drive jobs through the flexrr binary
# (runtime, RapidReassignment, apps, shm service thread) and run from the
# normal build against the TSan-built flexrr.  Any report is written to a
# file and fails the stage.
run_tsan_suites() {
	local logdir=$PWD/build-tsan/tsan-reports rc=0
	local -x FLEXRR_TEST_SANITIZER=tsan
	local opts="halt_on_error=1:exitcode=66:log_path=$logdir/tsan"
	rm -rf "$logdir"; mkdir -p "$logdir"
	TSAN_OPTIONS=$opts ctest --test-dir build-tsan --output-on-failure \
		--timeout 900 || rc=1
	FLEXRR_TEST_BIN=$PWD/build-tsan/bin/flexrr TSAN_OPTIONS=$opts \
		ctest --test-dir build --output-on-failure --timeout 900 \
		-L exec || rc=1
	if ls "$logdir"/tsan.* >/dev/null 2>&1; then
		echo "TSan reports:"; head -60 "$logdir"/tsan.*; rc=1
	fi
	return $rc
}

build_cfg() { # dir cmake-args... (warnings are errors; the log says why)
	local dir=$1; shift
	mkdir -p "$dir"
	if ! { cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLEXRR_WERROR=ON "$@" &&
		cmake --build "$dir" -j"$(nproc)"; } >"$dir/build.log" 2>&1; then
		grep -E -m 20 'error|warning' "$dir/build.log" || tail -20 "$dir/build.log"
		return 1
	fi
}

# Issue 13: every build type configures and builds warning-free, with gcc
# and with clang.  Stage 1 built gcc RelWithDebInfo with the suites; these
# build the library, the binary and (clang only) the suites, to stay short.
build_types() {
	local ok=0 t
	for t in Release Debug; do
		echo "--- gcc $t"
		CC=gcc build_cfg "build-gcc-$t" -DCMAKE_BUILD_TYPE=$t -DFLEXRR_BUILD_TESTS=OFF || ok=1
	done
	if command -v clang >/dev/null; then
		echo "--- clang RelWithDebInfo (with the suites)"
		CC=clang build_cfg build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo || ok=1
	else
		echo "clang is missing: scripts/setup.sh --tests installs it"; ok=1
	fi
	return $ok
}

scripts/setup.sh --tests

stage "build (-Werror)" build_cfg build
stage "tests" run_ctest build
stage "install + out-of-tree example" scripts/test-install.sh build
if [ $quick = 0 ]; then
	# sanitizer runs: halt on the first report so a finding fails the suite
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
	# leaks inside libraries we call (libpmix) are listed there, not ours
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
	stage "build (ASan+UBSan)" build_cfg build-asan -DFLEXRR_ASAN=ON
	stage "tests (ASan+UBSan)" run_asan_suites
	stage "build (TSan)" build_cfg build-tsan -DFLEXRR_TSAN=ON
	stage "tests (TSan)" run_tsan_suites
	stage "build types (gcc Release/Debug, clang)" build_types
	if [ $vm = 1 ] && [ -x scripts/test-verbs.sh ]; then
		stage "verbs tests (soft-RoCE)" scripts/test-verbs.sh build
	fi
	if [ $vm = 1 ] && [ -x scripts/test-2vm.sh ]; then
		stage "two hosts (soft-RoCE VM pair)" scripts/test-2vm.sh build
	fi
	if [ $vm = 1 ] && [ -x scripts/test-sim-pair.sh ]; then
		stage "simulator vs the VM pair (bandwidth)" scripts/test-sim-pair.sh build
	fi
	if [ -x scripts/test-slurm.sh ]; then
		stage "Slurm (srun, sbatch)" scripts/test-slurm.sh build
	fi
	# bounded: 12 s per target (docs/fuzzing.md for longer runs)
	stage "fuzz (libFuzzer, 12 s per target)" scripts/fuzz.sh --time 12
	if command -v clang-format >/dev/null; then
		stage "format (clang-format)" scripts/check-format.sh
	fi
	stage "layers (include order)" scripts/check-layers.sh
fi

echo "=== test.sh: $((SECONDS - t0)) s; failed stages: ${failures[*]:-none}"
echo "stages: $passed passed, $failed failed"
[ $failed = 0 ]
