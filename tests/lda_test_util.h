/* SPDX-License-Identifier: MIT */
/* Shared by tests/test_lda*.c: the KJV corpus in the build tree and the
 * "rises within noise" check. */
#ifndef FLEXRR_TESTS_LDA_TEST_UTIL_H
#define FLEXRR_TESTS_LDA_TEST_UTIL_H

#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* Fewer clocks and sweeps: FLEXRR_TEST_QUICK (soft-RoCE VM) or under a
 * sanitizer (FLEXRR_TEST_SANITIZER), same assertions. */
static inline int frr_lda_quick(void)
{
	return frr_test_quick() || frr_test_sanitizer();
}

/* Path of build/data/kjv-chapters.txt, made by scripts/make-kjv-corpus.sh
 * on first use. */
static inline const char *lda_test_kjv(void)
{
	static char path[1024];
	char bin[1024], cmd[3072];

	snprintf(bin, sizeof(bin), "%s", FLEXRR_BIN);
	/* FLEXRR_BIN = BUILD/bin/flexrr */
	snprintf(path, sizeof(path), "%s/data/kjv-chapters.txt",
		 dirname(dirname(bin)));
	if (access(path, R_OK)) {
		snprintf(cmd, sizeof(cmd),
			 "bash %s/scripts/make-kjv-corpus.sh %s", FLEXRR_SRC,
			 path);
		cr_assert_eq(system(cmd), 0,
			     "scripts/make-kjv-corpus.sh failed: install "
			     "bible-kjv and bible-kjv-text");
	}
	return path;
}

/* The log-likelihood per token "rises monotonically within noise": after a
 * burn-in of 2 sweeps no value is more than 0.01 nats below the best so far
 * (sampling noise on ~10^5 tokens is ~10^-3), and the last value is above
 * the first by at least 0.05 nats. */
static inline void lda_assert_rising(const double *ll, int n)
{
	double best = ll[2 < n ? 2 : 0];

	for (int i = 3; i < n; i++) {
		cr_assert_geq(ll[i], best - 0.01,
			      "loglik/token fell at sweep %d: %.4f after "
			      "best %.4f",
			      i, ll[i], best);
		if (ll[i] > best)
			best = ll[i];
	}
	cr_assert_gt(ll[n - 1], ll[0] + 0.05, "no progress: %.4f -> %.4f",
		     ll[0], ll[n - 1]);
}

#endif
