#!/usr/bin/env bash
# test-verbs.sh BUILD_DIR - the verbs test stage (scripts/test.sh runs it):
# every BUILD_DIR/tests/test_{transport,verbs,runtime,rr}_* binary with
# FLEXRR_TEST_BACKENDS=verbs FLEXRR_TEST_QUICK=1, then 'flexrr doctor'.
#   - host with an RDMA device whose port is ACTIVE: run natively;
#   - else: boot the soft-RoCE VM once (scripts/softroce-vm.sh, rxe0 on a
#     dummy netdev) and run them all inside it.
# Installs what is missing with apt-get (qemu, busybox, perftest, kernel .deb).
# Prints a per-suite summary; exits non-zero if any suite fails.
# Options: --native | --vm (force a mode), --suite-timeout S (300), -h/--help.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mode=auto per=300 build=""
while [ $# -gt 0 ]; do
	case $1 in
	--native) mode=native ;;
	--vm) mode=vm ;;
	--suite-timeout) per=$2; shift ;;
	-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "test-verbs.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
[ -n "$build" ] || { echo "usage: scripts/test-verbs.sh BUILD_DIR (see --help)" >&2; exit 2; }
[ -d "$build/tests" ] && [ -x "$build/bin/flexrr" ] ||
	{ echo "test-verbs.sh: $build has no tests/ or bin/flexrr: build it first (scripts/setup.sh --tests)" >&2; exit 2; }
build=$(cd "$build" && pwd)

have_active_port() {
	local s
	for s in /sys/class/infiniband/*/ports/*/state; do
		[ -e "$s" ] && grep -q ACTIVE "$s" && return 0
	done
	return 1
}
if [ $mode = auto ]; then
	if have_active_port; then mode=native; else mode=vm; fi
fi

t0=$SECONDS
if [ $mode = native ]; then
	echo "test-verbs: RDMA device with an ACTIVE port found: running natively"
	rc=0
	bash "$ROOT/scripts/softroce/run-suites.sh" "$build" "$per" || rc=$?
else
	echo "test-verbs: no RDMA device on this host: running in the soft-RoCE VM"
	case $build/ in
	"$ROOT"/*) ;;
	*) echo "test-verbs.sh: $build must be inside $ROOT (shared with the VM)" >&2; exit 2 ;;
	esac
	libs=(--libs-of "$build/bin/flexrr")
	for t in "$build"/tests/test_transport_*; do
		[ -x "$t" ] && { libs+=(--libs-of "$t"); break; }
	done
	# some suites check their JSON output with python3: lend the host's
	if [ -x /usr/bin/python3 ]; then
		libs+=(--bin /usr/bin/python3 --ro "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')")
	fi
	rc=0
	"$ROOT/scripts/softroce-vm.sh" run --timeout 1200 --share "$ROOT" "${libs[@]}" -- \
		"bash $ROOT/scripts/softroce/run-suites.sh $build $per" || rc=$?
fi
echo "test-verbs: $mode run finished in $((SECONDS - t0)) s, status $rc"
exit $rc
