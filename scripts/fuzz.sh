#!/usr/bin/env bash
# Build the libFuzzer targets (fuzz/, clang + ASan + UBSan) and run each for
# a bounded time from its seed corpus; fails when any target finds a crash,
# a sanitizer report, a timeout or an out-of-memory.  docs/fuzzing.md.
#   scripts/fuzz.sh [--time S] [--runs N] [--only T1,T2] [--jobs J]
#                   [--build-dir DIR] [--list] [--no-build] [-- libFuzzer flags...]
# --time S    seconds per target (default 20)     --runs N  stop after N runs
# --only      a comma list of targets (default: all, see --list)
# --jobs J    targets fuzzed at once, one core each (default: the CPUs)
# New inputs go to DIR/corpus/<target>, findings to DIR/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

time_s=20 runs=-1 only="" build=build-fuzz do_build=1 list=0 jobs=$(nproc)
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--time) time_s=$2; shift ;;
	--runs) runs=$2; shift ;;
	--only) only=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--build-dir) build=$2; shift ;;
	--no-build) do_build=0 ;;
	--list) list=1 ;;
	--) shift; extra=("$@"); break ;;
	-h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

# the targets are the fuzz/fuzz_*.c files
mapfile -t all < <(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_||; s|\.c$||')
if [ $list = 1 ]; then
	printf '%s\n' "${all[@]}"
	exit 0
fi
targets=("${all[@]}")
if [ -n "$only" ]; then
	IFS=, read -r -a targets <<<"$only"
	for t in "${targets[@]}"; do
		[ -f "fuzz/fuzz_$t.c" ] || {
			echo "fuzz.sh: no target '$t' (have: ${all[*]})" >&2
			exit 2
		}
	done
fi

if [ $do_build = 1 ]; then
	command -v clang >/dev/null || {
		echo "fuzz.sh: clang not found; run scripts/setup.sh --tests" >&2
		exit 1
	}
	# -Werror stays on for fuzz/ itself (see fuzz/CMakeLists.txt)
	CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DFLEXRR_FUZZ=ON -DFLEXRR_BUILD_TESTS=OFF -DFLEXRR_WERROR=OFF >/dev/null
	# quiet unless it fails (clang warns about files outside fuzz/)
	if ! nice -n 10 cmake --build "$build" --target fuzz -j"$(nproc)" \
		>"$build/build.log" 2>&1; then
		grep -E 'error|Error' "$build/build.log" | head -20
		echo "fuzz.sh: build failed, see $build/build.log" >&2
		exit 1
	fi
fi

mkdir -p "$build/artifacts"
case $jobs in '' | *[!0-9]* | 0)
	echo "fuzz.sh: --jobs wants a count >= 1, not '$jobs'" >&2; exit 2 ;;
esac

# One target: its fuzzing, then its report in $build/fuzz-T.res (the first
# line "ok" or "FAIL"), printed in target order once all are done.
fuzz_one() { # target
	local t=$1 bin=$build/fuzz/fuzz_$1 work=$build/corpus/$1
	local log=$build/fuzz-$1.log res=$build/fuzz-$1.res r execs cov
	mkdir -p "$work"
	# one input may take seconds (a 2^26-document header is valid) and
	# allocate up to 1 GiB at once (fuzz/fuzz.h)
	local flags=(-max_total_time="$time_s" -runs="$runs" -timeout=30
		-rss_limit_mb=3072 -malloc_limit_mb=2048 -close_fd_mask=3
		-print_final_stats=1
		-artifact_prefix="$build/artifacts/$t-")
	[ -f "fuzz/dict/$t.dict" ] && flags+=(-dict="fuzz/dict/$t.dict")
	# the parsers' own output (stdout, stderr) is closed: libFuzzer keeps
	# its report and the sanitizers' on a private copy of stderr
	if nice -n "${FUZZ_NICE:-10}" "$bin" "${flags[@]}" "${extra[@]}" \
		"$work" "fuzz/corpus/$t" >"$log" 2>&1; then
		r=ok
	else
		r=FAIL
	fi
	# a log without them (a target that died at once) is reported as such
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1) || true
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1) || true
	{
		echo "$r"
		echo "fuzz: $t: $r, ${execs:-?} executions, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l) files"
		if [ $r = FAIL ]; then
			grep -E 'ERROR|SUMMARY|invariant failed|Test unit written' "$log" | head -8 | sed 's/^/  /' || true
			echo "  full log: $log"
		fi
	} >"$res"
}

for t in "${targets[@]}"; do
	[ -x "$build/fuzz/fuzz_$t" ] || {
		echo "fuzz.sh: $build/fuzz/fuzz_$t missing (build first)" >&2; exit 1; }
	rm -f "$build/fuzz-$t.res"
done
# the targets are independent processes: J at a time (each one core)
running=0
for t in "${targets[@]}"; do
	if [ $running -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	fuzz_one "$t" &
	running=$((running + 1))
done
wait || true
failed=()
for t in "${targets[@]}"; do
	res=$build/fuzz-$t.res
	if [ ! -s "$res" ]; then
		echo "fuzz: $t: no report ($res): the fuzzing shell died; see $build/fuzz-$t.log"
		failed+=("$t")
		continue
	fi
	tail -n +2 "$res"
	[ "$(head -1 "$res")" = ok ] || failed+=("$t")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: findings in: ${failed[*]} (reproduce: $build/fuzz/fuzz_T FILE)"
	exit 1
fi
echo "fuzz: ${#targets[@]} targets, no finding ($jobs at a time)"
