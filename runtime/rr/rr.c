// SPDX-License-Identifier: MIT
/*
 * RapidReassignment plugged into the runtime's worker loop through
 * frr_rr_ops (rr_hooks.h), in modes flexrr and rr.  The protocol itself is
 * rr_proto.c; this file binds its environment to the runtime (mailboxes,
 * progress words, run_range, item state), adds its events to the timeline
 * trace and feeds the per-clock counters into the metrics file.  (Straggler
 * injection and the trace itself work in every mode without this file:
 * worker/instrument.c.)
 *
 * Threading: struct rr_job is written at job_init / job_fini only; each
 * struct rr_wstate is touched only by the thread running its worker (the
 * hooks), except inflight[], which the worker writes (relaxed) and the
 * runtime's server thread reads when a rank dies, to name the helper.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "rr/rr_hooks.h"
#include "rr/rr_proto.h"
#include "rr_hooks.h"
#include "stats.h"
#include "trace/trace.h"

struct rr_wstate {
	struct rr_worker rw;
	struct frr_trace_buf *tb;
	struct rr_job *job;
	int w;
	uint64_t next_report; /* publish progress when next reaches it */
	double clock_t0;      /* this clock's begin (--rr-link-weight) */
} __attribute__((aligned(64)));

struct rr_job {
	struct frr_rt *rt;
	struct rr_config cfg;
	int report_interval;
	int P, T, W, rank;
	struct rr_wstate *ws; /* T, this rank's workers */
	/* the failure rr names helpers for: 0 none, 1 being written, 2 set
	 * (dead_rank and dead_what are written before 2 is released) */
	_Atomic int dead_state;
	int dead_rank;
	const char *dead_what;
};

static struct rr_wstate *wstate(struct rr_job *j, int w)
{
	int l = w - j->rank * j->T;

	return l >= 0 && l < j->T ? &j->ws[l] : NULL;
}

/* ---- environment of the protocol engine -------------------------------- */

static int env_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	return frr_rt_msg_send(((struct rr_job *)env)->rt, from, to, m);
}

static int env_recv(void *env, int w, struct frr_rr_msg *m, int timeout_ms)
{
	return frr_rt_msg_recv(((struct rr_job *)env)->rt, w, m, timeout_ms);
}

static struct frr_progress env_progress(void *env, int v)
{
	struct rr_job *j = env;
	struct frr_progress p = frr_rt_progress(j->rt, v);
	uint64_t n = frr_rt_nitems(j->rt, v);
	int s = frr_rt_prog_shift(j->rt);

	/* back to items (the word counts units of 2^shift items) */
	p.done = frr_prog_items(p.done, n, s);
	p.total = frr_prog_items(p.total, n, s);
	return p;
}

static int env_publish(void *env, int w, int clock,
		       const struct frr_rr_list *list)
{
	return frr_rt_progress_publish(((struct rr_job *)env)->rt, w, clock,
				       list->next, list->end);
}

static int env_run_range(void *env, int helper, int owner, int clock,
			 uint64_t a, uint64_t b)
{
	/* the item states of [a, b) are back with the owner when it returns,
	 * before HelpCompleted */
	return frr_rt_run_range(((struct rr_job *)env)->rt, helper, owner,
				clock, a, b);
}

static int env_state_push(void *env, int owner, int helper, uint64_t a,
			  uint64_t b)
{
	return frr_rt_state_push(((struct rr_job *)env)->rt, owner, helper, a,
				 b);
}

static uint64_t env_nitems(void *env, int v)
{
	return frr_rt_nitems(((struct rr_job *)env)->rt, v);
}

static const double *env_costs(void *env, int v)
{
	return frr_rt_costs(((struct rr_job *)env)->rt, v);
}

static const struct rr_env_ops rt_env_ops = {
	.send = env_send,
	.recv = env_recv,
	.progress = env_progress,
	.publish = env_publish,
	.run_range = env_run_range,
	.state_push = env_state_push,
	.nitems = env_nitems,
	.costs = env_costs,
};

