// SPDX-License-Identifier: MIT
/*
 * RapidReassignment protocol engine: a state machine in the shape of the
 * Linux rxe completer (enum + name table + one function per state returning
 * the next state).  docs/rapidreassignment.md has the diagram.
 *
 * The cancel race is resolved at the helper, which handles its mailbox and
 * decides to start a task on one thread: a DoThis still queued when its
 * CancelHelp arrives is answered Cancelled and dropped (so it can never be
 * started afterwards); a DoThis already begun ignores the CancelHelp, and the
 * helpee, which waits for the answer to its CancelHelp, gets the
 * BegunHelping that crossed it and then waits for HelpCompleted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/log.h"
#include "rr_proto.h"
#include "trace/trace.h"

const char *const rr_msg_names[RR_MSG_NTYPES] = {
	[0] = "none",
	[RR_MSG_DO_THIS] = "DoThis",
	[RR_MSG_BEGUN] = "BegunHelping",
	[RR_MSG_COMPLETED] = "HelpCompleted",
	[RR_MSG_CANCEL] = "CancelHelp",
	[RR_MSG_CANCELLED] = "Cancelled",
};

const char *const rr_offer_state_names[RR_OFFER_NSTATES] = {
	[RR_OFFER_SENT] = "SENT",
	[RR_OFFER_CANCEL_SENT] = "CANCEL_SENT",
	[RR_OFFER_ACCEPTED] = "ACCEPTED",
	[RR_OFFER_COMPLETED] = "COMPLETED",
	[RR_OFFER_CANCELLED] = "CANCELLED",
	[RR_OFFER_RECLAIMED] = "RECLAIMED",
};

const char *const rr_state_names[RR_NSTATES] = {
	[RR_ST_CHECK] = "CHECK",
	[RR_ST_HELP_AHEAD] = "HELP_AHEAD",
	[RR_ST_OFFER] = "OFFER",
	[RR_ST_RESUME] = "RESUME",
	[RR_ST_REACHED_END] = "REACHED_END",
	[RR_ST_CANCEL_WAIT] = "CANCEL_WAIT",
	[RR_ST_RECLAIM] = "RECLAIM",
	[RR_ST_SERVE] = "SERVE",
	[RR_ST_HELP_WAIT] = "HELP_WAIT",
	[RR_ST_DONE] = "DONE",
	[RR_ST_ERROR] = "ERROR",
};

const char *const rr_counter_names[RR_C_NCOUNTERS] = {
	[RR_C_OFFERS] = "rr_offers",
	[RR_C_ACCEPTED] = "rr_accepted",
	[RR_C_CANCELLED] = "rr_cancelled",
	[RR_C_ITEMS] = "rr_items_reassigned",
};

/* ---- helper groups ------------------------------------------------------ */

int rr_helper_group(int P, int T, int g, int w, int *out)
{
	int r = w / T, t = w % T, n = 0, nlocal, nremote;

	if (g > RR_MAX_GROUP)
		g = RR_MAX_GROUP;
	if (g > P * T - 1)
		g = P * T - 1;
	if (g <= 0)
		return 0;
	/* other processes do not share w's CPU: most of the group is there;
	 * one same-process helper (for g >= 3) keeps help cheap (no state
	 * push, shared replica) */
	nremote = (P - 1) * T;
	nlocal = T - 1;
	if (nremote > g - (g >= 3 && nlocal > 0))
		nremote = g - (g >= 3 && nlocal > 0);
	if (nlocal > g - nremote)
		nlocal = g - nremote;
	/* remote: walk threads outer, ranks inner, so consecutive workers of
	 * a rank spread their load over distinct peers */
	for (int j = 0; j < T && n < nremote; j++)
		for (int i = 1; i < P && n < nremote; i++)
			out[n++] = ((r + i) % P) * T + (t + j) % T;
	for (int j = 1; j <= nlocal; j++)
		out[n++] = r * T + (t + j) % T;
	return n;
}

/* ---- small helpers ------------------------------------------------------ */

static void hook(struct rr_worker *rw, enum rr_hook_point pt,
		 const struct frr_rr_msg *m)
{
	if (rw->cfg->hook)
		rw->cfg->hook(rw->cfg->hook_arg, rw->w, pt, m);
}

