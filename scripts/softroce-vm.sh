#!/usr/bin/env bash
# softroce-vm.sh - run RDMA verbs programs on a real soft-RoCE device (rdma_rxe)
# on a host whose own kernel has no RDMA support: boots Debian's stock kernel
# under qemu (TCG) with a small busybox initramfs that loads the RDMA modules,
# creates rxe0 on a dummy netdev, runs one command and powers off.
#
# usage:
#   scripts/softroce-vm.sh setup              install packages, fetch the kernel,
#                                             build the initramfs (idempotent)
#   scripts/softroce-vm.sh run [opts] -- CMD  boot, run CMD (bash -c) in the guest,
#                                             exit with CMD's status
#   scripts/softroce-vm.sh selftest [opts]    setup + ibv_devinfo + ib_write_bw in the guest
#   scripts/softroce-vm.sh pair [opts] -- CMD two VMs on one virtual Ethernet wire, each
#                                             with its own rxe0; CMD runs in both; exit
#                                             status: a's if it failed, else b's
#   scripts/softroce-vm.sh selftest-pair      setup + rping and ib_write_lat across a pair
#   scripts/softroce-vm.sh clean              remove the cache
#   scripts/softroce-vm.sh --help
#
# run/selftest/pair options:
#   --share DIR      mount host DIR read-write in the guest at the same path (9p);
#                    CMD starts there.  Default: none.
#   --bin FILE       pack FILE and its shared libraries into the guest at the same
#                    paths (repeatable)
#   --libs-of FILE   pack only FILE's shared libraries (the file itself comes
#                    through --share; repeatable)
#   --ro DIR         also mount host DIR read-only at the same path (repeatable;
#                    e.g. a Python stdlib for a packed python3)
#   --mem MB (1024)  --smp N (2; 1 makes busy-polling peers 5-10x slower)
#   --timeout S (600): qemu is killed after S seconds, exit status 124
#   --accel tcg|kvm (tcg)   --verbose (kernel console messages too)
# pair only (each VM gets --mem/--smp/--timeout; --smp defaults to 1 there):
#   --mtu A,B        netdev MTUs of VM a and VM b (1500,1500)
#
# In the guest: rxe0 is ACTIVE on dummy0 (192.168.77.1/24, RDMA MTU 1024); env
# RXE_DEV=rxe0, RXE_IP, RXE_NETDEV=dummy0, RXE_GID_IDX (RoCE v2 IPv4 GID) are set;
# CMD runs as root with ulimit -l unlimited; PATH has bash, busybox, iproute2
# (ip, rdma), ibv_devinfo, perftest (ib_write_lat/bw...), rping, setpriv, prlimit.
# In a pair, rxe0 sits on eth0 instead: VM a is 192.168.77.1, VM b 192.168.77.2,
# SOFTROCE_VM=a|b and RXE_PEER_IP (the other VM) are set, RXE_NETDEV=eth0.  The
# wire is a pair of unix datagram sockets in the run's temp dir (qemu's dgram
# netdev): no host network, no port, nothing another run can collide with; the
# guests' addresses exist only on that wire.  Console lines are prefixed 'a| '
# and 'b| '.  Both VMs are stopped when the script exits, whatever the cause.
# Exit status: CMD's; 124 timeout; 125 guest set-up failed; 2 host-side error.
#
# Environment: SOFTROCE_CACHE = cache dir for kernel, modules and initramfs
# (default /var/cache/flexrr/softroce-vm, or ~/.cache/flexrr/softroce-vm when
# that is not writable).  First setup: ~70 MB kernel .deb via apt-get download.
set -euo pipefail

work="" # per-run temp dir (global: removed by the EXIT trap)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST_DIR=$HERE/softroce
TRIPLET=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
if [ -n "${SOFTROCE_CACHE:-}" ]; then
	CACHE=$SOFTROCE_CACHE
elif mkdir -p /var/cache/flexrr/softroce-vm 2>/dev/null && [ -w /var/cache/flexrr/softroce-vm ]; then
	CACHE=/var/cache/flexrr/softroce-vm
else
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/flexrr/softroce-vm
fi

log() { printf '[softroce-vm %s] %s\n' "$(date +%T)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 2
}
usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }

# ---------------------------------------------------------------------------
PKGS="qemu-system-x86 busybox-static ibverbs-utils ibverbs-providers perftest
      rdmacm-utils rdma-core iproute2 cpio kmod xz-utils util-linux"
