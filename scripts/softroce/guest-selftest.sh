#!/bin/bash
# Runs inside the soft-RoCE VM (softroce-vm.sh selftest): is rxe0 usable?
# ibv_devinfo must show an ACTIVE port, and a short ib_write_bw between two
# processes over rdma_cm must pass.  Exit status = number of failed checks.
fails=0
check() { # name cmd...
	local name=$1 s
	shift
	s=$(cut -d' ' -f1 /proc/uptime)
	echo "=== selftest: $name"
	if "$@"; then
		echo "=== selftest: $name: ok ($(awk -v a="$s" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{printf "%.2f", b-a}') s)"
	else
		echo "=== selftest: $name: FAILED"
		fails=$((fails + 1))
	fi
}
devinfo() { ibv_devinfo -d "$RXE_DEV" | tee /tmp/devinfo && grep -q 'PORT_ACTIVE' /tmp/devinfo; }
write_bw() {
	timeout 60 ib_write_bw -d "$RXE_DEV" -x "$RXE_GID_IDX" -R -n 200 -s 65536 >/tmp/srv 2>&1 &
	local spid=$! c s
	sleep 0.5
	timeout 60 ib_write_bw -d "$RXE_DEV" -x "$RXE_GID_IDX" -R -n 200 -s 65536 "$RXE_IP"
	c=$?
	wait $spid
	s=$?
	[ $s = 0 ] || cat /tmp/srv
	[ $c = 0 ] && [ $s = 0 ]
}
echo "kernel $(uname -r), $(nproc) cpus, ulimit -l $(ulimit -l)"
check "rdma link" rdma link show
check "ibv_devinfo $RXE_DEV" devinfo
check "ib_write_bw (rdma_cm, 200 x 64 KiB)" write_bw
echo "selftest: $fails failure(s)"
exit $fails
