/* SPDX-License-Identifier: MIT */
/*
 * The staleness rule and its waits (ssp/, docs/runtime.md "SSP"): above
 * table/, below worker/.  The modes and the largest slack are core/mode.h.
 */
#ifndef FLEXRR_RUNTIME_SSP_H
#define FLEXRR_RUNTIME_SSP_H

#include <stdint.h>

#include "core.h"

/* Who waits: a worker, and what it does at every turn of a wait. */
struct frr_ssp_waiter {
	int w;		  /* its worker id (messages) */
	int helped_clock; /* its last clock of which helpers ran a part */
	/* one turn (rr serves help: a helpee may wait on us): 0 to wait
	 * on, < 0 the job's error; NULL: nothing to do */
	int (*turn)(void *arg, int c);
	void *arg;
};

/* Fetches in clock must see clocks <= this complete (async: INT64_MIN). */
int64_t frr_rt_read_bound(const struct frr_rt *rt, int clock);
/* Before clock c: the rows (and the app's globals) it may read. */
int frr_rt_ssp_wait(struct frr_rt *rt, const struct frr_ssp_waiter *wt, int c);
/* Before clock c's batch leaves: clock c - s - 1 evaluated here. */
int frr_rt_wait_eval(struct frr_rt *rt, const struct frr_ssp_waiter *wt, int c);

#endif /* FLEXRR_RUNTIME_SSP_H */
