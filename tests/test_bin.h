/* SPDX-License-Identifier: MIT */
/*
 * Included in every test (-include): the flexrr binary that tests exec.
 * FLEXRR_TEST_BIN overrides the build tree's own, so the CI's TSan stage can
 * run these (uninstrumented) suites against a TSan-instrumented flexrr: the
 * Criterion runner itself cannot start under TSan (Snaipe/Criterion#274).
 */
#ifndef FLEXRR_TEST_BIN_H
#define FLEXRR_TEST_BIN_H

#include <stdlib.h>

static inline const char *frr_test_flexrr_bin(void)
{
	const char *e = getenv("FLEXRR_TEST_BIN");

	return e && *e ? e : FLEXRR_BIN_DEFAULT;
}

#endif /* FLEXRR_TEST_BIN_H */
