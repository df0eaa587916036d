/* SPDX-License-Identifier: MIT */
/*
 * A world for the RapidReassignment engine (runtime/rr_proto.c) in which
 * every interleaving can be forced: W workers, each a coroutine running the
 * real engine under a driver that mirrors the runtime's worker loop
 * (runtime/rt_worker.c: clock_begin, SSP wait with idle, items with progress
 * words and progress checks, own_list_done, the wait for evaluation, the
 * final word, clock_end, worker_exit).  Only one worker runs at a time; it
 * gives control back at every call into the env that touches shared state
 * (recv, progress, publish, run_range, state_push, and the driver's item
 * and SSP steps).  Messages travel through per-pair FIFO channels, each a
 * thread of its own whose steps deliver them, so delivery order is a
 * scheduling choice too.  Time is frozen: the engine's deadlines never
 * expire, a wait that finds nothing to do blocks until something it read
 * changes, and a state where nobody can move is a deadlock, found by the
 * scheduler, not by a timeout.
 *
 * The world is an rrc_sys (explore.h): rrc_explore enumerates its
 * interleavings, rrc_run_policy runs one chosen schedule.  At the end of a
 * run it checks every item done exactly once per clock, every worker through
 * all its clocks, SSP, item state, no message or task left, and that no
 * worker ever waited while it held help it was allowed to start.
 */
#ifndef FLEXRR_TESTS_RRCHECK_WORLD_H
#define FLEXRR_TESTS_RRCHECK_WORLD_H

#include <stdint.h>

#include "explore.h"
#include "rr_proto.h"

#define RRW_MAXW 4
#define RRW_MAXN 64
#define RRW_MAXC 3

struct rrw_cfg {
	int P, T;	      /* W = P * T workers */
	int group;	      /* helpers per worker */
	int clocks;	      /* <= RRW_MAXC */
	int slack;	      /* SSP */
	uint64_t n[RRW_MAXW]; /* items per worker, <= RRW_MAXN */
	double threshold, min_share;
	int max_helpers;   /* offers per clock, 0 = group */
	int max_unapplied; /* help capacity (rr_config), 0 = none */
	int eval;	   /* 1: model the runtime's wait for evaluation */
	/* 0: a message is visible to its receiver as soon as it is sent
	 * (the send is a step); 1: it travels through a FIFO channel per
	 * pair whose deliveries are steps of their own, so a receiver may
	 * see the sender's later progress words before the message */
	int channels;
	/* 1: do not fail a run where a worker waits while it holds help it
	 * may start (forced schedules that want to show the deadlock) */
	int allow_idle_help;
	/* checks of the checker: break the world on purpose (RRW_MUT_*) */
	int mutate;
	/* forced schedules: an extra engine hook; it may block its worker
	 * with rrw_wait_until */
	rr_test_hook_fn hook;
	void *hook_arg;
};

enum rrw_mutation {
	RRW_MUT_NONE = 0,
	RRW_MUT_LOSE_CANCELLED, /* the first Cancelled is lost */
	RRW_MUT_HELP_TWICE,	/* a helper runs its range's first item twice */
};

/* Where a worker's driver is. */
enum rrw_phase {
	RRW_BEGIN = 0, /* clock_begin hook */
	RRW_SSP,       /* waiting for SSP (idle) */
	RRW_ITEMS,     /* own items, progress checks */
	RRW_OWN_DONE,  /* inside own_list_done */
	RRW_EVAL,      /* waiting for the evaluation (idle) */
	RRW_END,       /* final word, clock end */
	RRW_EXIT,      /* worker_exit */
	RRW_FINISHED,
	RRW_NPHASES,
};
extern const char *const rrw_phase_names[RRW_NPHASES];

/* What a policy may look at. */
struct rrw_view {
	enum rrw_phase phase;
	int clock;
	struct frr_rr_list list;
	const struct rr_worker *rw;
	int items_done;	 /* own items processed, all clocks */
	int at_item;	 /* its next step is one of its own items */
	int dothis_sent; /* DoThis sent, all clocks */
	int begun_sent;	 /* BegunHelping sent */
	int cancel_sent; /* CancelHelp sent */
	int blocked;	 /* napping or held by rrw_wait_until */
};

/* Protocol paths an exploration must take (struct rrw_cover.path). */
enum rrw_path {
	RRW_P_OFFER = 0,
	RRW_P_ACCEPTED,
	RRW_P_CANCELLED,
	RRW_P_CROSSING,	      /* CancelHelp crossed by BegunHelping */
	RRW_P_RECLAIM_EXTEND, /* a cancelled range back on the list */
	RRW_P_RECLAIM_RUN,    /* ... run as a range of its own */
	RRW_P_HELP_AHEAD,     /* help by a worker in a later clock */
	RRW_P_HELP_AT_EXIT,   /* help after the helper's last clock */
	RRW_P_HELP_IN_CANCEL_WAIT,
	RRW_P_CROSSED_OFFERS, /* two workers' offers to each other open */
	RRW_P_CAPACITY,	      /* help held back by the help capacity */
	RRW_NPATHS,
};
extern const char *const rrw_path_names[RRW_NPATHS];

/* What an exploration covered: runs that took each path, distinct end
 * states and distinct traces (interleavings up to commuting steps). */
struct rrw_cover {
	long runs, path[RRW_NPATHS], end_states, traces;
};

struct rrw;

int rrw_create(const struct rrw_cfg *cfg, struct rrw **out);
void rrw_destroy(struct rrw *x);
const struct rrc_sys *rrw_sys(struct rrw *x);
int rrw_nworkers(const struct rrw *x); /* threads 0..W-1 are the workers */
const struct rrw_view *rrw_view(const struct rrw *x, int w);
/* Why the last run failed ("" if it did not). */
const char *rrw_failure(const struct rrw *x);
const struct rrw_cover *rrw_cover(const struct rrw *x);
/* 1 if every end state (interleaving up to commuting steps) x reached was
 * also reached by y. */
int rrw_end_states_within(const struct rrw *x, const struct rrw *y);
int rrw_traces_within(const struct rrw *x, const struct rrw *y);

/* Debugging: print every step; the trace hash of the last run. */
void rrw_set_verbose(struct rrw *x, int on);
uint64_t rrw_last_trace(const struct rrw *x);
int rrw_has_trace(const struct rrw *x, uint64_t h);

/* In a hook of worker w (forced schedules only): block w until pred(arg). */
void rrw_wait_until(struct rrw *x, int w, int (*pred)(void *arg), void *arg);

#endif /* FLEXRR_TESTS_RRCHECK_WORLD_H */
