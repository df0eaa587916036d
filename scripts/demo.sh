#!/usr/bin/env bash
# The README's main job: install what is missing, build, run `flexrr demo`.
#   scripts/demo.sh [flexrr demo options]
# (--help here answers at once: no install, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
-h | --help)
	sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
	if [ -x build/bin/flexrr ]; then
		echo
		build/bin/flexrr demo --help
	else
		echo "'build/bin/flexrr demo --help' lists the demo's options once it is built."
	fi
	exit 0
	;;
esac
scripts/setup.sh
exec build/bin/flexrr demo "$@"