static void event(struct rr_worker *rw, int kind, int peer, int clock,
		  uint64_t a, uint64_t b)
{
	if (rw->on_event)
		rw->on_event(rw->obs_arg, kind, peer, clock, a, b);
}

static void count(struct rr_worker *rw, int clock, enum rr_counter c,
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

static int rank_of(const struct rr_worker *rw, int v)
{
	return v / rw->cfg->T;
}

static uint64_t now_ns(const struct rr_worker *rw)
{
	return rw->env_ops->now ? rw->env_ops->now(rw->env) : frr_trace_now();
}

/* When a wait that starts now gives up (cfg->timeout_ms). */
static uint64_t deadline_from_now(const struct rr_worker *rw)
{
	return now_ns(rw) + (uint64_t)rw->cfg->timeout_ms * 1000000ull;
}

static void nap_us(const struct rr_worker *rw, long us)
{
	struct timespec ts = { 0, us * 1000L };

	if (rw->env_ops->nap)
		rw->env_ops->nap(rw->env, rw->w, us);
	else
		nanosleep(&ts, NULL);
}

static int send_msg(struct rr_worker *rw, int to, enum rr_msg_type type,
		    int clock, uint64_t a, uint64_t b, uint64_t id)
{
	struct frr_rr_msg m = {
		.type = type,
		.from = rw->w,
		.to = to,
		.clock = clock,
		.a = a,
		.b = b,
		.w = { id, 0, 0 },
	};
	uint64_t deadline = deadline_from_now(rw);
	int err;

	/* rings hold 32 messages and we keep at most 4 per pair in flight:
	 * a full ring means a stalled peer, so wait for it (bounded) */
	while ((err = rw->env_ops->send(rw->env, rw->w, to, &m)) == -EAGAIN) {
		if (now_ns(rw) > deadline) {
			frr_err("rr: worker %d cannot send %s to worker %d "
				"(rank %d): its mailbox stayed full for %d ms; "
				"it is stuck or dead",
				rw->w, rr_msg_names[type], to, rank_of(rw, to),
				rw->cfg->timeout_ms);
			return -ETIMEDOUT;
		}
		nap_us(rw, 50);
	}
	if (err)
		frr_err("rr: worker %d: sending %s to worker %d failed: %s",
			rw->w, rr_msg_names[type], to, strerror(-err));
	return err;
}

static int is_member(const int *set, int n, int v)
{
	for (int i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

static struct rr_offer *find_offer(struct rr_worker *rw, int helper,
				   uint64_t id)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].id == id && rw->offers[i].helper == helper)
			return &rw->offers[i];
	return NULL;
}

static int find_task(struct rr_worker *rw, int helpee, uint64_t id)
{
	for (int i = 0; i < rw->ntasks; i++)
		if (rw->tasks[i].helpee == helpee && rw->tasks[i].id == id)
			return i;
	return -1;
}

static void drop_task(struct rr_worker *rw, int i)
{
	rw->tasks[i] = rw->tasks[--rw->ntasks];
}

static int proto_err(struct rr_worker *rw, const struct frr_rr_msg *m,
		     const char *why)
{
	frr_err("rr: worker %d got a bad %s from worker %d (rank %d; clock "
		"%d, [%llu, %llu)): %s; that rank is corrupt or runs another "
		"flexrr, or this is a flexrr bug: please report it",
		rw->w, m->type < RR_MSG_NTYPES ? rr_msg_names[m->type] : "?",
		m->from, m->from >= 0 ? rank_of(rw, m->from) : -1, m->clock,
		(unsigned long long)m->a, (unsigned long long)m->b, why);
	return -EPROTO;
}

/* ---- message handling --------------------------------------------------- */

