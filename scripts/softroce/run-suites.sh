#!/bin/bash
# Runs the verbs test suites of one build, one after another, and prints a
# per-suite summary; used by scripts/test-verbs.sh on the host (when it has an
# RDMA device) or inside the soft-RoCE VM.  Exit status: failed suites.
#   run-suites.sh BUILD_DIR SUITE_TIMEOUT_S
# Env: FLEXRR_TEST_BACKENDS=verbs FLEXRR_TEST_QUICK=1 are set here.
build=$1 per=${2:-300}
export FLEXRR_TEST_BACKENDS=verbs FLEXRR_TEST_QUICK=1
up() { cut -d' ' -f1 /proc/uptime; }
names=() results=() times=()
fails=0
run() { # name cmd...
	local name=$1 t0 rc
	shift
	t0=$(up)
	echo "=== verbs suite: $name"
	timeout "$per" "$@"
	rc=$?
	[ $rc = 124 ] && echo "=== verbs suite: $name: TIMEOUT after ${per}s"
	names+=("$name")
	times+=("$(awk -v a="$t0" -v b="$(up)" 'BEGIN{printf "%.1f", b-a}')")
	if [ $rc = 0 ]; then results+=(PASS); else results+=("FAIL($rc)"); fails=$((fails + 1)); fi
	echo "=== verbs suite: $name: ${results[-1]} (${times[-1]} s)"
}
echo "verbs suites on $(uname -r), $(nproc) cpus, device(s): $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
for pat in test_transport_ test_verbs_ test_runtime_ test_rr_; do
	for t in "$build"/tests/"$pat"*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		run "$(basename "$t")" "$t" --jobs 1
	done
done
run "flexrr doctor" "$build/bin/flexrr" doctor
echo
echo "verbs suites summary:"
for i in "${!names[@]}"; do
	printf '  %-36s %-10s %6s s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
echo "verbs suites: $((${#names[@]} - fails)) passed, $fails failed"
exit $fails
