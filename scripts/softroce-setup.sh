#!/usr/bin/env bash
# softroce-setup.sh - create a soft-RoCE device (rdma_rxe) on this host so the
# verbs backend runs without RDMA hardware; needs a kernel with rdma_rxe.
#   scripts/softroce-setup.sh [--netdev IFACE] [--name rxe0] [--build BUILD_DIR]
#   scripts/softroce-setup.sh --remove [--name rxe0]
#   scripts/softroce-setup.sh --help
# Idempotent: an existing rxe device on IFACE is kept.  IFACE defaults to the
# interface of the default route (never lo: rdma_cm cannot route over it).
# Verifies with 'flexrr doctor' (BUILD_DIR/bin/flexrr, default build/).
# Kernels without rdma_rxe (no CONFIG_RDMA_RXE): use scripts/softroce-vm.sh,
# which boots a stock Debian kernel in qemu and runs commands there.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
netdev="" name=rxe0 remove=0 build="$ROOT/build"
while [ $# -gt 0 ]; do
	case $1 in
	--netdev) netdev=$2; shift ;;
	--name) name=$2; shift ;;
	--build) build=$2; shift ;;
	--remove) remove=1 ;;
	-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "softroce-setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
die() { echo "softroce-setup.sh: $*" >&2; exit 1; }
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

command -v rdma >/dev/null || {
	echo "softroce-setup.sh: installing iproute2 rdma-core ibverbs-providers" >&2
	$sudo apt-get install -y -qq --no-install-recommends iproute2 rdma-core ibverbs-providers >/dev/null
}

if [ $remove = 1 ]; then
	if rdma link show "$name/1" >/dev/null 2>&1; then
		$sudo rdma link delete "$name"
		echo "softroce-setup.sh: removed $name"
	else
		echo "softroce-setup.sh: no device $name: nothing to remove"
	fi
	exit 0
fi

if ! modinfo rdma_rxe >/dev/null 2>&1 && [ ! -d /sys/module/rdma_rxe ]; then
	die "this kernel ($(uname -r)) has no rdma_rxe module (CONFIG_RDMA_RXE is off),
so no soft-RoCE device can be created here.  Instead:
  - run verbs programs in the soft-RoCE VM: scripts/softroce-vm.sh run --share \"\$PWD\" -- CMD
    (scripts/test-verbs.sh does this for the test suites), or
  - install a kernel with rdma_rxe (Debian's linux-image-amd64 has it) and reboot."
fi
[ -d /sys/module/rdma_rxe ] || $sudo modprobe rdma_rxe || die "modprobe rdma_rxe failed (see dmesg)"
# rdma_cm's user-space device
[ -e /dev/infiniband/rdma_cm ] || $sudo modprobe rdma_ucm || die "modprobe rdma_ucm failed"

if [ -z "$netdev" ]; then
	netdev=$(ip -o route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") {print $(i+1); exit}}')
	[ -n "$netdev" ] || die "no default route to pick a netdev from: pass --netdev IFACE (an interface with an IPv4 address; not lo)"
fi
[ "$netdev" != lo ] || die "rdma_cm cannot route over lo: pick another netdev (a dummy one works: ip link add dummy0 type dummy; ip addr add 192.168.77.1/24 dev dummy0; ip link set dummy0 up)"
[ -e "/sys/class/net/$netdev" ] || die "no netdev '$netdev' (ip -br link lists them)"
ip -4 -o addr show dev "$netdev" | grep -q inet ||
	die "$netdev has no IPv4 address: rdma_cm needs one (ip addr add A.B.C.D/N dev $netdev)"

existing=$(rdma link show 2>/dev/null | awk -v n="$netdev" '$0 ~ "netdev " n "( |$)" {sub("/.*", "", $2); print $2; exit}')
if [ -n "$existing" ]; then
	echo "softroce-setup.sh: $existing already exists on $netdev: keeping it"
	name=$existing
else
	$sudo rdma link add "$name" type rxe netdev "$netdev" || die "rdma link add $name type rxe netdev $netdev failed (see dmesg)"
	echo "softroce-setup.sh: created $name on $netdev"
fi
for _ in $(seq 1 100); do
	grep -q ACTIVE "/sys/class/infiniband/$name/ports/1/state" 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE "/sys/class/infiniband/$name/ports/1/state" 2>/dev/null ||
	die "$name did not become ACTIVE within 10 s: is $netdev up with a carrier?"
if [ -x "$build/bin/flexrr" ]; then
	"$build/bin/flexrr" doctor --device "$name"
else
	echo "softroce-setup.sh: $name is ACTIVE; build flexrr and run 'flexrr doctor' to check the rest"
fi