static int on_do_this(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	struct rr_task *t;

	if (!is_member(rw->helpees, rw->nhelpees, m->from))
		return proto_err(rw, m, "sender is not one of our helpees");
	if (m->clock < 0 || m->a >= m->b ||
	    m->b > rw->env_ops->nitems(rw->env, m->from))
		return proto_err(rw, m, "range or clock out of bounds");
	if (find_task(rw, m->from, m->w[0]) >= 0 || rw->ntasks >= rw->cap_tasks)
		return proto_err(rw, m, "duplicate offer or queue overflow");
	t = &rw->tasks[rw->ntasks++];
	t->helpee = m->from;
	t->clock = m->clock;
	t->a = m->a;
	t->b = m->b;
	t->id = m->w[0];
	t->seq = rw->task_seq++;
	hook(rw, RR_HOOK_TASK_QUEUED, m);
	return 0;
}

static int on_cancel(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	int i = find_task(rw, m->from, m->w[0]), err;

	if (!is_member(rw->helpees, rw->nhelpees, m->from))
		return proto_err(rw, m, "sender is not one of our helpees");
	/* not queued: we already sent BegunHelping, which crosses this */
	if (i < 0)
		return 0;
	drop_task(rw, i);
	err = send_msg(rw, m->from, RR_MSG_CANCELLED, m->clock, m->a, m->b,
		       m->w[0]);
	if (!err)
		hook(rw, RR_HOOK_CANCEL_ANSWERED, m);
	return err;
}

static int on_answer(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	struct rr_offer *o = find_offer(rw, m->from, m->w[0]);

	if (!o || m->clock != rw->clock || m->a != o->a || m->b != o->b)
		return proto_err(rw, m, "no such offer in this clock");
	switch (m->type) {
	case RR_MSG_BEGUN:
		if (o->state != RR_OFFER_SENT &&
		    o->state != RR_OFFER_CANCEL_SENT)
			return proto_err(rw, m, "offer not open");
		if (o->state == RR_OFFER_CANCEL_SENT)
			frr_dbg("rr: worker %d: BegunHelping from %d crossed "
				"our CancelHelp of [%llu, %llu)",
				rw->w, o->helper, (unsigned long long)o->a,
				(unsigned long long)o->b);
		o->state = RR_OFFER_ACCEPTED;
		count(rw, rw->clock, RR_C_ACCEPTED, 1);
		count(rw, rw->clock, RR_C_ITEMS, o->b - o->a);
		event(rw, FRR_TR_ACCEPTED, o->helper, rw->clock, o->a, o->b);
		return 0;
	case RR_MSG_COMPLETED:
		if (o->state != RR_OFFER_ACCEPTED)
			return proto_err(rw, m, "completed before begun");
		o->state = RR_OFFER_COMPLETED;
		rw->k_done++;
		event(rw, FRR_TR_HELP_RECVD, o->helper, rw->clock, o->a, o->b);
		return 0;
	case RR_MSG_CANCELLED:
		if (o->state != RR_OFFER_CANCEL_SENT)
			return proto_err(rw, m, "Cancelled without CancelHelp");
		o->state = RR_OFFER_CANCELLED;
		count(rw, rw->clock, RR_C_CANCELLED, 1);
		event(rw, FRR_TR_CANCELLED, o->helper, rw->clock, o->a, o->b);
		return 0;
	default:
		return proto_err(rw, m, "unexpected type");
	}
}

int rr_msg_handle(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	if (m->from < 0 || m->from >= rw->cfg->W || m->to != rw->w)
		return proto_err(rw, m, "bad sender or target");
	switch (m->type) {
	case RR_MSG_DO_THIS:
		return on_do_this(rw, m);
	case RR_MSG_CANCEL:
		return on_cancel(rw, m);
	case RR_MSG_BEGUN:
	case RR_MSG_COMPLETED:
	case RR_MSG_CANCELLED:
		if (!is_member(rw->helpers, rw->nhelpers, m->from))
			return proto_err(rw, m, "sender is not our helper");
		return on_answer(rw, m);
	default:
		return proto_err(rw, m, "unknown type");
	}
}

/* Between polls of a wait loop: answers come within a chunk of items of the
 * peer (tens of us to ms); a short sleep leaves the shared cores to workers
 * that have work. */
#define RR_WAIT_POLL_US 100

