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
	if [ "$(type -t "$1")" = function ]; then
		"$@" # bounded inside
	else
		timeout "$per" "$@"
	fi
	rc=$?
	[ $rc = 124 ] && echo "=== verbs suite: $name: TIMEOUT after ${per}s"
	names+=("$name")
	times+=("$(awk -v a="$t0" -v b="$(up)" 'BEGIN{printf "%.1f", b-a}')")
	if [ $rc = 0 ]; then results+=(PASS); else results+=("FAIL($rc)"); fails=$((fails + 1)); fi
	echo "=== verbs suite: $name: ${results[-1]} (${times[-1]} s)"
}
echo "verbs suites on $(uname -r), $(nproc) cpus, device(s): $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
for pat in test_transport_ test_verbs_ test_runtime_ test_rr_ test_doctor_; do
	for t in "$build"/tests/"$pat"*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		# host only: in-process engine suites never touch a transport, and
		# test_transport_launch tests the bootstrap's collectives (no
		# backend; its >64 MiB allgathers took 44 s of the VM stage)
		case $(basename "$t") in test_rr_proto | test_rr_cancel | test_rr_explore | test_transport_launch) continue ;; esac
		run "$(basename "$t")" "$t" --jobs 1
	done
done
# Determinism across backends: the same BSP job (one thread per process,
# fixed seed) must print the same summary line on shm and on verbs.
mf_same_on_shm_and_verbs() {
	FLEXRR_TEST_BACKENDS=shm,verbs timeout "$per" "$build/tests/test_mf_app" \
		--jobs 1 --filter 'mf_app/bsp_deterministic_across_backends'
}
[ -x "$build/tests/test_mf_app" ] && run "test_mf_app: BSP equal on shm and verbs" mf_same_on_shm_and_verbs
run "flexrr doctor" "$build/bin/flexrr" doctor

# Bad input, in the VM only (RXE_NETDEV is ours there; never touch a real
# host's links): the doctor must fail naming the cause when the port is down
# and when the netdev has no IPv4 address (so no RoCE v2 IPv4 GID), in text
# and in --json.
expect_unhealthy() { # what grep-pattern
	local out js rc=0 jrc=0
	out=$(timeout 60 "$build/bin/flexrr" doctor 2>&1) || rc=$?
	js=$(timeout 60 "$build/bin/flexrr" doctor --json 2>/dev/null) || jrc=$?
	printf '%s\n' "$out" | grep -E 'PROBLEM|verdict' | head -4
	printf '%s\n' "$js" | cut -c1-160
	[ $rc = 1 ] && printf '%s\n' "$out" | grep -q "$2" && [ $jrc = 1 ] &&
		printf '%s\n' "$js" | grep -q '"verdict":"unhealthy"' &&
		printf '%s\n' "$js" | grep -q "\"level\":\"problem\",\"what\":\"[^\"]*$2"
}
if [ -n "${RXE_NETDEV:-}" ] && [ -n "${RXE_IP:-}" ]; then
	port_down() {
		/usr/sbin/ip link set "$RXE_NETDEV" down
		sleep 1
		expect_unhealthy "port down" "not ACTIVE"
		local rc=$?
		/usr/sbin/ip link set "$RXE_NETDEV" up
		return $rc
	}
	no_gid() {
		/usr/sbin/ip addr del "$RXE_IP/24" dev "$RXE_NETDEV"
		sleep 1
		expect_unhealthy "no RoCE v2 GID" "no RoCE v2 GID"
		local rc=$?
		/usr/sbin/ip addr add "$RXE_IP/24" dev "$RXE_NETDEV"
		return $rc
	}
	run "flexrr doctor: port down" port_down
	run "flexrr doctor: no IPv4 GID" no_gid
fi
echo
echo "verbs suites summary:"
for i in "${!names[@]}"; do
	printf '  %-36s %-10s %6s s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
echo "verbs suites: $((${#names[@]} - fails)) passed, $fails failed"
exit $fails
