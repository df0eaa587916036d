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
. "$(dirname "$0")/lib/vmtest.sh"
vt_name=test-verbs.sh mode=auto per=300
vt_opt() {
	case $1 in
	--native) mode=native ;;
	--vm) mode=vm ;;
	--suite-timeout) per=$2; vt_used=2 ;;
	*) return 1 ;;
	esac
}
vt_parse 11 "$@"
vt_check_build tests/ bin/flexrr

if [ $mode = auto ]; then
	if vt_have_active_port; then mode=native; else mode=vm; fi
fi

t0=$SECONDS
if [ $mode = native ]; then
	echo "test-verbs: RDMA device with an ACTIVE port found: running natively"
	rc=0
	bash "$ROOT/scripts/softroce/run-suites.sh" "$build" "$per" || rc=$?
else
	echo "test-verbs: no RDMA device on this host: running in the soft-RoCE VM"
	vt_inside_root "the VM"
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