/* Handle what is in the mailbox; wait up to timeout_ms for the first. */
static int drain(struct rr_worker *rw, int timeout_ms)
{
	struct frr_rr_msg m;
	int got, err;

	while ((got = rw->env_ops->recv(rw->env, rw->w, &m, timeout_ms)) > 0) {
		err = rr_msg_handle(rw, &m);
		if (err)
			return err;
		timeout_ms = 0;
	}
	return got;
}

static int drain_or_nap(struct rr_worker *rw)
{
	struct frr_rr_msg m;
	int got = rw->env_ops->recv(rw->env, rw->w, &m, 0), err;

	if (got <= 0) {
		if (!got)
			nap_us(rw, RR_WAIT_POLL_US);
		return got;
	}
	err = rr_msg_handle(rw, &m);
	return err ? err : drain(rw, 0);
}

/* Ranges we ran whose clock may not be applied yet. */
static int unapplied(const struct rr_worker *rw)
{
	int n = 0, low = rw->clock - rw->cfg->slack - 1;
	unsigned k = rw->nran < RR_RAN_RING ? rw->nran : RR_RAN_RING;

	for (unsigned i = 0; i < k; i++)
		n += rw->ran_clock[i] >= low;
	return n;
}

static void ran_range(struct rr_worker *rw, int clock)
{
	rw->ran_clock[rw->nran++ % RR_RAN_RING] = clock;
}

/* Oldest (clock, arrival) task with clock <= max_clock, or -1.  None while
 * the runtime's help-batch slots are nearly used up (two are kept for our
 * own cancelled ranges): a queued offer is then cancelled by its helpee
 * rather than blocking us inside run_range. */
static int pick_task(const struct rr_worker *rw, int max_clock)
{
	int best = -1;

	if (rw->cfg->max_unapplied &&
	    unapplied(rw) >= rw->cfg->max_unapplied - 2)
		return -1;
	for (int i = 0; i < rw->ntasks; i++) {
		const struct rr_task *t = &rw->tasks[i];

		if (t->clock > max_clock)
			continue;
		if (best < 0 || t->clock < rw->tasks[best].clock ||
		    (t->clock == rw->tasks[best].clock &&
		     t->seq < rw->tasks[best].seq))
			best = i;
	}
	return best;
}

int rr_ready_task(const struct rr_worker *rw, int max_clock)
{
	return pick_task(rw, max_clock);
}

static int run_task(struct rr_worker *rw, int i)
{
	struct rr_task t = rw->tasks[i];
	struct frr_rr_msg m = { .type = RR_MSG_BEGUN,
				.from = rw->w,
				.to = t.helpee,
				.clock = t.clock,
				.a = t.a,
				.b = t.b,
				.w = { t.id, 0, 0 } };
	uint64_t t0, t1;
	int err;

	/* once dequeued a CancelHelp for it finds nothing: never Cancelled */
	drop_task(rw, i);
	err = send_msg(rw, t.helpee, RR_MSG_BEGUN, t.clock, t.a, t.b, t.id);
	if (err)
		return err;
	hook(rw, RR_HOOK_BEGUN_SENT, &m);
	hook(rw, RR_HOOK_RUN_RANGE, &m);
	t0 = now_ns(rw);
	err =
	    rw->env_ops->run_range(rw->env, rw->w, t.helpee, t.clock, t.a, t.b);
	t1 = now_ns(rw);
	if (err) {
		frr_err("rr: worker %d failed running items [%llu, %llu) of "
			"worker %d clock %d: %s",
			rw->w, (unsigned long long)t.a, (unsigned long long)t.b,
			t.helpee, t.clock, strerror(-err));
		return err;
	}
	if (rw->on_help)
		rw->on_help(rw->obs_arg, t.helpee, t.clock, t.a, t.b, t0, t1);
	ran_range(rw, t.clock);
	rw->helped_ranges++;
	rw->helped_items += t.b - t.a;
	return send_msg(rw, t.helpee, RR_MSG_COMPLETED, t.clock, t.a, t.b,
			t.id);
}

