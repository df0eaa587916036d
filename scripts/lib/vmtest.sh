# shellcheck shell=bash
# Sourced by scripts/test-verbs.sh, test-2vm.sh and test-sim-pair.sh (the stages that
# may boot the soft-RoCE VM): ROOT, the command line both share (BUILD_DIR,
# -h/--help, the script's own options through its vt_opt), the checks of
# BUILD_DIR, and whether this host has an RDMA port to run on natively.
#
#   vt_name=test-x.sh      # for messages
#   vt_opt() { ...; }      # $1 an option (with "$2" its value): set it and
#                          # vt_used=2 if it took the value; return 1 if
#                          # unknown
#   vt_parse HELP_LAST "$@"  # sets build; --help prints lines 2..HELP_LAST
#   vt_check_build tests/ bin/flexrr   # what BUILD_DIR must hold; makes
#                                      # build absolute
#   vt_inside_root WHAT    # BUILD_DIR must be below ROOT (shared with WHAT)
#   vt_have_active_port    # 0 when an RDMA port here is ACTIVE
#   vt_pair_scratch NAME   # scratch=BUILD_DIR/NAME.XXXXXX (mode 700) with
#                          # the job secret in scratch/token, as a launcher
#                          # hands it (never on a command line); on exit
#                          # the VM pair is stopped and, unless keep=1, the
#                          # scratch dropped
#   vt_pair_run PAIR-ARGS... # scripts/softroce-vm.sh pair PAIR-ARGS, waited
#                          # for in the background (a signal reaches the
#                          # exit trap at once); its status in vmrc

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

vt_parse() {
	local help=$1
	shift
	build=""
	while [ $# -gt 0 ]; do
		vt_used=1
		case $1 in
		-h | --help) sed -n "2,${help}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) vt_opt "$@" || { echo "$vt_name: unknown option '$1' (see --help)" >&2; exit 2; } ;;
		*) build=$1 ;;
		esac
		shift "$vt_used"
	done
}

vt_check_build() {
	local p missing=0 what
	[ -n "$build" ] || { echo "usage: scripts/$vt_name BUILD_DIR (see --help)" >&2; exit 2; }
	for p in "$@"; do
		case $p in
		*/) [ -d "$build/$p" ] || missing=1 ;;
		*) [ -x "$build/$p" ] || missing=1 ;;
		esac
	done
	if [ $missing = 1 ]; then
		what=$(printf '%s or ' "$@")
		echo "$vt_name: $build has no ${what% or }: build it first (scripts/setup.sh --tests)" >&2
		exit 2
	fi
	build=$(cd "$build" && pwd)
}

vt_inside_root() {
	case $build/ in
	"$ROOT"/*) ;;
	*) echo "$vt_name: $build must be inside $ROOT (shared with $1)" >&2; exit 2 ;;
	esac
}

vt_have_active_port() {
	local s
	for s in /sys/class/infiniband/*/ports/*/state; do
		[ -e "$s" ] && grep -q ACTIVE "$s" && return 0
	done
	return 1
}

vt_pair_cleanup() {
	if [ -n "$vpid" ] && kill -0 "$vpid" 2>/dev/null; then
		kill "$vpid" 2>/dev/null || true
		wait "$vpid" 2>/dev/null || true
	fi
	[ "${keep:-0}" = 1 ] || rm -rf "$scratch"
}

vt_pair_scratch() {
	scratch=$(mktemp -d "$build/$1.XXXXXX")
	vpid=""
	trap vt_pair_cleanup EXIT
	chmod 700 "$scratch"
	od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$scratch/token"
}

vt_pair_run() {
	vmrc=0
	"$ROOT/scripts/softroce-vm.sh" pair "$@" &
	vpid=$!
	wait "$vpid" || vmrc=$?
	vpid=""
}
