/* SPDX-License-Identifier: MIT */
/*
 * The staleness bound and the consistency modes, on the core floor
 * (docs/architecture.md "Inside runtime/"): the runtime's parameters
 * (core.h), the run options (launch/) and the simulator (sim/, its own
 * target, which sees no struct frr_rt) check a slack against the bound and
 * name their modes with these words.  Plain constants: no other include.
 * The simulator's enum (flexrr/sim.h, public) has its own values: it has
 * no async.
 */
#ifndef FLEXRR_RUNTIME_CORE_MODE_H
#define FLEXRR_RUNTIME_CORE_MODE_H

#define FRR_RT_MAX_SLACK 24 /* the largest slack a job or simulation takes */

#define FRR_MODE_NAME_BSP "bsp"
#define FRR_MODE_NAME_SSP "ssp"
#define FRR_MODE_NAME_ASYNC "async"
#define FRR_MODE_NAME_FLEXRR "flexrr"
#define FRR_MODE_NAME_RR "rr"
#define FRR_MODE_NAME_BACKUP "backup"
#define FRR_MODE_NAME_LB_BSP "lb-bsp"

/* --mode: the runtime's, not the app's (apps see frr_job_info.slack). */
enum frr_mode {
	FRR_MODE_BSP = 0,    /* slack 0 */
	FRR_MODE_SSP = 1,    /* slack s */
	FRR_MODE_ASYNC = 2,  /* no bound checked (a window of 16 clocks) */
	FRR_MODE_FLEXRR = 3, /* SSP + RapidReassignment */
	FRR_MODE_RR = 4,     /* BSP + RapidReassignment */
	/* BSP with backup workers: a clock ends when all but the b slowest
	 * have finished it, and those drop the rest of their items at their
	 * next chunk (Chen et al., 2016; the simulator's "backup") */
	FRR_MODE_BACKUP = 5,
	/* BSP whose lists are balanced up front: at each clock's start the
	 * faster workers of a slow one's helper group take planned tails of
	 * its list, sized from every worker's per-item time of the last
	 * --lb-history clocks (LB-BSP, Chen et al., SoCC 2020; rr/lb.c) */
	FRR_MODE_LB_BSP = 6,
};
#define FRR_NMODES 7
#define FRR_LB_HISTORY_DEFAULT 3 /* --lb-history (runtime and simulator) */
#define FRR_LB_HISTORY_MAX 64

/* Modes whose slack is 0 (every read holds exactly the clocks before it). */
static inline int frr_mode_exact(int m)
{
	return m == FRR_MODE_BSP || m == FRR_MODE_RR || m == FRR_MODE_BACKUP ||
	       m == FRR_MODE_LB_BSP;
}

/* Backup workers when none are given: 5% of the w workers, at least 1
 * (the runtime's --mode backup and the simulator's backup). */
static inline int frr_backups_default(int w)
{
	return (w + 19) / 20;
}

/* --mode's word for m ("?" for none of them). */
static inline const char *frr_mode_name(int m)
{
	static const char *const n[FRR_NMODES] = {
		FRR_MODE_NAME_BSP,    FRR_MODE_NAME_SSP, FRR_MODE_NAME_ASYNC,
		FRR_MODE_NAME_FLEXRR, FRR_MODE_NAME_RR,	 FRR_MODE_NAME_BACKUP,
		FRR_MODE_NAME_LB_BSP
	};

	return m >= 0 && m < FRR_NMODES ? n[m] : "?";
}

#endif /* FLEXRR_RUNTIME_CORE_MODE_H */
