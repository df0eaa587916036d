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

#include "flexrr/log.h"
#include "rr_proto_int.h"

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

/* ---- small helpers ------------------------------------------------------ */

int rr_send_msg(struct rr_worker *rw, int to, enum rr_msg_type type, int clock,
		uint64_t a, uint64_t b, uint64_t id)
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
	uint64_t deadline = rr_deadline_from_now(rw);
	int err;

	/* rings hold 32 messages and we keep at most 4 per pair in flight:
	 * a full ring means a stalled peer, so wait for it (bounded) */
	while ((err = rw->env_ops->send(rw->env, rw->w, to, &m)) == -EAGAIN) {
		if (rr_now_ns(rw) > deadline) {
			frr_err("rr: worker %d cannot send %s to worker %d "
				"(rank %d): its mailbox stayed full for %d ms; "
				"it is stuck or dead",
				rw->w, rr_msg_names[type], to,
				rr_rank_of(rw, to), rw->cfg->timeout_ms);
			return -ETIMEDOUT;
		}
		rr_nap_us(rw, 50);
	}
	if (err)
		frr_err("rr: worker %d: sending %s to worker %d failed: %s",
			rw->w, rr_msg_names[type], to, strerror(-err));
	return err;
}

static struct rr_offer *find_offer(struct rr_worker *rw, int helper,
				   uint64_t id)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].id == id && rw->offers[i].helper == helper)
			return &rw->offers[i];
	return NULL;
}

int rr_proto_err(struct rr_worker *rw, const struct frr_rr_msg *m,
		 const char *why)
{
	frr_err("rr: worker %d got a bad %s from worker %d (rank %d; clock "
		"%d, [%llu, %llu)): %s; that rank is corrupt or runs another "
		"flexrr, or this is a flexrr bug: please report it",
		rw->w, m->type < RR_MSG_NTYPES ? rr_msg_names[m->type] : "?",
		m->from, m->from >= 0 ? rr_rank_of(rw, m->from) : -1, m->clock,
		(unsigned long long)m->a, (unsigned long long)m->b, why);
	return -EPROTO;
}

/* ---- message handling --------------------------------------------------- */

static int on_answer(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	struct rr_offer *o = find_offer(rw, m->from, m->w[0]);

	if (!o || m->clock != rw->clock || m->a != o->a || m->b != o->b)
		return rr_proto_err(rw, m, "no such offer in this clock");
	switch (m->type) {
	case RR_MSG_BEGUN:
		if (o->state != RR_OFFER_SENT &&
		    o->state != RR_OFFER_CANCEL_SENT)
			return rr_proto_err(rw, m, "offer not open");
		if (o->state == RR_OFFER_CANCEL_SENT)
			frr_dbg("rr: worker %d: BegunHelping from %d crossed "
				"our CancelHelp of [%llu, %llu)",
				rw->w, o->helper, (unsigned long long)o->a,
				(unsigned long long)o->b);
		o->state = RR_OFFER_ACCEPTED;
		rr_count(rw, rw->clock, RR_C_ACCEPTED, 1);
		rr_count(rw, rw->clock, RR_C_ITEMS, o->b - o->a);
		rr_event(rw, FRR_TR_ACCEPTED, o->helper, rw->clock, o->a, o->b);
		return 0;
	case RR_MSG_COMPLETED:
		if (o->state != RR_OFFER_ACCEPTED)
			return rr_proto_err(rw, m, "completed before begun");
		o->state = RR_OFFER_COMPLETED;
		rw->k_done++;
		rr_event(rw, FRR_TR_HELP_RECVD, o->helper, rw->clock, o->a,
			 o->b);
		return 0;
	case RR_MSG_CANCELLED:
		if (o->state != RR_OFFER_CANCEL_SENT)
			return rr_proto_err(rw, m,
					    "Cancelled without CancelHelp");
		o->state = RR_OFFER_CANCELLED;
		rr_count(rw, rw->clock, RR_C_CANCELLED, 1);
		rr_event(rw, FRR_TR_CANCELLED, o->helper, rw->clock, o->a,
			 o->b);
		return 0;
	default:
		return rr_proto_err(rw, m, "unexpected type");
	}
}

int rr_msg_handle(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	if (m->from < 0 || m->from >= rw->cfg->W || m->to != rw->w)
		return rr_proto_err(rw, m, "bad sender or target");
	switch (m->type) {
	case RR_MSG_DO_THIS:
		return rr_on_do_this(rw, m);
	case RR_MSG_CANCEL:
		return rr_on_cancel(rw, m);
	case RR_MSG_BEGUN:
	case RR_MSG_COMPLETED:
	case RR_MSG_CANCELLED:
		if (!rr_is_member(rw->helpers, rw->nhelpers, m->from))
			return rr_proto_err(rw, m, "sender is not our helper");
		return on_answer(rw, m);
	default:
		return rr_proto_err(rw, m, "unknown type");
	}
}

/* Between polls of a wait loop: answers come within a chunk of items of the
 * peer (tens of us to ms); a short sleep leaves the shared cores to workers
 * that have work. */
#define RR_WAIT_POLL_US 100