/* ---- observers: trace and metrics -------------------------------------- */

static void obs_help(void *arg, int owner, int clock, uint64_t a, uint64_t b,
		     uint64_t t0, uint64_t t1)
{
	struct rr_wstate *ws = arg;
	/* our own range cut off by an accepted offer (rr_proto.c reclaim) */
	enum frr_trace_kind k =
	    owner == ws->w ? FRR_TR_WORK : FRR_TR_HELP_GIVEN;

	frr_trace_cost(frr_trace_rec(ws->tb, k, t0, t1, clock,
				     owner == ws->w ? -1 : owner, a, b),
		       frr_rt_costs(ws->job->rt, owner), a, b);
}

static void obs_event(void *arg, int kind, int peer, int clock, uint64_t a,
		      uint64_t b)
{
	struct rr_wstate *ws = arg;

	frr_trace_instant(ws->tb, (enum frr_trace_kind)kind, clock, peer, a, b);
}

static void obs_count(void *arg, int clock, int counter, uint64_t v)
{
	struct rr_wstate *ws = arg;
	struct frr_rt *rt = ws->job->rt;
	struct frr_wclock *rec;

	/* counted on the helpee's thread during its clock: its own record */
	rec = &rt->ws->wk[ws - ws->job->ws].rec[clock % FRR_RT_STAT_RING];
	if (rec->clock == clock && counter >= 0 && counter < FRR_RT_NRR)
		rec->rr[counter] += (double)v;
}

/* ---- job ---------------------------------------------------------------- */

static int env_timeout_ms(const struct frr_rt *rt)
{
	const char *e = getenv("FLEXRR_RR_TIMEOUT_MS");

	if (e && atoi(e) > 0)
		return atoi(e);
	return rt->prm->timeout_ms > 0 ? rt->prm->timeout_ms : 60000;
}

_Static_assert(RR_C_ITEMS == FRR_M_RR_ITEMS - FRR_M_RR0 &&
		   RR_C_NCOUNTERS == FRR_RT_NRR,
	       "the --metrics rr columns follow rr_proto.h's counters");

static int check_opts(const struct frr_rr_opts *o)
{
	if (o->threshold < 0 || o->threshold > 1) {
		frr_err("--rr-threshold %g: give a fraction of a clock in "
			"[0, 1] (default 0.2)",
			o->threshold);
		return -EINVAL;
	}
	if (o->min_share < 0 || o->min_share >= 1) {
		frr_err("--rr-min-share %g: give a fraction of a clock in "
			"[0, 1) (default 0.05)",
			o->min_share);
		return -EINVAL;
	}
	if (o->link_weight < 0 || o->link_weight > 10) {
		frr_err("--rr-link-weight %g: give a weight in [0, 10] "
			"(default 0: off)",
			o->link_weight);
		return -EINVAL;
	}
	if (o->group_size > RR_MAX_GROUP) {
		frr_err("--rr-group %d: at most %d helpers per worker",
			o->group_size, RR_MAX_GROUP);
		return -EINVAL;
	}
	return 0;
}

int rr_load_replicas(struct frr_rt *rt, int g, const char *mode)
{
	const struct frr_rt_shape *s = frr_rt_shape(rt);
	int grp[RR_MAX_GROUP], n, err;

	for (int v = 0; v < s->nworkers; v++) {
		if (v / s->threads == s->rank)
			continue;
		n = rr_helper_group(s->nranks, s->threads, g, v, grp);
		for (int i = 0; i < n; i++)
			if (grp[i] / s->threads == s->rank) {
				err = frr_rt_want_replica(rt, v);
				if (err) {
					frr_err("%s: loading a replica of "
						"worker %d's partition "
						"failed (%d)",
						mode, v, err);
					return err;
				}
				break;
			}
	}
	return 0;
}