/* Run queued help of clocks <= max_clock, oldest first. */
static int serve(struct rr_worker *rw, int max_clock)
{
	int i, err;

	while ((i = pick_task(rw, max_clock)) >= 0) {
		err = run_task(rw, i);
		if (err)
			return err;
		/* answer CancelHelps that came while we were busy */
		err = drain(rw, 0);
		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- offering ----------------------------------------------------------- */

/* Fraction of its clock helper h has done, seen from our clock (a helper in
 * a later clock counts as 100% plus); < 0 when it is behind us. */
static double helper_fraction(struct rr_worker *rw, int h, int clock)
{
	struct frr_progress p = rw->env_ops->progress(rw->env, h);
	uint64_t n = rw->env_ops->nitems(rw->env, h);
	double rem, f;

	if (p.clock < clock)
		return -1.0;
	rem = n && p.total > p.done ? (double)(p.total - p.done) / (double)n
				    : 0.0;
	f = rem >= 1.0 ? 0.0 : 1.0 - rem;
	/* each clock it is ahead counts as a whole clock done */
	return f + (double)(p.clock - clock);
}

static int offered_to(const struct rr_worker *rw, int h)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].helper == h)
			return 1;
	return 0;
}

static int maybe_offer(struct rr_worker *rw, int clock,
		       struct frr_rr_list *list)
{
	const struct rr_config *c = rw->cfg;
	uint64_t rem_items = list->end - list->next, amount, a, id;
	double rem, me, best_lag = -1, lag;
	int best = -1, h, err;

	if (!list->n || rem_items < 2 || rw->noffers >= c->max_helpers)
		return 0;
	rem = (double)rem_items / (double)list->n;
	if (rem <= c->min_share)
		return 0;
	me = 1.0 - rem;
	for (int i = 0; i < rw->nhelpers; i++) {
		h = rw->helpers[i];
		if (offered_to(rw, h) || (rw->remote_refused >> i & 1) ||
		    (!c->remote_ok && rank_of(rw, h) != rank_of(rw, rw->w)))
			continue;
		lag = helper_fraction(rw, h, clock) - me;
		if (lag > best_lag) {
			best_lag = lag;
			best = i;
		}
	}
	if (best < 0 || best_lag <= c->threshold)
		return 0;
	h = rw->helpers[best];
	amount = (uint64_t)(best_lag / 2 * (double)list->n);
	if (amount > rem_items / 2)
		amount = rem_items / 2;
	if (!amount)
		return 0;
	a = list->end - amount;
	if (rank_of(rw, h) != rank_of(rw, rw->w)) {
		err = rw->env_ops->state_push(rw->env, rw->w, h, a, list->end);
		if (err == -EOPNOTSUPP) {
			/* item state cannot travel yet: local helpers only */
			rw->remote_refused |= 1ull << best;
			return 0;
		}
		if (err)
			return err;
	}
	id = ((uint64_t)(uint32_t)clock << 32) | (rw->next_id++ & 0xffffffff);
	err = send_msg(rw, h, RR_MSG_DO_THIS, clock, a, list->end, id);
	if (err)
		return err;
	rw->offers[rw->noffers++] = (struct rr_offer){
		.helper = h,
		.state = RR_OFFER_SENT,
		.a = a,
		.b = list->end,
		.id = id,
	};
	count(rw, clock, RR_C_OFFERS, 1);
	event(rw, FRR_TR_OFFER, h, clock, a, list->end);
	frr_dbg("rr: worker %d clock %d: DoThis [%llu, %llu) to worker %d "
		"(lag %.2f)",
		rw->w, clock, (unsigned long long)a,
		(unsigned long long)list->end, h, best_lag);
	list->end = a;
	return rw->env_ops->publish(rw->env, rw->w, clock, list);
}

/* ---- the state machine -------------------------------------------------- */

struct rr_run {
	struct rr_worker *rw;
	int clock;
	struct frr_rr_list *list;
	uint64_t deadline;
	int err;
};

static enum rr_state fail(struct rr_run *r, int err)
{
	r->err = err;
	return RR_ST_ERROR;
}

static enum rr_state st_check(struct rr_run *r)
{
	int err = drain(r->rw, 0);

	return err < 0 ? fail(r, err) : RR_ST_HELP_AHEAD;
}

static enum rr_state st_help_ahead(struct rr_run *r)
{
	/* help of an older clock goes before our own items */
	int err = serve(r->rw, r->clock - 1);

