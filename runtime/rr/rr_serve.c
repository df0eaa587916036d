// SPDX-License-Identifier: MIT
/*
 * RapidReassignment, the helper side: the DoThis queue (a CancelHelp drops a
 * queued DoThis; a begun one runs to completion, see rr_proto.c), which
 * queued task to start, and running it.
 */
#include <errno.h>
#include <string.h>

#include "flexrr/log.h"
#include "rr_proto_int.h"

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

int rr_on_do_this(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	struct rr_task *t;

	if (!rr_is_member(rw->helpees, rw->nhelpees, m->from))
		return rr_proto_err(rw, m, "sender is not one of our helpees");
	if (m->clock < 0 || m->a >= m->b ||
	    m->b > rw->env_ops->nitems(rw->env, m->from))
		return rr_proto_err(rw, m, "range or clock out of bounds");
	if (find_task(rw, m->from, m->w[0]) >= 0 || rw->ntasks >= rw->cap_tasks)
		return rr_proto_err(rw, m, "duplicate offer or queue overflow");
	t = &rw->tasks[rw->ntasks++];
	t->helpee = m->from;
	t->clock = m->clock;
	t->a = m->a;
	t->b = m->b;
	t->id = m->w[0];
	t->seq = rw->task_seq++;
	rr_hook(rw, RR_HOOK_TASK_QUEUED, m);
	return 0;
}

int rr_on_cancel(struct rr_worker *rw, const struct frr_rr_msg *m)
{
	int i = find_task(rw, m->from, m->w[0]), err;

	if (!rr_is_member(rw->helpees, rw->nhelpees, m->from))
		return rr_proto_err(rw, m, "sender is not one of our helpees");
	/* not queued: we already sent BegunHelping, which crosses this */
	if (i < 0)
		return 0;
	drop_task(rw, i);
	err = rr_send_msg(rw, m->from, RR_MSG_CANCELLED, m->clock, m->a, m->b,
			  m->w[0]);
	if (!err)
		rr_hook(rw, RR_HOOK_CANCEL_ANSWERED, m);
	return err;
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
	err = rr_send_msg(rw, t.helpee, RR_MSG_BEGUN, t.clock, t.a, t.b, t.id);
	if (err)
		return err;
	rr_hook(rw, RR_HOOK_BEGUN_SENT, &m);
	rr_hook(rw, RR_HOOK_RUN_RANGE, &m);
	t0 = rr_now_ns(rw);
	err =
	    rw->env_ops->run_range(rw->env, rw->w, t.helpee, t.clock, t.a, t.b);
	t1 = rr_now_ns(rw);
	if (err) {
		frr_err("rr: worker %d failed running items [%llu, %llu) of "
			"worker %d clock %d: %s",
			rw->w, (unsigned long long)t.a, (unsigned long long)t.b,
			t.helpee, t.clock, strerror(-err));
		return err;
	}
	if (rw->on_help)
		rw->on_help(rw->obs_arg, t.helpee, t.clock, t.a, t.b, t0, t1);
	rr_ran_range(rw, t.clock);
	rw->helped_ranges++;
	rw->helped_items += t.b - t.a;
	return rr_send_msg(rw, t.helpee, RR_MSG_COMPLETED, t.clock, t.a, t.b,
			   t.id);
}

/* Run queued help of clocks <= max_clock, oldest first. */
int rr_serve(struct rr_worker *rw, int max_clock)
{
	int i, err;

	while ((i = pick_task(rw, max_clock)) >= 0) {
		err = run_task(rw, i);
		if (err)
			return err;
		/* answer CancelHelps that came while we were busy */
		err = rr_drain(rw, 0);
		if (err < 0)
			return err;
	}
	return 0;
}