/* Who reads whose progress: a worker's helpers read it (to see it finish,
 * rr_proto.c helpee_finished) and it reads theirs (to pick the one ahead,
 * rr_policy.c helper_fraction); nobody else. */
static int progress_readers(struct rr_job *j)
{
	int grp[RR_MAX_GROUP], n, err = 0;

	for (int v = 0; v < j->W && !err; v++) {
		n = rr_helper_group(j->P, j->T, j->cfg.group_size, v, grp);
		for (int i = 0; i < n && !err; i++) {
			err = frr_rt_progress_reader(j->rt, v, grp[i] / j->T);
			if (!err)
				err = frr_rt_progress_reader(j->rt, grp[i],
							     v / j->T);
		}
	}
	return err;
}

static void job_free(struct rr_job *j)
{
	for (int l = 0; j->ws && l < j->T; l++)
		rr_worker_fini(&j->ws[l].rw);
	free(j->ws);
	free(j);
}

struct rr_config rr_config_from(const struct frr_rr_opts *opts, int P, int T,
				int slack, int timeout_ms)
{
	struct rr_config cfg = {
		.P = P,
		.T = T,
		.W = P * T,
		.group_size = opts->group_size > 0 ? opts->group_size
						   : FRR_RR_GROUP_DEFAULT,
		.threshold = opts->threshold,
		.min_share = opts->min_share,
		.link_weight = opts->link_weight,
		.timeout_ms = timeout_ms,
		.slack = slack,
		.max_unapplied = FRR_RT_HELP_SLOTS,
		.remote_ok = 1,
	};

	cfg.max_helpers =
	    opts->max_helpers > 0 ? opts->max_helpers : cfg.group_size;
	if (cfg.max_helpers > RR_MAX_GROUP)
		cfg.max_helpers = RR_MAX_GROUP;
	return cfg;
}

static void job_config(struct rr_job *j, struct frr_rt *rt,
		       const struct frr_rr_opts *opts)
{
	const struct frr_rt_shape *job = frr_rt_shape(rt);

	j->rt = rt;
	j->P = job->nranks;
	j->T = job->threads;
	j->W = job->nworkers;
	j->rank = job->rank;
	j->report_interval =
	    opts->report_interval > 0 ? opts->report_interval : 16;
	j->cfg =
	    rr_config_from(opts, j->P, j->T, job->slack, env_timeout_ms(rt));
}

static int rr_job_init(struct frr_rt *rt, const struct frr_rr_opts *opts,
		       void **state)
{
	struct rr_job *j;
	int err;

	err = check_opts(opts);
	if (err)
		return err;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	job_config(j, rt, opts);
	j->ws = aligned_alloc(64, sizeof(*j->ws) * (size_t)j->T);
	if (!j->ws) {
		err = -ENOMEM;
		goto free_job;
	}
	memset(j->ws, 0, sizeof(*j->ws) * (size_t)j->T);
	for (int l = 0; l < j->T; l++) {
		struct rr_wstate *ws = &j->ws[l];

		ws->job = j;
		ws->w = j->rank * j->T + l;
		ws->tb = frr_rt_trace_buf(rt, ws->w);
		err = rr_worker_init(&ws->rw, &j->cfg, &rt_env_ops, j, ws->w,
				     NULL);
		if (err)
			goto free_job;
		ws->rw.on_help = obs_help;
		ws->rw.on_event = obs_event;
		ws->rw.on_count = obs_count;
		ws->rw.obs_arg = ws;
	}
	err = rr_load_replicas(j->rt, j->cfg.group_size, "rr");
	if (!err)
		err = progress_readers(j);
	if (err)
		goto free_job;
	*state = j;
	return 0;
free_job:
	job_free(j);
	return err;
}