	if (err)
		return fail(r, err);
	/* at clock begin there is no list yet: nothing to offer */
	return r->list ? RR_ST_OFFER : RR_ST_RESUME;
}

static enum rr_state st_offer(struct rr_run *r)
{
	int err = maybe_offer(r->rw, r->clock, r->list);

	return err ? fail(r, err) : RR_ST_RESUME;
}

static enum rr_state st_reached_end(struct rr_run *r)
{
	struct rr_worker *rw = r->rw;
	int err;

	/* our list is done: help of our own clock may start (rule 2) */
	rw->own_done = 1;
	err = drain(rw, 0);
	if (err < 0)
		return fail(r, err);
	for (int i = 0; i < rw->noffers; i++) {
		struct rr_offer *o = &rw->offers[i];
		struct frr_rr_msg m = { .type = RR_MSG_CANCEL,
					.from = rw->w,
					.to = o->helper,
					.clock = r->clock,
					.a = o->a,
					.b = o->b,
					.w = { o->id, 0, 0 } };

		if (o->state != RR_OFFER_SENT)
			continue;
		hook(rw, RR_HOOK_BEFORE_CANCEL, &m);
		err = send_msg(rw, o->helper, RR_MSG_CANCEL, r->clock, o->a,
			       o->b, o->id);
		if (err)
			return fail(r, err);
		o->state = RR_OFFER_CANCEL_SENT;
		hook(rw, RR_HOOK_CANCEL_SENT, &m);
	}
	r->deadline = deadline_from_now(rw);
	return RR_ST_CANCEL_WAIT;
}

static const struct rr_offer *first_in(const struct rr_worker *rw,
				       enum rr_offer_state s1,
				       enum rr_offer_state s2)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].state == s1 || rw->offers[i].state == s2)
			return &rw->offers[i];
	return NULL;
}

static enum rr_state timed_out(struct rr_run *r, const struct rr_offer *o,
			       const char *what, int err)
{
	struct rr_worker *rw = r->rw;

	frr_err(
	    "rr: helper worker %d (rank %d) %s for items [%llu, %llu) of "
	    "worker %d clock %d %s; failing the job (nothing is reclaimed "
	    "silently: its updates may be partly applied).  Check that "
	    "rank %d is alive, or raise --timeout",
	    o->helper, rank_of(rw, o->helper), what, (unsigned long long)o->a,
	    (unsigned long long)o->b, rw->w, r->clock,
	    err == -ETIMEDOUT ? "in time (it is unresponsive: hung, stopped "
				"or overloaded)"
			      : "(its rank died)",
	    rank_of(rw, o->helper));
	return fail(r, err == -ETIMEDOUT ? -ETIMEDOUT : -ECONNRESET);
}

/* Liveness: no wait may hold back what another worker waits for.  Waiting
 * for the answers to our CancelHelps we keep answering theirs (drain) and
 * keep starting the help queued with us, exactly as HELP_WAIT does: the
 * helpee of a queued offer may itself be waiting for our BegunHelping
 * before it answers us (docs/protocol.md, "Liveness").  Serve before each
 * poll: a DoThis may have come with the drain of REACHED_END. */
static enum rr_state st_cancel_wait(struct rr_run *r)
{
	struct rr_worker *rw = r->rw;
	const struct rr_offer *o;
	int err;

	for (;;) {
		err = serve(rw, r->clock);
		if (err)
			return fail(r, err);
		o = first_in(rw, RR_OFFER_CANCEL_SENT, RR_OFFER_CANCEL_SENT);
		if (!o)
			break;
		err = drain_or_nap(rw);
		if (err < 0)
			return timed_out(r, o, "did not answer CancelHelp",
					 err);
		if (now_ns(rw) > r->deadline)
			return timed_out(r, o, "did not answer CancelHelp",
					 -ETIMEDOUT);
	}
	return RR_ST_RECLAIM;
}

static enum rr_state st_reclaim(struct rr_run *r)
{
	struct rr_worker *rw = r->rw;
	int extended = 0, err;

