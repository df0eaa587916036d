#!/bin/bash
# SPDX-License-Identifier: MIT
# RapidReassignment liveness loop (issue 14): run the rr suites many times in a
# row, optionally with a busy loop on one core, on the host (shm) or inside the
# soft-RoCE VM (verbs), and count the runs that fail or hang.  A liveness bug
# shows up as a rare hang, so one green CI run says little; this is the loop
# the issue's "done when" asks for, kept so that anyone can repeat it.
set -u

usage() {
	cat <<'EOF'
usage: scripts/rr-loop.sh [options]
Runs test_rr_proto, test_rr_cancel, test_rr_job and test_rr_cli N times each
(interleaved),
then test_rr_explore once; each run has a time bound, a run past it counts as a
failure (a hang).  Prints one line per run and a summary; exits 0 only if every
run passed, 1 if any failed, 2 on a usage error.

  --build DIR     build tree with tests/test_rr_* (default: build)
  --iters N       runs per suite (default: 100 on the host, 10 with --vm)
  --hog           keep one core busy with a spin loop during the runs
                  (a straggling core, as on a shared node)
  --timeout S     bound per suite run in seconds (default: 600)
  --no-explore    skip the one test_rr_explore run (exhaustive, minutes)
  --vm            run the loop inside the soft-RoCE VM (scripts/softroce-vm.sh)
                  over the verbs backend with FLEXRR_TEST_QUICK=1, 2 vCPUs
  --logs DIR      keep each failing run's output there (default: a temp dir;
                  with --vm, BUILD/rr-loop-logs, as the guest's /tmp is lost)
  -h, --help      this text

Examples:
  bash scripts/rr-loop.sh --hog                    # 100x on the host, shm
  bash scripts/rr-loop.sh --vm --hog --iters 10    # 10x in the VM, verbs
EOF
}

die() {
	echo "rr-loop: $*" >&2
	exit 2
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
build=build iters= hog=0 tmo=600 explore=1 vm=0 inside=0 logs=
while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || die "--build wants a directory"; build=$2; shift ;;
	--iters) [ $# -ge 2 ] || die "--iters wants a number"; iters=$2; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout wants seconds"; tmo=$2; shift ;;
	--logs) [ $# -ge 2 ] || die "--logs wants a directory"; logs=$2; shift ;;
	--hog) hog=1 ;;
	--no-explore) explore=0 ;;
	--vm) vm=1 ;;
	--inside) inside=1 ;; # internal: we are the guest side of --vm
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done
case $iters in '') [ $vm = 1 ] && iters=10 || iters=100 ;; *[!0-9]* | 0) die "--iters wants a positive number, got '$iters'" ;; esac
case $tmo in '' | *[!0-9]* | 0) die "--timeout wants positive seconds, got '$tmo'" ;; esac
case $build in /*) ;; *) build=$ROOT/$build ;; esac
tests=$build/tests
for t in test_rr_proto test_rr_cancel test_rr_job test_rr_cli test_rr_explore; do
	[ -x "$tests/$t" ] || die "$tests/$t not found: build first (cmake -S . -B build && cmake --build build -j2) or pass --build DIR"
done

if [ $vm = 1 ] && [ $inside = 0 ]; then
	stdlib=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') ||
		die "/usr/bin/python3 is needed (test_rr_cli runs a python helper): apt-get install python3"
	# the guest's /tmp is gone at power-off: keep failing outputs in the tree
	[ -n "$logs" ] || logs=$build/rr-loop-logs
	args=(--build "$build" --iters "$iters" --timeout "$tmo" --inside --vm)
	[ $hog = 1 ] && args+=(--hog)
	[ $explore = 0 ] && args+=(--no-explore)
	[ -n "$logs" ] && args+=(--logs "$logs")
	# Guest time: the suites' runs plus boot; qemu is killed past it.
	budget=$(((3 * iters + explore) * tmo + 300))
	exec bash "$ROOT/scripts/softroce-vm.sh" run --timeout "$budget" --share "$ROOT" \
		--libs-of "$tests/test_rr_proto" --libs-of "$build/bin/flexrr" \
		--bin /usr/bin/python3 --ro "$stdlib" -- "bash scripts/rr-loop.sh ${args[*]}"
fi

[ -n "$logs" ] || logs=$(mktemp -d /tmp/rr-loop.XXXXXX)
mkdir -p "$logs" || die "cannot create $logs"
if [ $vm = 1 ]; then
	export FLEXRR_TEST_BACKENDS=verbs FLEXRR_TEST_QUICK=1
fi
hogpid=
cleanup() { [ -n "$hogpid" ] && kill "$hogpid" 2>/dev/null; }
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ $hog = 1 ]; then
	(while :; do :; done) &
	hogpid=$!
fi
echo "rr-loop: $iters x (test_rr_proto test_rr_cancel test_rr_job test_rr_cli)$([ $explore = 1 ] && echo ' + test_rr_explore')," \
	"bound ${tmo} s per run, hog $([ $hog = 1 ] && echo on || echo off)," \
	"backends ${FLEXRR_TEST_BACKENDS:-default}, $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg), logs $logs"

fails=0 runs=0
one() { # suite label
	local t=$1 label=$2 s e rc out
	out=$logs/$t.$label.log
	s=$(cut -d' ' -f1 /proc/uptime)
	timeout "$tmo" "$tests/$t" --jobs 1 >"$out" 2>&1
	rc=$?
	e=$(cut -d' ' -f1 /proc/uptime)
	runs=$((runs + 1))
	if [ $rc = 0 ]; then
		rm -f "$out"
		r=PASS
	else
		fails=$((fails + 1))
		[ $rc = 124 ] && r="HANG (killed after $tmo s)" || r="FAIL (exit $rc)"
		r="$r, output in $out"
	fi
	awk -v l="$label" -v t="$t" -v r="$r" -v s="$s" -v e="$e" -v ld="$(cut -d' ' -f1 /proc/loadavg)" \
		'BEGIN { printf "%s %-15s %s %.1f s load %s\n", l, t, r, e - s, ld }' 
}
for i in $(seq "$iters"); do
	for t in test_rr_proto test_rr_cancel test_rr_job test_rr_cli; do
		one $t "iter$i"
	done
done
[ $explore = 1 ] && one test_rr_explore once
echo "rr-loop: $fails failures in $runs suite runs$([ $fails -gt 0 ] && echo " (outputs in $logs)")"
[ $fails = 0 ]
