/* SPDX-License-Identifier: MIT */
/*
 * RapidReassignment protocol engine (docs/rapidreassignment.md).
 *
 * Pure protocol: helper groups, offers, the cancel race, waits with
 * timeouts.  It talks to the world only through struct rr_env_ops, so the
 * same code runs on the runtime (rr.c binds the env to frr_rt_* calls) and on
 * an in-process fake in the tests.
 *
 * Threading: one struct rr_worker per worker; every function taking one is
 * called on the thread running that worker and touches nothing shared except
 * through env (mailboxes, progress words, run_range) and the rank-wide
 * per-clock counters (atomic adds).
 */
#ifndef FLEXRR_RUNTIME_RR_PROTO_H
#define FLEXRR_RUNTIME_RR_PROTO_H

#include <stdatomic.h>
#include <stdint.h>

#include "rr_hooks.h"

#define RR_MAX_GROUP 16
/* offers per clock: a helper whose earlier range completed may get another */
#define RR_MAX_OFFERS (2 * RR_MAX_GROUP)
#define RR_RAN_RING 64

/* Message types (struct frr_rr_msg.type); w[0] = offer id. */
enum rr_msg_type {
	RR_MSG_DO_THIS = 1, /* helpee -> helper: do [a, b) of clock */
	RR_MSG_BEGUN,	    /* helper -> helpee: accepted, running */
	RR_MSG_COMPLETED,   /* helper -> helpee: done, updates flushed */
	RR_MSG_CANCEL,	    /* helpee -> helper: I reached a */
	RR_MSG_CANCELLED,   /* helper -> helpee: not started, never will */
	RR_MSG_NTYPES,
};
extern const char *const rr_msg_names[RR_MSG_NTYPES];

/* Helpee-side states of one offer. */
enum rr_offer_state {
	RR_OFFER_SENT = 0,    /* DoThis sent, no answer yet */
	RR_OFFER_CANCEL_SENT, /* we reached a and sent CancelHelp */
	RR_OFFER_ACCEPTED,    /* BegunHelping received */
	RR_OFFER_COMPLETED,   /* HelpCompleted received */
	RR_OFFER_CANCELLED,   /* Cancelled received: ours to do */
	RR_OFFER_RECLAIMED,   /* cancelled and handed back to our list */
	RR_OFFER_NSTATES,
};
extern const char *const rr_offer_state_names[RR_OFFER_NSTATES];

/* States of the engine inside one hook call (rxe_comp style: one function
 * per state, each returns the next). */
enum rr_state {
	RR_ST_CHECK = 0,   /* progress check: read the mailbox */
	RR_ST_HELP_AHEAD,  /* run queued help of an older clock at once */
	RR_ST_OFFER,	   /* maybe offer the tail of our list */
	RR_ST_RESUME,	   /* exit: back to our own items */
	RR_ST_REACHED_END, /* own list done: cancel unanswered offers */
	RR_ST_CANCEL_WAIT, /* wait for Cancelled / BegunHelping */
	RR_ST_RECLAIM,	   /* cancelled ranges are ours again */
	RR_ST_SERVE,	   /* help others (oldest clock first) */
	RR_ST_HELP_WAIT,   /* wait for HelpCompleted of accepted offers */
	RR_ST_DONE,	   /* exit: clock's work complete */
	RR_ST_ERROR,	   /* exit: fail the job */
	RR_NSTATES,
};
extern const char *const rr_state_names[RR_NSTATES];