	/* a cancelled range that continues our list goes back to the item
	 * loop (cheapest); repeat, since ranges were cut from the tail */
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < rw->noffers; i++) {
			struct rr_offer *o = &rw->offers[i];

			if (o->state == RR_OFFER_CANCELLED &&
			    o->a == r->list->end) {
				r->list->end = o->b;
				o->state = RR_OFFER_RECLAIMED;
				extended = again = 1;
			}
		}
	}
	if (extended) {
		rw->own_done = 0; /* items of our own again first */
		return RR_ST_RESUME;
	}
	/* one cut off by an accepted offer: run it as a range of our own */
	for (int i = 0; i < rw->noffers; i++) {
		struct rr_offer *o = &rw->offers[i];

		if (o->state != RR_OFFER_CANCELLED)
			continue;
		err = rw->env_ops->run_range(rw->env, rw->w, rw->w, r->clock,
					     o->a, o->b);
		if (err)
			return fail(r, err);
		o->state = RR_OFFER_RECLAIMED;
		ran_range(rw, r->clock);
		rw->k_done++;
	}
	return RR_ST_SERVE;
}

static enum rr_state st_serve(struct rr_run *r)
{
	int err;

	r->rw->own_done = 1;
	err = serve(r->rw, r->clock);
	r->deadline = deadline_from_now(r->rw);
	return err ? fail(r, err) : RR_ST_HELP_WAIT;
}

static enum rr_state st_help_wait(struct rr_run *r)
{
	struct rr_worker *rw = r->rw;
	const struct rr_offer *o;
	int done = rw->k_done, err;

	while ((o = first_in(rw, RR_OFFER_ACCEPTED, RR_OFFER_SENT))) {
		err = drain_or_nap(rw);
		if (err < 0)
			return timed_out(r, o, "did not complete its help",
					 err);
		err = serve(rw, r->clock);
		if (err)
			return fail(r, err);
		if (rw->k_done != done) {
			/* progress: give the others a fresh timeout */
			done = rw->k_done;
			r->deadline = deadline_from_now(rw);
		} else if (now_ns(rw) > r->deadline) {
			return timed_out(r, o, "did not complete its help",
					 -ETIMEDOUT);
		}
	}
	return RR_ST_DONE;
}

typedef enum rr_state (*rr_state_fn)(struct rr_run *r);
static const rr_state_fn state_fns[RR_NSTATES] = {
	[RR_ST_CHECK] = st_check,
	[RR_ST_HELP_AHEAD] = st_help_ahead,
	[RR_ST_OFFER] = st_offer,
	[RR_ST_REACHED_END] = st_reached_end,
	[RR_ST_CANCEL_WAIT] = st_cancel_wait,
	[RR_ST_RECLAIM] = st_reclaim,
	[RR_ST_SERVE] = st_serve,
	[RR_ST_HELP_WAIT] = st_help_wait,
};

/* Run from 'state' until an exit state; returns it (err in r->err). */
static enum rr_state run_machine(struct rr_run *r, enum rr_state state)
{
	while (state_fns[state]) {
		enum rr_state next;

		r->rw->state = state;
		next = state_fns[state](r);
		if (frr_log_get_level() >= FRR_LOG_DEBUG && next != state)
			frr_dbg("rr: worker %d clock %d: %s -> %s", r->rw->w,
				r->clock, rr_state_names[state],
				rr_state_names[next]);
		state = next;
	}
	r->rw->state = state;
	if (state == RR_ST_ERROR)
		r->rw->err = r->err;
	return state;
}

/* ---- hooks -------------------------------------------------------------- */

int rr_worker_init(struct rr_worker *rw, const struct rr_config *cfg,
		   const struct rr_env_ops *ops, void *env, int w,
		   struct rr_clock_counters *counters)
{
	int grp[RR_MAX_GROUP], n;

