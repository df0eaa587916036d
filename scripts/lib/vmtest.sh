# shellcheck shell=bash
# Sourced by scripts/test-verbs.sh and scripts/test-2vm.sh (the stages that
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