static void rr_job_fini(struct frr_rt *rt, void *state)
{
	struct rr_job *j = state;
	uint64_t tot[RR_C_NCOUNTERS] = { 0 }, hr = 0;

	(void)rt;
	for (int l = 0; l < j->T; l++) {
		for (int c = 0; c < RR_C_NCOUNTERS; c++)
			tot[c] += j->ws[l].rw.tot[c];
		hr += j->ws[l].rw.helped_ranges;
	}
	frr_info("rr: rank %d: offers %llu accepted %llu cancelled %llu items "
		 "reassigned %llu; ranges helped %llu",
		 j->rank, (unsigned long long)tot[RR_C_OFFERS],
		 (unsigned long long)tot[RR_C_ACCEPTED],
		 (unsigned long long)tot[RR_C_CANCELLED],
		 (unsigned long long)tot[RR_C_ITEMS], (unsigned long long)hr);
	job_free(j);
}

/* ---- hooks -------------------------------------------------------------- */

static int rr_hook_clock_begin(struct frr_rt *rt, void *state, int w, int clock)
{
	struct rr_wstate *ws = wstate(state, w);

	(void)rt;
	if (!ws)
		return -EINVAL;
	ws->next_report = 0;
	ws->clock_t0 = frr_rt_clock_now();
	return rr_clock_begin(&ws->rw, clock);
}

static int rr_hook_idle(struct frr_rt *rt, void *state, int w, int clock)
{
	struct rr_wstate *ws = wstate(state, w);

	(void)rt;
	return ws ? rr_idle(&ws->rw, clock) : -EINVAL;
}

static int rr_hook_progress_check(struct frr_rt *rt, void *state, int w,
				  int clock, struct frr_rr_list *list)
{
	struct rr_job *j = state;
	struct rr_wstate *ws = wstate(j, w);
	int err = 0;

	if (!ws)
		return -EINVAL;
	if (j->report_interval > 16 && list->next >= ws->next_report) {
		/* --rr-report N > 16: the runtime publishes every 1/16 of the
		 * list; we add reports every 1/N */
		err = frr_rt_progress_publish(rt, w, clock, list->next,
					      list->end);
		ws->next_report =
		    list->next + (list->n + (uint64_t)j->report_interval - 1) /
				     (uint64_t)j->report_interval;
	}
	return err ? err : rr_progress_check(&ws->rw, clock, list);
}

static int rr_hook_own_list_done(struct frr_rt *rt, void *state, int w,
				 int clock, struct frr_rr_list *list)
{
	struct rr_wstate *ws = wstate(state, w);

	(void)rt;
	return ws ? rr_own_list_done(&ws->rw, clock, list) : -EINVAL;
}

static int rr_hook_clock_end(struct frr_rt *rt, void *state, int w, int clock)
{
	struct rr_job *j = state;
	struct rr_wstate *ws = wstate(j, w);
	struct frr_wclock *rec;
	double idle, len;

	if (!ws)
		return -EINVAL;
	if (j->cfg.link_weight > 0) {
		/* as the simulator: wait (SSP and evaluation) and flush */
		rec = frr_rt_clock_rec(&rt->ws->wk[ws - j->ws], clock);
		idle = rec->wait_s + rec->flush_s;
		len = frr_rt_clock_now() - ws->clock_t0;
		rr_weigh(&ws->rw, idle, len);
		frr_info("rr: worker %d clock %d: offers need a lead of %.3f "
			 "of a clock (%.1f%% of it waiting and flushing)",
			 w, clock, j->cfg.threshold + ws->rw.thr_extra,
			 len > 0 ? 100 * idle / len : 0.0);
	}
	return rr_clock_end(&ws->rw, clock);
}

static int rr_hook_worker_exit(struct frr_rt *rt, void *state, int w,
			       int last_clock)
{
	struct rr_wstate *ws = wstate(state, w);

	(void)rt;
	return ws ? rr_worker_exit(&ws->rw, last_clock) : -EINVAL;
}

/* Does worker v sit on the failed rank (rank < 0: on any other rank)? */
static int on_failed(const struct rr_job *j, int v, int rank)
{
	return rank < 0 ? v / j->T != j->rank : v / j->T == rank;
}

