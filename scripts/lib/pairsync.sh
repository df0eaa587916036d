# shellcheck shell=bash
# Sourced inside the VMs of `scripts/softroce-vm.sh pair` (scripts/softroce/
# guest-pair.sh, bench/comm.sh --vms 2): the two VMs meet at named points
# through files in a directory both see.
#
#   pair_barrier DIR NAME   wait (up to 240 s) until the other VM reached
#                           NAME too; 1 and a message naming it if not

pair_barrier() {
	local dir=$1 name=$2 me=${SOFTROCE_VM:?not in a VM pair} other=b
	[ "$me" = b ] && other=a
	touch "$dir/sync.$name.$me"
	for _ in $(seq 1 4800); do
		[ -e "$dir/sync.$name.$other" ] && return 0
		sleep 0.05
	done
	echo "pair: VM $other did not reach '$name' within 240 s" >&2
	return 1
}