struct rr_env_ops {
	int (*send)(void *env, int from, int to, const struct frr_rr_msg *m);
	int (*recv)(void *env, int w, struct frr_rr_msg *m, int timeout_ms);
	/* in items (not in units of 2^shift) */
	struct frr_progress (*progress)(void *env, int v);
	int (*publish)(void *env, int w, int clock,
		       const struct frr_rr_list *list);
	/* run [a, b) of owner's clock on helper's thread, updates attributed
	 * to (owner, clock) and flushed before it returns */
	int (*run_range)(void *env, int helper, int owner, int clock,
			 uint64_t a, uint64_t b);
	/* make helper's copy of owner's item states [a, b) current */
	int (*state_push)(void *env, int owner, int helper, uint64_t a,
			  uint64_t b);
	uint64_t (*nitems)(void *env, int v);
	/* Optional (NULL, or NULL returned: every item costs the same):
	 * partition v's item costs as a prefix sum, nitems + 1 entries
	 * (entry i: the cost of items [0, i)), when this rank holds them.
	 * The policy then splits and compares by cost. */
	const double *(*costs)(void *env, int v);
	/* Optional (NULL: the monotonic clock and nanosleep).  Every deadline
	 * of the engine reads now(); every wait that found nothing to do calls
	 * nap() before it polls again.  A deterministic scheduler (tests/
	 * rrcheck) or a simulator in virtual time provides both. */
	uint64_t (*now)(void *env); /* ns */
	void (*nap)(void *env, int w, long us);
};

/* Test hook points (tests force the cancel race both ways). */
enum rr_hook_point {
	RR_HOOK_TASK_QUEUED = 0, /* helper queued a DoThis (before serving) */
	RR_HOOK_BEGUN_SENT,	 /* helper sent BegunHelping */
	RR_HOOK_BEFORE_CANCEL,	 /* helpee about to send CancelHelp */
	RR_HOOK_CANCEL_SENT,	 /* helpee sent CancelHelp */
	RR_HOOK_CANCEL_ANSWERED, /* helper answered Cancelled */
	RR_HOOK_RUN_RANGE,	 /* helper about to run a range */
};
typedef void (*rr_test_hook_fn)(void *arg, int worker, enum rr_hook_point pt,
				const struct frr_rr_msg *m);

struct rr_config {
	int P, T, W;
	int group_size;
	double threshold;
	double min_share;
	int max_helpers;
	int timeout_ms; /* any single wait; a dead helper is an error */
	int slack;	/* clocks <= ours - slack - 1 are applied */
	/* help batches of not-yet-applied clocks a worker may have in the
	 * runtime at once (rr_hooks.h: FRR_RT_HELP_SLOTS); 0 = no limit */
	int max_unapplied;
	int remote_ok; /* 0: offer only to same-rank helpers */
	/* --rr-link-weight K: an offer needs threshold plus K times the
	 * share of the worker's last clock it did not compute (rr_weigh) */
	double link_weight;
	rr_test_hook_fn hook; /* tests only */
	void *hook_arg;
};

/* Rank-wide per-clock counters (slot clock % RR_CLOCK_RING). */
#define RR_CLOCK_RING 64
enum rr_counter {
	RR_C_OFFERS = 0,
	RR_C_ACCEPTED,
	RR_C_CANCELLED,
	RR_C_ITEMS, /* items reassigned: done by a helper */
	RR_C_NCOUNTERS,
};
extern const char *const rr_counter_names[RR_C_NCOUNTERS];
struct rr_clock_counters {
	_Atomic int clock;
	_Atomic uint64_t c[RR_C_NCOUNTERS];
};

struct rr_offer {
	int helper;
	enum rr_offer_state state;
	uint64_t a, b;
	uint64_t id;
};

struct rr_task {
	int helpee;
	int clock;
	uint64_t a, b;
	uint64_t id;
	uint64_t seq; /* arrival order */
};