/*
 * Naming the helpers and helpees of a failed rank.  The thread that notices
 * the failure (usually the server) only records it; each worker names its
 * own offers and tasks on its own thread as it unwinds, so no thread reads
 * another's protocol state.
 */

/* Helpee side: the helpers of rank that our open offers wait on. */
static void name_helpers(const struct rr_job *j, const struct rr_worker *rw,
			 int rank, const char *what)
{
	for (int i = 0; i < rw->noffers && i < RR_MAX_OFFERS; i++) {
		const struct rr_offer *o = &rw->offers[i];

		if (on_failed(j, o->helper, rank) &&
		    (o->state == RR_OFFER_ACCEPTED ||
		     o->state == RR_OFFER_SENT ||
		     o->state == RR_OFFER_CANCEL_SENT))
			frr_err("rr: helper worker %d (rank %d) %s while "
				"helping worker %d with items [%llu, %llu) of "
				"clock %d; the job fails (nothing is "
				"reclaimed silently)",
				o->helper, o->helper / j->T, what, rw->w,
				(unsigned long long)o->a,
				(unsigned long long)o->b, rw->clock);
	}
}

/* Helper side: the helpees of rank whose offers we hold queued. */
static void name_helpees(const struct rr_job *j, const struct rr_worker *rw,
			 int rank, const char *what)
{
	for (int i = 0; i < rw->ntasks && i < rw->cap_tasks; i++) {
		const struct rr_task *t = &rw->tasks[i];

		if (on_failed(j, t->helpee, rank))
			frr_err("rr: helpee worker %d (rank %d) %s while "
				"worker %d held its items [%llu, %llu) of "
				"clock %d to help with; the job fails",
				t->helpee, t->helpee / j->T, what, rw->w,
				(unsigned long long)t->a,
				(unsigned long long)t->b, t->clock);
	}
}

/* rank = the rank that failed, or -1 when the job fails for any reason;
 * called before the failure is published (job/health.c).  The first call
 * is the one named; a later one returns once that record is complete (two
 * stores away), so a worker that sees the failure finds the record. */
static void rr_hook_peer_dead(struct frr_rt *rt, void *state, int rank,
			      const char *what)
{
	struct rr_job *j = state;
	int none = 0;

	(void)rt;
	if (!j)
		return;
	if (!atomic_compare_exchange_strong(&j->dead_state, &none, 1)) {
		while (atomic_load_explicit(&j->dead_state,
					    memory_order_acquire) != 2)
			sched_yield();
		return;
	}
	j->dead_rank = rank;
	j->dead_what = what;
	atomic_store_explicit(&j->dead_state, 2, memory_order_release);
}

/* On w's thread, as it unwinds from a failed job: name every remote helper
 * it is waiting on and every remote helpee whose help it holds. */
static void rr_hook_worker_failed(struct frr_rt *rt, void *state, int w)
{
	struct rr_job *j = state;
	struct rr_wstate *ws = j ? wstate(j, w) : NULL;

	(void)rt;
	if (!ws ||
	    atomic_load_explicit(&j->dead_state, memory_order_acquire) != 2)
		return;
	name_helpers(j, &ws->rw, j->dead_rank, j->dead_what);
	name_helpees(j, &ws->rw, j->dead_rank, j->dead_what);
}

const struct frr_rr_ops frr_rr_ops = {
	.job_init = rr_job_init,
	.job_fini = rr_job_fini,
	.clock_begin = rr_hook_clock_begin,
	.idle = rr_hook_idle,
	.progress_check = rr_hook_progress_check,
	.own_list_done = rr_hook_own_list_done,
	.clock_end = rr_hook_clock_end,
	.worker_exit = rr_hook_worker_exit,
	.peer_dead = rr_hook_peer_dead,
	.worker_failed = rr_hook_worker_failed,
};
