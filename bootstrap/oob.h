/* SPDX-License-Identifier: MIT */
/*
 * How much one backend collective carries: oob.c cuts larger ones into
 * rounds of at most this (every rank's chunk together), and local.c's relay
 * takes frames at least this large.  Private to bootstrap/.
 */
#ifndef FLEXRR_BOOTSTRAP_OOB_H
#define FLEXRR_BOOTSTRAP_OOB_H

#define FRR_OOB_ROUND_MAX (48u << 20)

#endif /* FLEXRR_BOOTSTRAP_OOB_H */