struct rr_worker {
	const struct rr_config *cfg;
	const struct rr_env_ops *env_ops;
	void *env;
	struct rr_clock_counters *counters; /* RR_CLOCK_RING, may be NULL */
	int w, clock;
	int nhelpers, helpers[RR_MAX_GROUP];
	int nhelpees, *helpees;	 /* workers whose group holds w */
	uint64_t remote_refused; /* bitmap over helpers[]: state push refused */
	/* helpee side: this clock */
	int noffers, k_done;
	struct rr_offer offers[RR_MAX_OFFERS];
	uint64_t next_id;
	/* helper side: queued DoThis, at most one per helpee per clock */
	int ntasks, cap_tasks;
	struct rr_task *tasks;
	uint64_t task_seq;
	int own_done; /* own items of this clock finished */
	/* added to the threshold of an offer (rr_weigh) */
	double thr_extra;
	/* clocks of the last ranges we ran with run_range (capacity) */
	int ran_clock[RR_RAN_RING];
	unsigned nran;
	/* job totals (for the summary) */
	uint64_t tot[RR_C_NCOUNTERS];
	uint64_t helped_ranges, helped_items;
	/* per-hook observers (rr.c: trace and straggler accounting);
	 * on_help also sees a cancelled range the worker ran itself
	 * (owner == its own id) */
	void (*on_help)(void *arg, int owner, int clock, uint64_t a, uint64_t b,
			uint64_t t0, uint64_t t1);
	void (*on_event)(void *arg, int kind, int peer, int clock, uint64_t a,
			 uint64_t b);
	void (*on_count)(void *arg, int clock, int counter, uint64_t v);
	void *obs_arg;
	enum rr_state state; /* of the last hook's machine (diagnostics) */
	int err;
};

/* Helper group of w: g workers, deterministic in (P, T, g), other processes
 * first.  Returns the count (<= RR_MAX_GROUP). */
int rr_helper_group(int P, int T, int g, int w, int *out);
/* Every worker's group (lb-bsp's plan, in the runtime and the simulator):
 * worker v's in grp[v * g ..], its size ng[v]. */
void rr_helper_groups(int P, int T, int g, int *grp, int *ng);

/* rr.c: the engine's configuration for a job of P x T workers from its
 * --rr-* options (defaults for those <= 0), with the runtime's help-batch
 * slots; real jobs and the simulator (runtime/sim) both build it here. */
struct rr_config rr_config_from(const struct frr_rr_opts *opts, int P, int T,
				int slack, int timeout_ms);

int rr_worker_init(struct rr_worker *rw, const struct rr_config *cfg,
		   const struct rr_env_ops *ops, void *env, int w,
		   struct rr_clock_counters *counters);
void rr_worker_fini(struct rr_worker *rw);

/* The hooks (same contract as struct frr_rr_ops). */
int rr_clock_begin(struct rr_worker *rw, int clock);
int rr_idle(struct rr_worker *rw, int clock);
int rr_progress_check(struct rr_worker *rw, int clock,
		      struct frr_rr_list *list);
int rr_own_list_done(struct rr_worker *rw, int clock, struct frr_rr_list *list);
int rr_clock_end(struct rr_worker *rw, int clock);
/* After a clock that took clock_s, idle_s of it waiting (SSP, evaluation)
 * and flushing: the next clock's offers need link_weight * idle_s /
 * clock_s more lead.  A worker the link or its waits delayed is not slow
 * at its items; handing its tail to a helper adds one more batch on the
 * link that set the pace (docs/rapidreassignment.md "A link-aware offer"). */
void rr_weigh(struct rr_worker *rw, double idle_s, double clock_s);
/* After the worker's last clock: keep answering until every helpee has
 * finished too (their progress shows clock >= last_clock + 1). */
int rr_worker_exit(struct rr_worker *rw, int last_clock);

/* Validate and act on one message m taken from w's mailbox (a copy: the
 * runtime copies each message out of the peer-written ring once and sets
 * from/to itself).  0, or -EPROTO with an error naming the sender. */
int rr_msg_handle(struct rr_worker *rw, const struct frr_rr_msg *m);

/* Index in rw->tasks of the queued task the worker would start next among
 * clocks <= max_clock, or -1 (none, or the help capacity is used up).
 * For checks: a worker must not wait while this finds one it may run. */
int rr_ready_task(const struct rr_worker *rw, int max_clock);

#endif /* FLEXRR_RUNTIME_RR_PROTO_H */
