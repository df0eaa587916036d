#!/usr/bin/env bash
# MLR on Fashion-MNIST: flexrr's mlr app vs scikit-learn's LogisticRegression,
# same machine, same data (60k train / full 10k test, pixels / 255), same 2
# cores, side by side in one run.
#   bench/mlr-vs-sklearn.sh [--build DIR] [--procs P] [--sk-iters N]
#                           [--sk-step S] [--clocks C]
# scikit-learn: multinomial lbfgs, C=1, warm-started S iterations at a time
# up to N (default 200 by 10) with BLAS on 2 threads: its time-to-accuracy
# curve in one pass (the warm restarts cost lbfgs a little curvature
# history; the final point is what a plain max_iter=N fit reaches too).
# flexrr: `flexrr run -n P mlr --data fashion-mnist` (P = 2 processes x 1
# thread), defaults of the app.  Target accuracy = scikit-learn's best - 0.005;
# reported: each side's time to the target (training only, data loading
# excluded on both sides) and final accuracy.  Needs python3-sklearn and
# dataset-fashion-mnist (scripts/setup.sh --bench --tests).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build procs=2 sk_iters=200 sk_step=10 clocks=20
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--procs) procs=$2; shift ;;
	--sk-iters) sk_iters=$2; shift ;;
	--sk-step) sk_step=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mlr-vs-sklearn: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
flexrr=$build/bin/flexrr
py=/usr/bin/python3
data=${FLEXRR_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
[ -x "$flexrr" ] || { echo "mlr-vs-sklearn: no $flexrr; build first (cmake --build $build)" >&2; exit 1; }
$py -c 'import sklearn, numpy' 2>/dev/null ||
	{ echo "mlr-vs-sklearn: needs python3-sklearn (scripts/setup.sh --bench)" >&2; exit 1; }
[ -r "$data/train-images-idx3-ubyte.gz" ] ||
	{ echo "mlr-vs-sklearn: no Fashion-MNIST in $data (apt-get install dataset-fashion-mnist)" >&2; exit 1; }

out=$(mktemp -d /tmp/mlr-vs-sklearn.XXXXXX)
trap 'rm -rf "$out"' EXIT

echo "# scikit-learn LogisticRegression (lbfgs, C=1, 2 BLAS threads), $sk_iters iterations by $sk_step"
OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2 $py - "$data" "$sk_iters" "$sk_step" >"$out/sk.txt" <<'PY'
import gzip, sys, time, warnings
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

warnings.filterwarnings("ignore", category=ConvergenceWarning)
d, total, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def images(name):
    with gzip.open(f"{d}/{name}") as f:
        b = f.read()
    return np.frombuffer(b, np.uint8, offset=16).reshape(-1, 784).astype(np.float64) / 255

def labels(name):
    with gzip.open(f"{d}/{name}") as f:
        return np.frombuffer(f.read(), np.uint8, offset=8)

X, y = images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz")
Xt, yt = images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz")
m = LogisticRegression(C=1.0, max_iter=step, warm_start=True)
spent = 0.0
for it in range(step, total + 1, step):
    t = time.perf_counter()
    m.fit(X, y)
    spent += time.perf_counter() - t
    print(it, f"{spent:.3f}", f"{m.score(Xt, yt):.4f}", flush=True)
PY
printf "%-10s %-16s %10s %10s\n" tool point time_s test_acc
while read -r it t acc; do
	printf "%-10s %-16s %10s %10s\n" sklearn "iters=$it" "$t" "$acc"
done <"$out/sk.txt"
sk_best=$(sort -k3 -g "$out/sk.txt" | tail -1 | awk '{print $3}')
sk_final=$(tail -1 "$out/sk.txt" | awk '{print $3}')
target=$(awk -v b="$sk_best" 'BEGIN { printf "%.4f", b - 0.005 }')
sk_tt=$(awk -v t="$target" '$3 >= t { print $2; exit }' "$out/sk.txt")

echo
echo "# flexrr mlr: -n $procs -t 1 --mode bsp, $clocks clocks (same data, app defaults)"
"$flexrr" run -n "$procs" -t 1 --clocks "$clocks" mlr --data fashion-mnist >"$out/fx.out" 2>"$out/fx.err" ||
	{ cat "$out/fx.err" >&2; exit 1; }
printf "%-10s %-16s %10s %10s\n" tool point time_s test_acc
awk '/^flexrr: clock / {
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^objective=/) { split($i, a, "="); acc = a[2] }
		if ($i ~ /^clock_s=/) { split($i, b, "="); t += b[2] }
	}
	printf "%-10s %-16s %10.3f %10.4f\n", "flexrr", "clock=" $3, t, acc
}' "$out/fx.err" | tee "$out/fx.txt"
fx_final=$(tail -1 "$out/fx.txt" | awk '{print $4}')
fx_best=$(sort -k4 -g "$out/fx.txt" | tail -1 | awk '{print $4}')
fx_tt=$(awk -v t="$target" '$4 >= t { print $3; exit }' "$out/fx.txt")

echo
echo "# summary (target = sklearn best $sk_best - 0.005 = $target)"
printf "%-10s %12s %12s %16s\n" tool final_acc best_acc time_to_target_s
printf "%-10s %12s %12s %16s\n" sklearn "$sk_final" "$sk_best" "${sk_tt:-not_reached}"
printf "%-10s %12s %12s %16s\n" flexrr "$fx_final" "$fx_best" "${fx_tt:-not_reached}"
if [ -n "$sk_tt" ] && [ -n "$fx_tt" ]; then
	awk -v s="$sk_tt" -v f="$fx_tt" 'BEGIN { printf "time to target: flexrr %.1fx faster than scikit-learn\n", s / f }'
fi
awk -v s="$sk_best" -v f="$fx_best" 'BEGIN { d = (f - s) * 100; printf "best accuracy: flexrr - sklearn = %+.2f points (goal: >= -0.5)\n", d }'
