# SPDX-License-Identifier: MIT
# Sourced by the bench scripts: one copy of their option parsing, binary
# check and KJV corpus set-up.  Not a script of its own.

# bench_parse NAME "--opt=var ..." ARGS...: each --opt VALUE sets the shell
# variable var; -h/--help prints the script's header comment (the comment
# lines after the #! line); an unknown option or a missing value is a usage
# error (exit 2), said once, naming NAME.
bench_parse() {
	local name=$1 spec=$2 p found
	shift 2
	while [ $# -gt 0 ]; do
		bench_help_if "$1"
		found=0
		for p in $spec; do
			[ "$1" = "${p%%=*}" ] || continue
			[ $# -ge 2 ] || { echo "$name: $1 wants a value (see --help)" >&2; exit 2; }
			printf -v "${p#*=}" '%s' "$2"
			found=1
			shift
			break
		done
		[ $found = 1 ] || { echo "$name: unknown option '$1' (see --help)" >&2; exit 2; }
		shift
	done
}

# bench_help_if ARG: -h/--help prints the script's header comment (the
# comment lines after the #! line) and exits; for scripts whose arguments
# are positional, called with their first.
bench_help_if() {
	case ${1:-} in
	-h | --help)
		awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
		exit 0
		;;
	esac
}

# bench_need_bin NAME BIN: BIN is an executable, or say how to get one.
bench_need_bin() {
	[ -x "$2" ] || { echo "$1: no $2: build first (scripts/setup.sh)" >&2; exit 1; }
}

# bench_kjv DIR: when the apps ($apps) include lda and no --kjv was given,
# make the KJV corpus in DIR and point $kjv at it.
bench_kjv() {
	if [ -z "${kjv:-}" ] && [[ " $apps " == *" lda "* ]]; then
		kjv=$1/kjv.txt
		scripts/make-kjv-corpus.sh "$kjv" >/dev/null
	fi
}

# bench_in_vm TIMEOUT BIN ARGS...: outside the soft-RoCE VM (no RXE_DEV),
# run this script again inside it (scripts/softroce-vm.sh: this tree shared
# at the same path, BIN's libraries packed) with ARGS, and exit with its
# status; inside it, return.
bench_in_vm() {
	local timeout=$1 bin=$2 cmd
	shift 2
	[ -z "${RXE_DEV:-}" ] || return 0
	printf -v cmd '%q ' bash "bench/$(basename "$0")" "$@"
	exec scripts/softroce-vm.sh run --timeout "$timeout" --share "$PWD" \
		--libs-of "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" -- "$cmd"
}

# bench_median: the median of the numbers on stdin, one a line (the mean
# of the middle two for an even count).
bench_median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