apt_setup() {
	local p missing=()
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}"
	log "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
}

kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}

kernel_setup() {
	[ -f "$CACHE/kver" ] && [ -f "$CACHE/vmlinuz" ] && [ -d "$CACHE/kpkg/lib/modules" ] && return 0
	local pkg kver off
	pkg=$(kernel_pkg)
	if [ -z "$pkg" ]; then
		[ "$(id -u)" = 0 ] && apt-get update -qq
		pkg=$(kernel_pkg)
	fi
	[ -n "$pkg" ] || die "cannot resolve the package behind linux-image-amd64; run 'apt-get update' (as root) and retry"
	kver=${pkg#linux-image-}
	log "downloading $pkg (about 70 MB, once) into $CACHE"
	rm -rf "$CACHE/kpkg" "$CACHE"/linux-image-*.deb "$CACHE/vmlinux" "$CACHE/vmlinuz"
	(cd "$CACHE" && apt-get download -qq -o APT::Sandbox::User=root "$pkg") || die "apt-get download $pkg failed (network or apt sources?)"
	dpkg -x "$CACHE"/linux-image-*.deb "$CACHE/kpkg"
	rm -f "$CACHE"/linux-image-*.deb
	depmod -b "$CACHE/kpkg" "$kver"
	cp "$CACHE/kpkg/boot/vmlinuz-$kver" "$CACHE/vmlinuz"
	# The uncompressed ELF vmlinux boots through qemu's PVH entry (CONFIG_PVH=y),
	# skipping the firmware and the xz decompression (about 5 s under TCG).
	for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$CACHE/vmlinuz" | cut -d: -f1); do
		tail -c +$((off + 1)) "$CACHE/vmlinuz" | xz -dc >"$CACHE/vmlinux" 2>/dev/null || true
		[ "$(head -c 4 "$CACHE/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && break
		rm -f "$CACHE/vmlinux"
	done
	[ -f "$CACHE/vmlinux" ] || log "note: could not extract vmlinux; booting the bzImage (about 5 s slower)"
	echo "$kver" >"$CACHE/kver"
}

# The guest has /lib and /lib64 as symlinks into /usr (merged /usr, like the
# host): never create them as directories in an extra cpio layer, that would
# replace the symlink and hide the base layer's libraries.
guest_path() { sed 's#^/lib/#/usr/lib/#; s#^/lib64/#/usr/lib64/#' <<<"$1"; }
copy_libs() { # root file
	local root=$1 f=$2 lib dst
	for lib in $(ldd "$f" 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/lib/ {print $1}'); do
		dst=$(guest_path "$lib")
		[ -e "$root$dst" ] && continue
		[ -n "${BASE_ROOT:-}" ] && [ -e "$BASE_ROOT$dst" ] && continue
		mkdir -p "$root$(dirname "$dst")"
		cp -L "$lib" "$root$dst"
	done
}
copy_with_libs() { # root file
	local root=$1 f=$2 dst
	[ -e "$f" ] || die "no such file: $f"
	dst=$(guest_path "$f")
	mkdir -p "$root$(dirname "$dst")"
	cp -L "$f" "$root$dst"
	copy_libs "$root" "$f"
}

# Rebuilt when the kernel, this script or the guest files change.
initramfs_stamp() { cat "$CACHE/kver" "$0" "$GUEST_DIR"/* | sha256sum | cut -c1-16; }

build_initramfs() {
	local kver root moddir m b stamp
	kver=$(cat "$CACHE/kver")
	stamp=$(initramfs_stamp)
	[ -f "$CACHE/base.cpio.gz" ] && [ "$(cat "$CACHE/base.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	log "building the initramfs for kernel $kver"
	root="$CACHE/root"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,mnt,root,var,softroce,usr/bin,usr/sbin,usr/local/bin,usr/lib/"$TRIPLET",usr/lib64,usr/lib/modules}
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	cp /bin/busybox "$root/bin/busybox"
	for m in $(/bin/busybox --list); do
		[ "$m" = busybox ] || ln -sf busybox "$root/bin/$m"
	done
	ln -sf ../../bin/busybox "$root/usr/bin/env" # '#!/usr/bin/env bash' scripts
	for b in bash ip rdma ibv_devinfo ibv_devices ibv_rc_pingpong ib_write_lat \
		ib_write_bw ib_read_lat ib_send_lat rping setpriv prlimit; do
		command -v "$b" >/dev/null || die "'$b' not found on the host (apt-get install $PKGS)"
		copy_with_libs "$root" "$(command -v "$b")"
	done
	# the rxe user-space provider is dlopen()ed, so ldd does not list it
	for b in /usr/lib/"$TRIPLET"/libibverbs/librxe-rdmav*.so; do
		[ -e "$b" ] || die "rxe provider not found (apt-get install ibverbs-providers)"
		copy_with_libs "$root" "$b"
	done
	# glibc dlopen()s libgcc_s for pthread_exit/cancel
	copy_with_libs "$root" "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/{print $NF; exit}')"
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	printf '127.0.0.1 localhost\n192.168.77.1 guest\n' >"$root/etc/hosts"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	printf 'hosts: files\npasswd: files\ngroup: files\n' >"$root/etc/nsswitch.conf"
	# modules in dependency order (virtio_net: the wire of a pair);
	# crc32_generic is only request_module()d by rxe at run time (no
	# modules.dep entry), so it is listed explicitly
	moddir="$CACHE/kpkg"
	: >"$root/etc/modules.order"
	for m in virtio_pci virtio_net 9pnet_virtio 9p dummy crc32_generic rdma_rxe rdma_ucm; do
		modprobe -d "$moddir" -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
	done | awk '!seen[$0]++' | while read -r m; do
		cp "$m" "$root/usr/lib/modules/"
		basename "$m" >>"$root/etc/modules.order"
	done
	[ -s "$root/etc/modules.order" ] || die "no kernel modules resolved from $moddir"
	cp "$GUEST_DIR/guest-init.sh" "$root/init"
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$CACHE/base.cpio.gz.tmp"
	mv "$CACHE/base.cpio.gz.tmp" "$CACHE/base.cpio.gz"
	echo "$stamp" >"$CACHE/base.stamp"
	log "initramfs ready: $(du -h "$CACHE/base.cpio.gz" | cut -f1)"
}

setup() {
	mkdir -p "$CACHE" || die "cannot create cache dir $CACHE (set SOFTROCE_CACHE)"
	command -v flock >/dev/null || die "flock not found (apt-get install util-linux)"
	# one setup at a time per cache
	exec 9>"$CACHE/.lock"
	flock -w 900 9 || die "timed out waiting for another setup holding $CACHE/.lock"
	apt_setup
	kernel_setup
	build_initramfs
	flock -u 9
}

# ---------------------------------------------------------------------------
# Stop the qemu of a run directory if it still runs: by the pid qemu wrote
# there, and only if that pid is still a qemu (never a recycled pid).
stop_qemu() { # dir
	local pid
	pid=$(cat "$1/qemu.pid" 2>/dev/null) || return 0
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qemu-system-x86 ] || return 0
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 30); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

# Options of a VM of a pair (set by pair_vms, not for users): a name that
# prefixes the console lines, the run directory (made and removed by the
# caller), and the eth0 wire: local and remote unix datagram socket paths,
# MAC, IPv4 address, the peer's address and the netdev MTU.
run_vm() {
	local share="" mem=1024 smp=2 timeout=600 accel=tcg verbose=0
	local bins=() libsof=() ros=() name="" wire="" mac="" ip="" peer="" mtu=""
	while [ $# -gt 0 ]; do
		case $1 in
		--share) share=$(cd "$2" && pwd) || die "--share: no directory $2"; shift 2 ;;
		# keep the name (a symlink like python3 -> python3.11 is packed
		# under its own name, with the target's content)
		--bin) bins+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
		--libs-of) libsof+=("$(readlink -f "$2")"); shift 2 ;;
		--ro) ros+=("$(cd "$2" && pwd)") || die "--ro: no directory $2"; shift 2 ;;
		--mem) mem=$2; shift 2 ;;
		--smp) smp=$2; shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--accel) accel=$2; shift 2 ;;
		--verbose) verbose=1; shift ;;
		--vm-name) name=$2; shift 2 ;;
		--vm-dir) work=$2; shift 2 ;;
		--vm-wire) wire=$2; shift 2 ;;
		--vm-mac) mac=$2; shift 2 ;;
		--vm-ip) ip=$2; shift 2 ;;
		--vm-peer) peer=$2; shift 2 ;;
		--vm-mtu) mtu=$2; shift 2 ;;
		--) shift; break ;;
		-h | --help) usage; exit 0 ;;
		*) die "unknown option '$1' (see --help)" ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command given (… run [opts] -- CMD)"
	[ -n "$name" ] || setup # a pair's caller has set up once
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"

	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/tmp}/softroce-run.XXXXXX")
		trap 'stop_qemu "$work"; rm -rf "$work"' EXIT
	fi
	mkdir -p "$work/root/softroce"
	printf '%s\n' "$*" >"$work/root/softroce/cmd"
	local b
	for b in ${bins[@]+"${bins[@]}"}; do BASE_ROOT="$CACHE/root" copy_with_libs "$work/root" "$b"; done
	for b in ${libsof[@]+"${libsof[@]}"}; do
		[ -e "$b" ] || die "no such file: $b"
		BASE_ROOT="$CACHE/root" copy_libs "$work/root" "$b"
	done
	(cd "$work/root" && find . -mindepth 1 | cpio -o -H newc --quiet | gzip -1) >"$work/extra.cpio.gz"
	# the kernel unpacks concatenated cpio archives in order
	cat "$CACHE/base.cpio.gz" "$work/extra.cpio.gz" >"$work/initrd.gz"

	# no_timer_check: under a loaded host the emulated CPU can miss the
	# boot-time timer IRQ test ("IO-APIC + timer doesn't work!" panic)
	local append="console=ttyS0 panic=-1 no_timer_check"
	[ $verbose = 1 ] || append="$append quiet"
	local qargs=(-machine q35 -m "$mem" -smp "$smp" -display none -serial stdio
		-monitor none -no-reboot -initrd "$work/initrd.gz" -pidfile "$work/qemu.pid")
	if [ -f "$CACHE/vmlinux" ]; then qargs+=(-kernel "$CACHE/vmlinux"); else qargs+=(-kernel "$CACHE/vmlinuz"); fi
	case $accel in
	kvm) qargs+=(-accel kvm -cpu host) ;;
	# no ERMS/FSRM: the guest kernel's memcpy then copies with 8-byte
	# moves, so rxe places aligned 8-byte payloads untorn (docs/verbs.md)
	tcg) qargs+=(-accel tcg,thread=multi -cpu max,-erms,-fsrm) ;;
	*) die "--accel must be tcg or kvm" ;;
	esac
	if [ -n "$wire" ]; then
		# unix datagram sockets: one frame per datagram, no Nagle delays
		# (a TCP socket netdev costs ~40 ms per small frame), no port
		qargs+=(-netdev "dgram,id=wire,local.type=unix,local.path=${wire%%,*},remote.type=unix,remote.path=${wire#*,}"
			-device "virtio-net-pci,netdev=wire,mac=$mac")
		append="$append softroce.net=eth softroce.ip=$ip softroce.peer=$peer softroce.vm=$name"
		[ -z "$mtu" ] || append="$append softroce.mtu=$mtu"
	else
		qargs+=(-nic none)
	fi
	if [ -n "$share" ]; then
		qargs+=(-virtfs "local,path=$share,mount_tag=share,security_model=none,id=share")
		append="$append softroce.share=$share"
	fi
	local i=0
	for b in ${ros[@]+"${ros[@]}"}; do
		qargs+=(-virtfs "local,path=$b,mount_tag=ro$i,security_model=none,readonly=on,id=ro$i")
		append="$append softroce.ro$i=$b"
		i=$((i + 1))
	done
	qargs+=(-append "$append")

	log "${name:+VM $name: }booting: accel=$accel mem=${mem}M smp=$smp share=${share:-none} timeout=${timeout}s"
	local t0=$SECONDS rc_file="$work/rc" prc=0 line rc pfx=${name:+$name| }
	echo 125 >"$rc_file"
	timeout "$timeout" qemu-system-x86_64 "${qargs[@]}" </dev/null 2>&1 |
		while IFS= read -r line; do
			line=${line%$'\r'}
			case $line in
			SOFTROCE_EXIT=*) echo "${line#SOFTROCE_EXIT=}" >"$rc_file" ;;
			*) printf '%s%s\n' "$pfx" "$line" ;;
			esac
		done || prc=$?
	rc=$(cat "$rc_file")
	if [ "$prc" = 124 ]; then
		log "${name:+VM $name: }TIMEOUT: the guest did not finish within ${timeout}s (raise --timeout?)"
		rc=124
	fi
	log "${name:+VM $name: }guest finished: exit status $rc, $((SECONDS - t0)) s"
	return "$rc"
}

# Two VMs, a and b, on one virtual Ethernet wire; CMD runs in both.
pair_vms() {
	local opts=() mtus=1500,1500 smp=1 have_cmd=0
	while [ $# -gt 0 ]; do
		case $1 in
		--mtu) mtus=$2; shift 2 ;;
		--smp) smp=$2; shift 2 ;;
		--verbose) opts+=("$1"); shift ;;
		--) have_cmd=1; shift; break ;;
		-h | --help) usage; exit 0 ;;
		--*) [ $# -ge 2 ] || die "$1 wants a value (see --help)"
			opts+=("$1" "$2"); shift 2 ;;
		*) die "unknown argument '$1' (see --help)" ;;
		esac
	done
	[ $have_cmd = 1 ] && [ $# -gt 0 ] || die "pair: no command given (… pair [opts] -- CMD)"
	[[ $mtus =~ ^[0-9]+,[0-9]+$ ]] || die "--mtu wants A,B (e.g. 1500,4200), got '$mtus'"
	setup
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/softroce-pair.XXXXXX")
	# sun_path holds 107 bytes
	[ ${#dir} -lt 90 ] || die "temp dir path too long for a unix socket: $dir (set TMPDIR=/tmp)"
	trap 'stop_qemu "'"$dir"'/a"; stop_qemu "'"$dir"'/b"; rm -rf "'"$dir"'"' EXIT
	mkdir "$dir/a" "$dir/b"
	local pids=() v ip peer mac mtu
	for v in a b; do
		if [ $v = a ]; then
			ip=192.168.77.1 peer=192.168.77.2 mac=52:54:00:77:00:01 mtu=${mtus%,*}
		else
			ip=192.168.77.2 peer=192.168.77.1 mac=52:54:00:77:00:02 mtu=${mtus#*,}
		fi
		run_vm --vm-name $v --vm-dir "$dir/$v" --vm-wire "$dir/$v.sock,$dir/$([ $v = a ] && echo b || echo a).sock" \
			--vm-mac $mac --vm-ip $ip --vm-peer $peer --vm-mtu "$mtu" --smp "$smp" \
			${opts[@]+"${opts[@]}"} -- "$@" &
		pids+=($!)
	done
	# a VM whose set-up failed (125) or timed out (124) leaves its partner
	# waiting for nobody: stop that one too
	local ra="" rb="" done_pid rc left=("${pids[@]}") p rest
	while [ ${#left[@]} -gt 0 ]; do
		rc=0 done_pid=""
		wait -n -p done_pid "${left[@]}" || rc=$?
		[ -n "$done_pid" ] || break
		rest=()
		for p in "${left[@]}"; do [ "$p" = "$done_pid" ] || rest+=("$p"); done
		left=(${rest[@]+"${rest[@]}"})
		if [ "$done_pid" = "${pids[0]}" ]; then ra=$rc; else rb=$rc; fi
		if [ "$rc" = 124 ] || [ "$rc" = 125 ]; then
			log "VM $([ "$done_pid" = "${pids[0]}" ] && echo a || echo b) ended with $rc: stopping the other"
			stop_qemu "$dir/a"
			stop_qemu "$dir/b"
		fi
	done
	log "pair finished: VM a exit status ${ra:-?}, VM b exit status ${rb:-?}"
	[ "${ra:-2}" = 0 ] || return "${ra:-2}"
	return "${rb:-2}"
}

selftest() {
	local args=()
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage; exit 0 ;;
		*) args+=("$1"); shift ;;
		esac
	done
	run_vm --share "$GUEST_DIR" ${args[@]+"${args[@]}"} -- "bash $GUEST_DIR/guest-selftest.sh"
}

# rping (rdma_cm) and ib_write_lat between the VMs of a pair
selftest_pair() {
	pair_vms --share "$GUEST_DIR" "$@" -- "bash $GUEST_DIR/guest-selftest-pair.sh"
}

case ${1:-} in
setup) setup; log "ready: cache $CACHE, kernel $(cat "$CACHE/kver")" ;;
run) shift; run_vm "$@" ;;
selftest) shift; selftest "$@" ;;
pair) shift; pair_vms "$@" ;;
selftest-pair) shift; selftest_pair "$@" ;;
clean) rm -rf "$CACHE"; log "removed $CACHE" ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
