/* SPDX-License-Identifier: MIT */
/*
 * Stateless model checking: enumerate the interleavings of a system of
 * threads whose steps are deterministic, by re-running it from its initial
 * state with a forced prefix of choices (depth first).
 *
 * The system says, for each thread, whether it can take a step now and which
 * shared objects that step reads and writes (bitsets over at most 64
 * objects).  Two steps commute unless they are by the same thread or touch
 * one object with at least one write; orders that differ only by commuting
 * steps reach the same state, so only one of them needs running.  The
 * reduction is dynamic partial-order reduction (Flanagan & Godefroid, POPL
 * 2005) with sleep sets; where the thread that should go first is not
 * enabled yet, one "initial" of the reversed sequence is scheduled instead
 * (Abdulla et al., POPL 2014, source sets).  A step may also name an earlier
 * step it causally follows (a message delivery follows its send): that
 * order is happens-before, never a race.
 *
 * The naive modes (sleep sets only, or nothing) do not depend on the race
 * analysis; tests compare the end states they reach with DPOR's.
 */
#ifndef FLEXRR_TESTS_RRCHECK_EXPLORE_H
#define FLEXRR_TESTS_RRCHECK_EXPLORE_H

#include <stdint.h>

#define RRC_MAXT 32	  /* threads */
#define RRC_MAXDEPTH 4096 /* steps in one run */

struct rrc_acc {
	uint64_t rd, wr; /* objects read / written */
};

/* The system explored (rrcheck/world.c implements it for rr). */
struct rrc_sys {
	void *arg;
	int nthreads;
	/* back to the initial state */
	void (*reset)(void *arg);
	/* 1: t can take a step now; 0: blocked or finished */
	int (*enabled)(void *arg, int t);
	/* 1: t is not finished (enabled or blocked) */
	int (*alive)(void *arg, int t);
	/* objects t's next step touches; *cause = index of an earlier step
	 * it causally follows, or -1 */
	struct rrc_acc (*pending)(void *arg, int t, int *cause);
	/* run t's next step, which is step number `index` of this run */
	void (*step)(void *arg, int t, int index);
	/* end of a run (no thread enabled): 0 ok, < 0 a violation that stops
	 * the exploration */
	int (*end)(void *arg);
};

struct rrc_opts {
	long max_runs; /* 0: no limit */
	/* 0: DPOR + sleep sets; 1: sleep sets only (every enabled thread is
	 * a choice at every state: sound whatever the race analysis); 2: no
	 * reduction at all */
	int naive;
	/* called after each completed run with its result and schedule (may
	 * be NULL) */
	void (*on_run)(void *arg, int rc, const uint8_t *sched, int depth);
	void *on_run_arg;
};

struct rrc_stats {
	long runs;	/* runs that reached an end state */
	long redundant; /* runs cut short: every enabled step slept */
	int max_depth;
	int exhausted; /* 1: the whole space was explored */
	double seconds;
	/* the schedule of the last run (the failing one on a violation) */
	int depth;
	uint8_t sched[RRC_MAXDEPTH];
};

/* 0: every run passed; < 0: the rc of sys->end for the failing run (its
 * schedule in st->sched) or -E2BIG (a run longer than RRC_MAXDEPTH),
 * -EPROTO (the system is not deterministic under replay). */
int rrc_explore(const struct rrc_sys *sys, const struct rrc_opts *o,
		struct rrc_stats *st);

/* Every schedule within `delays` delays of round robin (Emmi, Qadeer and
 * Rakamaric, POPL 2011): the running thread goes on until it blocks, then
 * the next enabled one in thread order; a delay skips one enabled thread
 * (a preemption, or another successor when one blocks).  Exhaustive up to
 * that bound; stops after max_runs (0: no limit) with st->exhausted 0. */
int rrc_explore_delays(const struct rrc_sys *sys, int delays, long max_runs,
		       struct rrc_stats *st);

/* Where exhaustive exploration is out of reach: `runs` runs scheduled by
 * PCT (Burckhardt et al., ASPLOS 2010): random thread priorities, the
 * highest enabled thread runs, and at d - 1 random steps the running thread
 * drops below all others; one run finds a bug that needs d ordering
 * constraints with probability >= 1 / (threads * steps^(d-1)).  Returns
 * like rrc_explore (st->exhausted stays 0). */
int rrc_sample(const struct rrc_sys *sys, long runs, int d, uint64_t seed,
	       struct rrc_stats *st);

/* One run that follows sched[0..n) and then always the lowest enabled
 * thread; returns sys->end's rc. */
int rrc_replay(const struct rrc_sys *sys, const uint8_t *sched, int n);

/* One run where pick(arg, enabled mask) chooses each step. */
int rrc_run_policy(const struct rrc_sys *sys,
		   int (*pick)(void *arg, uint32_t enabled), void *arg);

/* "3.0.0.1.4..." of a schedule, for failure messages; returns buf. */
char *rrc_sched_str(const uint8_t *sched, int n, char *buf, int size);

#endif /* FLEXRR_TESTS_RRCHECK_EXPLORE_H */
