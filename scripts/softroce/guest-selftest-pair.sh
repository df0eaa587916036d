#!/bin/bash
# Runs in both VMs of `softroce-vm.sh selftest-pair`: is the wire between the
# two rxe0 devices usable?  VM a serves, VM b connects to RXE_PEER_IP:
# rping (rdma_cm + RDMA READ/WRITE) and ib_write_lat (perftest over rdma_cm).
# The client starts 2 s after the server and retries every 2 s (a client
# that knocks too early, before the listener, gets rejected harmlessly).  Prints the rxe
# retransmission counters.  Exit status = number of failed checks.
fails=0
up() { cut -d' ' -f1 /proc/uptime; }
retry() {
	for _ in $(seq 1 15); do
		timeout 60 "$@" && return 0
		sleep 2
	done
	return 1
}
check() { # name server-cmd -- client-cmd
	local name=$1 s srv=() cli=()
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	s=$(up)
	echo "=== selftest-pair $SOFTROCE_VM: $name"
	if [ "$SOFTROCE_VM" = a ]; then timeout 90 "${srv[@]}"; else sleep 2; retry "${cli[@]}"; fi
	local rc=$?
	echo "=== selftest-pair $SOFTROCE_VM: $name: rc=$rc ($(awk -v a="$s" -v b="$(up)" 'BEGIN{printf "%.2f", b-a}') s)"
	[ $rc = 0 ] || fails=$((fails + 1))
}
echo "VM $SOFTROCE_VM: $RXE_DEV on $RXE_NETDEV ip $RXE_IP gid $RXE_GID_IDX, peer $RXE_PEER_IP"
check "rping x 10" rping -s -a "$RXE_IP" -C 10 -- rping -c -a "$RXE_PEER_IP" -C 10
check "ib_write_lat x 200" ib_write_lat -d "$RXE_DEV" -x "$RXE_GID_IDX" -R -n 200 -- \
	ib_write_lat -d "$RXE_DEV" -x "$RXE_GID_IDX" -R -n 200 "$RXE_PEER_IP"
c=/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters
echo "VM $SOFTROCE_VM counters: sent_pkts=$(cat $c/sent_pkts) rcvd_pkts=$(cat $c/rcvd_pkts)" \
	"retry_exceeded_err=$(cat $c/retry_exceeded_err) completer_retry_err=$(cat $c/completer_retry_err)" \
	"duplicate_request=$(cat $c/duplicate_request)"
echo "VM $SOFTROCE_VM: $fails failure(s)"
exit $fails
