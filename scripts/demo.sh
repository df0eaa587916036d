#!/usr/bin/env bash
# The README's main job: install what is missing, build, run `flexrr demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/bin/flexrr demo "$@"