	memset(rw, 0, sizeof(*rw));
	rw->cfg = cfg;
	rw->env_ops = ops;
	rw->env = env;
	rw->counters = counters;
	rw->w = w;
	rw->clock = -1;
	rw->nhelpers =
	    rr_helper_group(cfg->P, cfg->T, cfg->group_size, w, rw->helpers);
	rw->helpees = calloc((size_t)cfg->W, sizeof(int));
	if (!rw->helpees)
		return -ENOMEM;
	for (int v = 0; v < cfg->W; v++) {
		n = rr_helper_group(cfg->P, cfg->T, cfg->group_size, v, grp);
		if (v != w && is_member(grp, n, w))
			rw->helpees[rw->nhelpees++] = v;
	}
	/* at most one open offer per helpee (one per helper per clock, and
	 * a helpee's clock ends only when its offers are settled) */
	rw->cap_tasks = rw->nhelpees ? rw->nhelpees : 1;
	rw->tasks = calloc((size_t)rw->cap_tasks, sizeof(*rw->tasks));
	if (!rw->tasks) {
		free(rw->helpees);
		return -ENOMEM;
	}
	return 0;
}

void rr_worker_fini(struct rr_worker *rw)
{
	free(rw->tasks);
	free(rw->helpees);
	rw->tasks = NULL;
	rw->helpees = NULL;
}

int rr_clock_begin(struct rr_worker *rw, int clock)
{
	struct rr_run r = { .rw = rw, .clock = clock };

	rw->clock = clock;
	rw->noffers = 0;
	rw->k_done = 0;
	rw->own_done = 0;
	/* helpers ahead help at once: before our new clock's items */
	if (run_machine(&r, RR_ST_CHECK) == RR_ST_ERROR)
		return r.err;
	return 0;
}

int rr_idle(struct rr_worker *rw, int clock)
{
	int err = drain(rw, 0);

	if (err < 0)
		return err;
	/* waiting to start `clock` (SSP): help of older clocks; waiting
	 * after our list of `clock` is done (evaluation): of `clock` too */
	return serve(rw,
		     rw->own_done && clock == rw->clock ? clock : clock - 1);
}

int rr_progress_check(struct rr_worker *rw, int clock, struct frr_rr_list *list)
{
	struct rr_run r = { .rw = rw, .clock = clock, .list = list };

	if (run_machine(&r, RR_ST_CHECK) == RR_ST_ERROR)
		return r.err;
	return 0;
}

int rr_own_list_done(struct rr_worker *rw, int clock, struct frr_rr_list *list)
{
	struct rr_run r = { .rw = rw, .clock = clock, .list = list };
	enum rr_state s = run_machine(&r, RR_ST_REACHED_END);

	if (s == RR_ST_ERROR)
		return r.err;
	if (s == RR_ST_RESUME)
		return 0; /* list extended: the runtime calls us again */
	return rw->k_done;
}

int rr_clock_end(struct rr_worker *rw, int clock)
{
	(void)clock;
	rw->noffers = 0;
	return 0;
}

/* v has finished last_clock: its final word (last, n, n) is published only
 * after its own list and every offer of its clock are settled. */
static int helpee_finished(struct rr_worker *rw, int v, int last_clock)
{
	struct frr_progress p = rw->env_ops->progress(rw->env, v);
	uint64_t n = rw->env_ops->nitems(rw->env, v);

	if (p.clock != last_clock)
		return p.clock > last_clock;
	return p.done == p.total && p.total >= n;
}

int rr_worker_exit(struct rr_worker *rw, int last_clock)
{
	uint64_t deadline = deadline_from_now(rw);
	int err, pending;

	/* our final word says we are done with last_clock (100%): helpees
	 * still in it may offer to us, and we answer until they finish */
	rw->clock = last_clock + 1;
	rw->own_done = 0;
	for (;;) {
		/* start what is queued before waiting (see st_cancel_wait) */
		err = serve(rw, last_clock);
		if (err)
			return err;
		pending = 0;
		for (int i = 0; i < rw->nhelpees; i++)
			if (!helpee_finished(rw, rw->helpees[i], last_clock))
				pending = 1;
		if (!pending && !rw->ntasks)
			return 0;
		err = drain_or_nap(rw);
		if (err < 0)
			return err;
		if (now_ns(rw) > deadline) {
			frr_warn("rr: worker %d stops answering its helpees "
				 "after %d ms; one of them has not finished",
				 rw->w, rw->cfg->timeout_ms);
			return 0;
		}
	}
}
