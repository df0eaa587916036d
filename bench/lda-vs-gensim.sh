#!/usr/bin/env bash
# LDA on the KJV Bible by chapter: flexrr's lda app (collapsed Gibbs) vs
# gensim's LdaMulticore (online variational Bayes), same machine, same
# corpus, same 2 cores, same priors, compared at equal wall time.
#   bench/lda-vs-gensim.sh [--build DIR] [--topics K] [--clocks C]
#                          [--max-passes N]
# The corpus: scripts/make-kjv-corpus.sh, tokenized once by the lda app
# (--max-doc-frac 0.25, built-in stop words, --min-count 5) and written with
# --write-uci; gensim reads exactly those bags of words.
# Comparable likelihood: for both models the same quantity on the same
# training tokens, the mean over tokens of log sum_k theta_dk phi_kw, with
# phi the topic-word distributions (flexrr: smoothed counts (n_wk + beta) /
# (n_k + V beta); gensim: get_topics()) and theta the document's topic
# proportions (flexrr: (n_dk + alpha) / (n_d + K alpha) from the sampled
# assignments; gensim: get_document_topics(minimum_probability=0), i.e. its
# variational posterior mean).  flexrr prints it per clock
# (loglik_per_token); for gensim this script computes it after each pass,
# outside the timed region.  Priors: alpha = 0.1, beta/eta = 0.01.
# flexrr: -n 2 x 1 thread; gensim: LdaMulticore(workers=1) = one worker
# process + the master (2 cores).  Needs python3-gensim, bible-kjv.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build topics=20 clocks=200 max_passes=60
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--topics) topics=$2; shift ;;
	--clocks) clocks=$2; shift ;;
	--max-passes) max_passes=$2; shift ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "lda-vs-gensim: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
flexrr=$build/bin/flexrr
py=/usr/bin/python3
[ -x "$flexrr" ] || { echo "lda-vs-gensim: no $flexrr; build first (cmake --build $build)" >&2; exit 1; }
$py -c 'import gensim, numpy' 2>/dev/null ||
	{ echo "lda-vs-gensim: needs python3-gensim (scripts/setup.sh --bench)" >&2; exit 1; }

kjv=$build/data/kjv-chapters.txt
[ -r "$kjv" ] || scripts/make-kjv-corpus.sh "$kjv"
out=$(mktemp -d /tmp/lda-vs-gensim.XXXXXX)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/uci"

echo "# flexrr lda: -n 2 -t 1 --mode bsp, K=$topics, $clocks clocks"
"$flexrr" run -n 2 -t 1 --clocks "$clocks" lda --text "$kjv" --max-doc-frac 0.25 \
	--topics "$topics" --alpha 0.1 --beta 0.01 --write-uci "$out/uci" \
	--top-words 8 >"$out/fx.out" 2>"$out/fx.err" || { cat "$out/fx.err" >&2; exit 1; }
printf "%-8s %-10s %10s %18s\n" tool point time_s loglik_per_token
awk '/^flexrr: clock / {
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^objective=/) { split($i, a, "="); ll = a[2] }
		if ($i ~ /^clock_s=/) { split($i, b, "="); t += b[2] }
	}
	printf "%-8s %-10s %10.3f %18.4f\n", "flexrr", "clock=" $3, t, ll
}' "$out/fx.err" | tee "$out/fx.txt"
budget=$(tail -1 "$out/fx.txt" | awk '{print $3}')
fx_ll=$(tail -1 "$out/fx.txt" | awk '{print $4}')

echo
echo "# gensim LdaMulticore(workers=1, chunksize=256, one pass per update), K=$topics, until $budget s of training (or $max_passes passes)"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $py - "$out/uci" "$topics" "$budget" "$max_passes" >"$out/gs.txt" 2>"$out/gs.err" <<'PY' || { cat "$out/gs.err" >&2; exit 1; }
import logging, sys, time
import numpy as np
from gensim.models import LdaMulticore

d, K, budget, max_passes = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
with open(f"{d}/docword.txt") as f:
    D, W, _ = (int(f.readline()) for _ in range(3))
    docs = [[] for _ in range(D)]
    for line in f:
        a, b, c = map(int, line.split())
        docs[a - 1].append((b - 1, c))
id2word = {i: w.strip() for i, w in enumerate(open(f"{d}/vocab.txt"))}
ntok = sum(c for doc in docs for _, c in doc)

def loglik(m):
    phi = m.get_topics()  # K x V, rows sum to 1
    ll = 0.0
    for doc in docs:
        if not doc:
            continue
        theta = np.zeros(K)
        for k, p in m.get_document_topics(doc, minimum_probability=0.0):
            theta[k] = p
        ids = np.array([w for w, _ in doc])
        cnt = np.array([c for _, c in doc], dtype=float)
        ll += float(cnt @ np.log(theta @ phi[:, ids]))
    return ll / ntok

m = LdaMulticore(num_topics=K, id2word=id2word, workers=1, alpha=0.1, eta=0.01,
                 passes=1, chunksize=256, random_state=1)
spent, p = 0.0, 0
while p < max_passes:
    t = time.perf_counter()
    m.update(docs)
    spent += time.perf_counter() - t
    p += 1
    print(p, f"{spent:.3f}", f"{loglik(m):.4f}", flush=True)
    if spent >= budget:
        break
for k in range(K):
    print("topic", k, " ".join(w for w, _ in m.show_topic(k, topn=8)), file=sys.stderr)
PY
printf "%-8s %-10s %10s %18s\n" tool point time_s loglik_per_token
awk '{ printf "%-8s %-10s %10.3f %18.4f\n", "gensim", "pass=" $1, $2, $3 }' "$out/gs.txt"
gs_eq=$(awk -v b="$budget" '$2 <= b { ll = $3 } END { print ll }' "$out/gs.txt")
gs_last=$(tail -1 "$out/gs.txt" | awk '{print $3 " (" $2 " s)"}')

echo
echo "# summary at equal wall time ($budget s of training)"
printf "%-8s %18s\n" tool loglik_per_token
printf "%-8s %18s\n" flexrr "$fx_ll"
printf "%-8s %18s\n" gensim "${gs_eq:-no_pass_finished}"
echo "gensim after its last pass: $gs_last"
[ -n "$gs_eq" ] && awk -v f="$fx_ll" -v g="$gs_eq" 'BEGIN {
	printf "flexrr - gensim = %+.4f nats/token (per-token likelihood ratio %.2fx)\n", f - g, exp(f - g) }'
echo
echo "# top words, flexrr"
grep '^topic' "$out/fx.out" | head -"$topics"
echo "# top words, gensim"
grep '^topic' "$out/gs.err" | head -"$topics"
