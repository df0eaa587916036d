/* SPDX-License-Identifier: MIT */
/*
 * Internal to the RapidReassignment engine (rr_proto.c the state machine,
 * rr_policy.c helper groups and offering, rr_serve.c the helper side): the
 * small helpers they share.  Not for rr.c or the simulator: they use
 * rr_proto.h.
 */
#ifndef FLEXRR_RUNTIME_RR_PROTO_INT_H
#define FLEXRR_RUNTIME_RR_PROTO_INT_H

#include <time.h>

#include "rr_proto.h"
#include "trace/trace.h"

static inline void rr_hook(struct rr_worker *rw, enum rr_hook_point pt,
			   const struct frr_rr_msg *m)
{
	if (rw->cfg->hook)
		rw->cfg->hook(rw->cfg->hook_arg, rw->w, pt, m);
}

static inline void rr_event(struct rr_worker *rw, int kind, int peer, int clock,
			    uint64_t a, uint64_t b)
{
	if (rw->on_event)
		rw->on_event(rw->obs_arg, kind, peer, clock, a, b);
}

static inline void rr_count(struct rr_worker *rw, int clock, enum rr_counter c,
			    uint64_t v)
{
	struct rr_clock_counters *cc;

	rw->tot[c] += v;
	if (rw->on_count)
		rw->on_count(rw->obs_arg, clock, (int)c, v);
	if (!rw->counters || clock < 0)
		return;
	cc = &rw->counters[clock % RR_CLOCK_RING];
	/* the ring slot is reused RR_CLOCK_RING clocks later: rr.c reports
	 * and clears a clock's slot before any worker can get there */
	atomic_fetch_add_explicit(&cc->c[c], v, memory_order_relaxed);
}

static inline int rr_rank_of(const struct rr_worker *rw, int v)
{
	return v / rw->cfg->T;
}

static inline uint64_t rr_now_ns(const struct rr_worker *rw)
{
	return rw->env_ops->now ? rw->env_ops->now(rw->env) : frr_trace_now();
}

/* When a wait that starts now gives up (cfg->timeout_ms). */
static inline uint64_t rr_deadline_from_now(const struct rr_worker *rw)
{
	return rr_now_ns(rw) + (uint64_t)rw->cfg->timeout_ms * 1000000ull;
}

static inline void rr_nap_us(const struct rr_worker *rw, long us)
{
	struct timespec ts = { 0, us * 1000L };

	if (rw->env_ops->nap)
		rw->env_ops->nap(rw->env, rw->w, us);
	else
		nanosleep(&ts, NULL);
}

static inline int rr_is_member(const int *set, int n, int v)
{
	for (int i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

static inline void rr_ran_range(struct rr_worker *rw, int clock)
{
	rw->ran_clock[rw->nran++ % RR_RAN_RING] = clock;
}

/* rr_proto.c */
int rr_send_msg(struct rr_worker *rw, int to, enum rr_msg_type type, int clock,
		uint64_t a, uint64_t b, uint64_t id);
int rr_proto_err(struct rr_worker *rw, const struct frr_rr_msg *m,
		 const char *why);
/* Handle what is in the mailbox; wait up to timeout_ms for the first. */
int rr_drain(struct rr_worker *rw, int timeout_ms);

/* rr_serve.c: DoThis and CancelHelp from a helpee; run queued help of
 * clocks <= max_clock, oldest first */
int rr_on_do_this(struct rr_worker *rw, const struct frr_rr_msg *m);
int rr_on_cancel(struct rr_worker *rw, const struct frr_rr_msg *m);
int rr_serve(struct rr_worker *rw, int max_clock);

/* rr_policy.c: offer part of list to the helper furthest ahead, if any */
int rr_maybe_offer(struct rr_worker *rw, int clock, struct frr_rr_list *list);

#endif /* FLEXRR_RUNTIME_RR_PROTO_INT_H */
