/* SPDX-License-Identifier: MIT */
/* Criterion's redirect.h for the TSan runner: cr_redirect_stderr and
 * cr_get_redirected_stderr live in criterion.h. */
#ifndef FLEXRR_TSAN_CRITERION_REDIRECT_H
#define FLEXRR_TSAN_CRITERION_REDIRECT_H
#include "criterion.h"
#endif
