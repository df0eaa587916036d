#!/bin/sh
# /init of the soft-RoCE VM's initramfs (busybox sh; built by scripts/softroce-vm.sh).
# Loads the RDMA modules in order, binds rdma_rxe as rxe0 to a dummy netdev (one VM) or
# to eth0 (softroce.net=eth: a VM of a pair, whose eth0 is a virtual wire to the other
# VM), mounts the host's shared directory (9p) at the same path, runs /softroce/cmd with
# bash, prints SOFTROCE_EXIT=<status> and powers off.  Any set-up failure prints
# SOFTROCE_EXIT=125.
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /root /tmp /run
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
chmod 1777 /tmp /dev/shm
ln -sf /proc/self/fd /dev/fd

# busybox sh prefers its own applets over $PATH: force iproute2's ip
ip() { /usr/sbin/ip "$@"; }
up() { cut -d' ' -f1 /proc/uptime; }
fail() {
	echo "SOFTROCE: setup failed: $*"
	echo "SOFTROCE_EXIT=125"
	poweroff -f
}

SHARE= IP=192.168.77.1 NET=dummy MTU= PEER= VM=
for x in $(cat /proc/cmdline); do
	case $x in
	softroce.share=*) SHARE=${x#*=} ;;
	softroce.ip=*) IP=${x#*=} ;;
	softroce.net=*) NET=${x#*=} ;;
	softroce.mtu=*) MTU=${x#*=} ;;
	softroce.peer=*) PEER=${x#*=} ;;
	softroce.vm=*) VM=${x#*=} ;;
	esac
done

# Module order matters (dependencies first, computed on the host with modprobe
# --show-depends).  crc32_generic is in the list: rxe computes its ICRC with
# crypto_alloc_shash("crc32"), which is only request_module()d at run time.
while read -r m; do
	insmod /lib/modules/"$m" || echo "SOFTROCE: insmod $m failed"
done </etc/modules.order

ip link set lo up
# rdma_cm cannot resolve routes over lo (rdma_resolve_route: No such device),
# so a single VM's rxe sits on a dummy netdev; MTU 1500 gives an RDMA MTU of 1024.
case $NET in
dummy)
	DEV=dummy0
	[ -e /sys/class/net/dummy0 ] || ip link add dummy0 type dummy
	;;
eth)
	DEV=eth0
	[ -e /sys/class/net/eth0 ] || fail "no eth0 (virtio-net) in the guest"
	;;
*) fail "unknown softroce.net=$NET (dummy or eth)" ;;
esac
[ -z "$MTU" ] || ip link set "$DEV" mtu "$MTU" || fail "cannot set the MTU of $DEV to $MTU"
ip addr add "$IP/24" dev "$DEV" || fail "cannot address $DEV"
ip link set "$DEV" up

# Index of the RoCE v2 GID holding an IPv4-mapped address (::ffff:a.b.c.d).
gid_idx() {
	d=/sys/class/infiniband/$1/ports/1
	for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		g=$(cat $d/gids/$i 2>/dev/null) || continue
		t=$(cat $d/gid_attrs/types/$i 2>/dev/null)
		case $g in 0000:0000:0000:0000:0000:ffff:*)
			[ "$t" = "RoCE v2" ] && { echo $i; return 0; } ;;
		esac
	done
	return 1
}
rdma link add rxe0 type rxe netdev "$DEV" || fail "rdma link add rxe0 type rxe netdev $DEV"
n=0
until [ "$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)" = "4: ACTIVE" ] && gid_idx rxe0 >/dev/null; do
	n=$((n + 1))
	[ $n -gt 200 ] && fail "rxe0 not ACTIVE with an IPv4 RoCE v2 GID after 10 s"
	sleep 0.05
done
export RXE_DEV=rxe0 RXE_IP=$IP RXE_NETDEV=$DEV RXE_GID_IDX=$(gid_idx rxe0)
# a VM of a pair: its name (a or b) and the other VM's address
[ -z "$VM" ] || export SOFTROCE_VM=$VM RXE_PEER_IP=$PEER
echo "SOFTROCE: $RXE_DEV ready on $DEV ip=$RXE_IP mtu=$(cat /sys/class/net/$DEV/mtu) gid_idx=$RXE_GID_IDX${VM:+ vm=$VM peer=$PEER}, uptime $(up)s"

if [ -n "$SHARE" ]; then
	mkdir -p "$SHARE"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none share "$SHARE" ||
		fail "9p mount of $SHARE"
	cd "$SHARE"
fi
# read-only host directories (--ro), at the same paths
for x in $(cat /proc/cmdline); do
	case $x in
	softroce.ro*=*)
		tag=${x%%=*}
		tag=${tag#softroce.}
		dir=${x#*=}
		mkdir -p "$dir"
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro "$tag" "$dir" ||
			fail "9p mount of $dir"
		;;
	esac
done
ulimit -l unlimited
/usr/bin/bash -c "$(cat /softroce/cmd)"
rc=$?
cd /
sync
echo "SOFTROCE_EXIT=$rc"
poweroff -f