/* Handle what is in the mailbox; wait up to timeout_ms for the first. */
int rr_drain(struct rr_worker *rw, int timeout_ms)
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
			rr_nap_us(rw, RR_WAIT_POLL_US);
		return got;
	}
	err = rr_msg_handle(rw, &m);
	return err ? err : rr_drain(rw, 0);
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
	int err = rr_drain(r->rw, 0);

	return err < 0 ? fail(r, err) : RR_ST_HELP_AHEAD;
}

static enum rr_state st_help_ahead(struct rr_run *r)
{
	/* help of an older clock goes before our own items */
	int err = rr_serve(r->rw, r->clock - 1);

	if (err)
		return fail(r, err);
	/* at clock begin there is no list yet: nothing to offer */
	return r->list ? RR_ST_OFFER : RR_ST_RESUME;
}

static enum rr_state st_offer(struct rr_run *r)
{
	int err = rr_maybe_offer(r->rw, r->clock, r->list);

	return err ? fail(r, err) : RR_ST_RESUME;
}

static enum rr_state st_reached_end(struct rr_run *r)
{
	struct rr_worker *rw = r->rw;
	int err;

	/* our list is done: help of our own clock may start (rule 2) */
	rw->own_done = 1;
	err = rr_drain(rw, 0);
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
		rr_hook(rw, RR_HOOK_BEFORE_CANCEL, &m);
		err = rr_send_msg(rw, o->helper, RR_MSG_CANCEL, r->clock, o->a,
				  o->b, o->id);
		if (err)
			return fail(r, err);
		o->state = RR_OFFER_CANCEL_SENT;
		rr_hook(rw, RR_HOOK_CANCEL_SENT, &m);
	}
	r->deadline = rr_deadline_from_now(rw);
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
	    o->helper, rr_rank_of(rw, o->helper), what,
	    (unsigned long long)o->a, (unsigned long long)o->b, rw->w, r->clock,
	    err == -ETIMEDOUT ? "in time (it is unresponsive: hung, stopped or "
				"overloaded)"
			      : "(its rank died)",
	    rr_rank_of(rw, o->helper));
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
		err = rr_serve(rw, r->clock);
		if (err)
			return fail(r, err);
		o = first_in(rw, RR_OFFER_CANCEL_SENT, RR_OFFER_CANCEL_SENT);
		if (!o)
			break;
		err = drain_or_nap(rw);
		if (err < 0)
			return timed_out(r, o, "did not answer CancelHelp",
					 err);
		if (rr_now_ns(rw) > r->deadline)
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

		uint64_t t0;

		if (o->state != RR_OFFER_CANCELLED)
			continue;
		t0 = rr_now_ns(rw);
		err = rw->env_ops->run_range(rw->env, rw->w, rw->w, r->clock,
					     o->a, o->b);
		if (err)
			return fail(r, err);
		/* the timeline shows it as our own work (owner == us) */
		if (rw->on_help)
			rw->on_help(rw->obs_arg, rw->w, r->clock, o->a, o->b,
				    t0, rr_now_ns(rw));
		o->state = RR_OFFER_RECLAIMED;
		rr_ran_range(rw, r->clock);
		rw->k_done++;
	}
	return RR_ST_SERVE;
}

static enum rr_state st_serve(struct rr_run *r)
{
	int err;

	r->rw->own_done = 1;
	err = rr_serve(r->rw, r->clock);
	r->deadline = rr_deadline_from_now(r->rw);
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
		err = rr_serve(rw, r->clock);
		if (err)
			return fail(r, err);
		if (rw->k_done != done) {
			/* progress: give the others a fresh timeout */
			done = rw->k_done;
			r->deadline = rr_deadline_from_now(rw);
		} else if (rr_now_ns(rw) > r->deadline) {
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
		if (v != w && rr_is_member(grp, n, w))
			rw->helpees[rw->nhelpees++] = v;
	}
	/* at most one open offer per helpee (a helpee offers us again only
	 * after our HelpCompleted, and its clock ends only when its offers
	 * are settled) */
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
	int err = rr_drain(rw, 0);

	if (err < 0)
		return err;
	/* waiting to start `clock` (SSP): help of older clocks; waiting
	 * after our list of `clock` is done (evaluation): of `clock` too */
	return rr_serve(rw,
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

void rr_weigh(struct rr_worker *rw, double idle_s, double clock_s)
{
	if (clock_s > 0 && idle_s >= 0)
		rw->thr_extra = rw->cfg->link_weight *
				(idle_s < clock_s ? idle_s / clock_s : 1.0);
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
	uint64_t deadline = rr_deadline_from_now(rw);
	int err, pending;

	/* our final word says we are done with last_clock (100%): helpees
	 * still in it may offer to us, and we answer until they finish */
	rw->clock = last_clock + 1;
	rw->own_done = 0;
	for (;;) {
		/* start what is queued before waiting (see st_cancel_wait) */
		err = rr_serve(rw, last_clock);
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
		if (rr_now_ns(rw) > deadline) {
			frr_warn("rr: worker %d stops answering its helpees "
				 "after %d ms; one of them has not finished",
				 rw->w, rw->cfg->timeout_ms);
			return 0;
		}
	}
}
