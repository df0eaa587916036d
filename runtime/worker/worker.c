// SPDX-License-Identifier: MIT
/*
 * Worker threads: the loop over clocks and over the items of the worker's
 * own partition, run through its cache and flushed at clock end, with the
 * RapidReassignment hooks of rr/rr_hooks.h around it.  Hot path (the app's
 * row accesses): no lock, no allocation, no system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <numa.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/file.h"
#include "flexrr/log.h"
#include "ssp.h"
#include "worker.h"

struct frr_wclock *frr_rt_clock_rec(struct frr_worker *wk, int clock)
{
	/* a clock's record starts at its first use: help given for clock c
	 * before this worker got there stays in it */
	struct frr_wclock *r = &wk->rec[clock % FRR_RT_STAT_RING];

	if (r->clock != clock) {
		memset(r, 0, sizeof(*r));
		r->clock = clock;
		r->min_data_clock = INT64_MAX;
	}
	return r;
}

/* Who wrote partition part's item state besides us: a protocol error of
 * the app (-EPROTO) on item state names them. */
static void state_origin(const struct frr_rt *rt, int part, char *buf, size_t n)
{
	buf[0] = 0;
	if (!rt->ws->state_mr || !rt->ws->parts[part].state)
		return;
	if (part / rt->T != rt->rank)
		snprintf(buf, n, "; its item state came from rank %d",
			 part / rt->T);
	else
		snprintf(buf, n,
			 "; its item state is written back by the rr "
			 "helpers of worker %d on other ranks",
			 part);
}

int frr_rt_process(struct frr_ctx *c, uint64_t a, uint64_t b)
{
	struct frr_rt *rt = c->rt;
	uint64_t t0 = rt->ws->inst ? frr_now_ns() : 0;
	int err = rt->app->process(rt->app_state, c, a, b);

	if (rt->ws->inst)
		frr_inst_chunk(c->wk, frr_now_ns() - t0);
	c->cache->items += b - a;
	if (err) {
		char from[128];

		state_origin(rt, c->part, from, sizeof(from));
		return frr_rt_fail(rt, err,
				   "app %s: process(partition %d, clock %d, "
				   "items [%llu, %llu)) failed (%d)%s",
				   rt->app->name, c->part, c->clock,
				   (unsigned long long)a, (unsigned long long)b,
				   err, err == -EPROTO ? from : "");
	}
	/* an out-of-range access inside it failed the job */
	return frr_rt_failed(rt);
}

int frr_rt_hook(struct frr_rt *rt, int err, const char *name, int w, int c)
{
	if (err >= 0)
		return 0;
	return frr_rt_fail(rt, err,
			   "rr hook %s(worker %d, clock %d) failed (%d)", name,
			   w, c, err);
}

/* Pin to the k-th CPU this process may use (cgroups and taskset respected),
 * k = node-local rank * T + thread (the launcher's, via frr_run_opts). */
static void pin_self(struct frr_worker *wk)
{
	struct frr_rt *rt = wk->rt;
	int local = rt->prm->local_rank >= 0 ? rt->prm->local_rank : rt->rank;
	int n, k, cpu = -1;
	cpu_set_t allowed, set;

	if (!rt->prm->pin || sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	n = CPU_COUNT(&allowed);
	if (n < 1)
		return;
	k = (local * rt->T + wk->dp.local) % n;
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &allowed) && k-- == 0)
			cpu = c;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		frr_dbg("pinning worker %d to CPU %d failed; running unpinned",
			wk->dp.id, cpu);
	else
		frr_dbg("worker %d (node-local rank %d, thread %d) pinned to "
			"CPU %d",
			wk->dp.id, local, wk->dp.local, cpu);
	if (numa_available() >= 0)
		numa_set_localalloc();
}

/* Mode backup: once the clock is cut (all but the backups finished it),
 * the rest of the list is dropped, counted, at this chunk's end. */
static void backup_check(struct frr_ctx *c, struct frr_rr_list *list)
{
	if (!c->rt->backups || list->next >= list->end ||
	    frr_rt_backup_cut(c->rt) <= c->clock)
		return;
	c->rec->dropped += list->end - list->next;
	list->end = list->next;
}

/* Items [next, end) of the list in chunks of 1/64, progress every 1/16,
 * rr's progress check (which may move end) after each chunk. */
static int run_list(struct frr_ctx *c, struct frr_rr_list *list)
{
	struct frr_rt *rt = c->rt;
	int w = c->wk->dp.id, err = 0;
	uint64_t chunk = list->n / 64 ? list->n / 64 : 1;
	uint64_t step = list->n / 16 ? list->n / 16 : 1;
	uint64_t mark = list->next + step;

	while (list->next < list->end && !err) {
		uint64_t b = list->next + chunk < list->end ? list->next + chunk
							    : list->end;

		err = frr_rt_process(c, list->next, b);
		list->next = b;
		backup_check(c, list);
		if (!err && list->next >= mark) {
			err = frr_rt_progress_publish(rt, w, c->clock,
						      list->next, list->end);
			mark = list->next + step;
		}
		if (err || !rt->ws->rr)
			continue;
		err = frr_rt_hook(rt,
				  rt->ws->rr->progress_check(
				      rt, rt->ws->rr_state, w, c->clock, list),
				  "progress_check", w, c->clock);
		if (!err && (list->end > list->n || list->end < list->next))
			err = frr_rt_fail(rt, -EPROTO,
					  "rr moved worker %d's list end out "
					  "of [next, n]",
					  w);
	}
	return err;
}

static void injected_delay(struct frr_rt *rt, struct frr_worker *wk, int c)
{
	const struct frr_rt_params *o = rt->prm;
	int victim;

	if (o->delay_every <= 0 || (c + 1) % o->delay_every)
		return;
	/* W < 0: a different worker each time (transient stragglers) */
	victim = o->delay_worker >= 0 ? o->delay_worker
				      : ((c + 1) / o->delay_every - 1) % rt->W;
	if (wk->dp.id == victim) {
		double s = o->delay_factor * wk->loop_time;
		struct timespec ts = { (time_t)s,
				       (long)((s - (double)(time_t)s) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* FLEXRR_TEST_DIE (core.h): this rank dies here, once per FILE. */
static void test_die(struct frr_rt *rt, const struct frr_worker *wk, int c)
{
	for (int i = 0; i < rt->test_die_n; i++) {
		const struct frr_test_die *d = &rt->test_die[i];

		if (d->rank != rt->rank || wk->dp.id != rt->rank * rt->T ||
		    frr_rt_app_clock(rt, c) != d->clock)
			continue;
		/* died here once already: the job goes on */
		if (frr_file_claim(d->file) != 1)
			continue;
		fprintf(stderr,
			"flexrr[%d]: test: FLEXRR_TEST_DIE: %s at clock %d\n",
			rt->rank,
			!rt->test_die_sig	      ? "hangs"
			: rt->test_die_sig == SIGSTOP ? "SIGSTOP"
						      : "SIGKILL",
			d->clock);
		if (!rt->test_die_sig) {
			/* hung: alive, silent, no signal (the server stops at
			 * its next heartbeat) */
			struct timespec ts = { 1, 0 };

			atomic_store(&rt->test_hung, 1);
			for (;;)
				nanosleep(&ts, NULL);
		}
		/* the process dies or stops whole; raise (tgkill) makes this
		 * thread stop before it runs on, as kill(getpid()) may not */
		raise(rt->test_die_sig);
	}
}

/* For launch/recover.c: the highest app clock this rank's workers started
 * (once per clock, not per item). */
static void watch_clock(const struct frr_rt *rt, int c)
{
	struct frr_rt_watch *w = rt->prm->watch;
	int app = frr_rt_app_clock(rt, c), seen;

	if (!w)
		return;
	seen = atomic_load(&w->clock);
	while (seen < app &&
	       !atomic_compare_exchange_weak(&w->clock, &seen, app))
		;
}

/* The own list, then rr's end of list (help others, wait for helpers,
 * maybe more own items); *nextra = batches of this clock run by others. */
static int own_items(struct frr_ctx *c, struct frr_rr_list *list, int *nextra)
{
	struct frr_rt *rt = c->rt;
	int w = c->wk->dp.id;

	for (;;) {
		uint64_t a = list->next, t0;
		int k, err = run_list(c, list);

		if (!err)
			frr_inst_list_done(c->wk, c->clock, a, list->end);
		if (err || !rt->ws->rr)
			return err;
		t0 = frr_now_ns();
		k = rt->ws->rr->own_list_done(rt, rt->ws->rr_state, w, c->clock,
					      list);
		err = frr_rt_hook(rt, k, "own_list_done", w, c->clock);
		if (err)
			return err;
		/* the next work span (if the list grew back) starts here */
		frr_inst_help_wait(c->wk, c->clock, t0);
		if (list->next >= list->end) {
			*nextra = k;
			return 0;
		}
	}
}

int frr_rt_worker_idle(struct frr_worker *wk, int c)
{
	struct frr_rt *rt = wk->rt;

	if (!rt->ws->rr)
		return 0;
	return frr_rt_hook(rt,
			   rt->ws->rr->idle(rt, rt->ws->rr_state, wk->dp.id, c),
			   "idle", wk->dp.id, c);
}

/* rr serves help while a worker waits (a helpee may wait on it). */
static int wait_turn(void *arg, int c)
{
	return frr_rt_worker_idle(arg, c);
}

/* wk as an SSP wait sees it. */
#define WAITER(wk)                                                       \
	{                                                                \
		.w = (wk)->dp.id, .helped_clock = (wk)->helped_clock,    \
		.turn = (wk)->rt->ws->rr ? wait_turn : NULL, .arg = (wk) \
	}

static int one_clock(struct frr_worker *wk, int clock)
{
	struct frr_rt *rt = wk->rt;
	struct frr_part *p = &rt->ws->parts[wk->dp.id];
	struct frr_rr_list list = { 0, p->n, p->n };
	struct frr_ctx c = {
		.rt = rt,
		.wk = wk,
		.snd = &wk->dp,
		.cache = &wk->dp.own,
		.rec = frr_rt_clock_rec(wk, clock),
		.part = wk->dp.id,
		.part_n = p->n,
		.clock = clock,
		.bound = frr_rt_read_bound(rt, clock),
	};
	double t0, t1;
	uint64_t items, f0;
	int nextra = 0, err;

	test_die(rt, wk, clock);
	watch_clock(rt, clock);
	if (rt->ws->rr && rt->ws->rr->clock_plan) {
		err =
		    frr_rt_hook(rt,
				rt->ws->rr->clock_plan(rt, rt->ws->rr_state,
						       wk->dp.id, clock, &list),
				"clock_plan", wk->dp.id, clock);
		if (err)
			return err;
	}
	t0 = frr_rt_clock_now();
	err =
	    frr_rt_progress_publish(rt, wk->dp.id, clock, list.next, list.end);
	if (!err)
		err = own_items(&c, &list, &nextra);
	t1 = frr_rt_clock_now();
	wk->loop_time = t1 - t0;
	c.rec->compute_s += t1 - t0;
	/* lb-bsp's speed: own and planned help items alike (final batch) */
	items = c.cache->items + c.rec->helped; /* the own batch not sent */
	c.rec->item_s = items ? (t1 - t0) / (double)items : 0;
	if (err)
		return err;
	if (nextra)
		wk->helped_clock = clock;
	injected_delay(rt, wk, clock);
	t1 = frr_rt_clock_now();
	err = frr_rt_wait_eval(rt, &(struct frr_ssp_waiter)WAITER(wk), clock);
	c.rec->wait_s += frr_rt_clock_now() - t1;
	/* the cut's item state: no shard applies this clock before the
	 * batch below leaves (or, late, every shard has: its tails are back) */
	if (!err && rt->ws->clock_items_done && !rt->ws->items_done_late)
		err = rt->ws->clock_items_done(wk, clock);
	f0 = frr_now_ns();
	if (!err)
		err = frr_rt_batch_send(&c, 1, nextra);
	frr_inst_flush(wk, clock, f0);
	list.next = list.end = list.n;
	if (!err)
		err = frr_rt_progress_publish(rt, wk->dp.id, clock, list.next,
					      list.end);
	if (!err && rt->ws->clock_items_done && rt->ws->items_done_late)
		err = rt->ws->clock_items_done(wk, clock);
	return err;
}

/* Caches (on this thread's NUMA node: first touch) and the app's scratch. */
static int worker_init(struct frr_worker *wk)
{
	struct frr_rt *rt = wk->rt;
	const struct frr_app_ops *app = rt->app;
	size_t ss = (app->scratch_size + 63) & ~(size_t)63;
	int err;

	err = frr_cache_init(rt, &wk->dp.own, frr_cache_ring(rt->eff_slack));
	if (!err)
		frr_direct_cache(rt, &wk->dp.own, wk->dp.local);
	if (!err && rt->rr_reassign)
		err = frr_cache_init(rt, &wk->dp.help, 0);
	wk->dp.bad_row = calloc(rt->tb->max_cols + 1, sizeof(float));
	if (ss)
		wk->scratch = aligned_alloc(64, ss);
	if (err || !wk->dp.bad_row || (ss && !wk->scratch))
		return frr_rt_fail(
		    rt, -ENOMEM,
		    "out of memory for worker %d's cache (tables "
		    "of %u columns at most)",
		    wk->dp.id, rt->tb->max_cols);
	if (ss)
		memset(wk->scratch, 0, ss);
	if (app->thread_init) {
		err = app->thread_init(rt->app_state, wk->scratch);
		if (err)
			return frr_rt_fail(rt, err,
					   "app %s: thread_init failed (%d)",
					   app->name, err);
		wk->started = 1;
	}
	return 0;
}

static int worker_loop(struct frr_worker *wk)
{
	struct frr_rt *rt = wk->rt;
	int last = -1, err = 0;

	for (int c = 0; c < frr_rt_cur_end(rt) && !err; c++) {
		struct frr_wclock *rec = frr_rt_clock_rec(wk, c);
		uint64_t t0;

		err = frr_inst_clock_begin(wk, c);
		if (!err && rt->ws->rr)
			err =
			    frr_rt_hook(rt,
					rt->ws->rr->clock_begin(
					    rt, rt->ws->rr_state, wk->dp.id, c),
					"clock_begin", wk->dp.id, c);
		t0 = frr_now_ns();
		if (!err)
			err = frr_rt_ssp_wait(
			    rt, &(struct frr_ssp_waiter)WAITER(wk), c);
		frr_inst_ssp_wait(wk, c, t0, frr_now_ns());
		rec->wait_s += (double)(frr_now_ns() - t0) * 1e-9;
		if (err || c >= frr_rt_cur_end(rt))
			break;
		err = one_clock(wk, c);
		if (!err && rt->ws->rr)
			err =
			    frr_rt_hook(rt,
					rt->ws->rr->clock_end(
					    rt, rt->ws->rr_state, wk->dp.id, c),
					"clock_end", wk->dp.id, c);
		frr_inst_clock_end(wk, c);
		last = c;
	}
	if (!err && rt->ws->rr)
		err = frr_rt_hook(rt,
				  rt->ws->rr->worker_exit(rt, rt->ws->rr_state,
							  wk->dp.id, last),
				  "worker_exit", wk->dp.id, last);
	if (err && rt->ws->rr && rt->ws->rr_state)
		rt->ws->rr->worker_failed(rt, rt->ws->rr_state, wk->dp.id);
	frr_inst_exit(wk);
	return err;
}

void *frr_rt_worker_main(void *arg)
{
	struct frr_worker *wk = arg;
	struct frr_rt *rt = wk->rt;
	char what[16];

	snprintf(what, sizeof(what), "w%d", wk->dp.id);
	frr_log_thread_start(rt->rank, what);
	pin_self(wk);
	if (!worker_init(wk))
		worker_loop(wk);
	/* the error, if any, is the job's (frr_rt_failed) */
	if (wk->started && rt->app->thread_fini)
		rt->app->thread_fini(rt->app_state, wk->scratch);
	wk->started = 0;
	return NULL;
}

int frr_rt_workers_start(struct frr_rt *rt)
{
	for (int t = 0; t < rt->T; t++) {
		struct frr_worker *wk = &rt->ws->wk[t];
		int err;

		wk->rt = rt;
		wk->dp.local = t;
		wk->dp.id = rt->rank * rt->T + t;
		wk->helped_clock = -1;
		for (int i = 0; i < FRR_RT_STAT_RING; i++)
			wk->rec[i].clock = -1;
		wk->dp.sent_seq = calloc((size_t)rt->P, sizeof(uint64_t));
		wk->dp.slot_seq =
		    calloc((size_t)rt->P * rt->tb->K, sizeof(uint64_t));
		wk->mbox_sent = calloc((size_t)rt->W, sizeof(uint64_t));
		wk->mbox_recv = calloc((size_t)rt->W, sizeof(uint64_t));
		if (!wk->dp.sent_seq || !wk->dp.slot_seq || !wk->mbox_sent ||
		    !wk->mbox_recv)
			return -ENOMEM;
		/* a lane's writes come from its own registered memory */
		err = frr_tp_mr_alloc(wk->dp.lane ? wk->dp.lane : rt->tp,
				      rt->tb->slot_max, FRR_TP_ACCESS_LOCAL,
				      &wk->dp.stage);
		if (err)
			return err;
	}
	for (int t = 0; t < rt->T; t++) {
		int err = pthread_create(&rt->ws->wk[t].thread, NULL,
					 frr_rt_worker_main, &rt->ws->wk[t]);

		if (err) {
			frr_rt_fail(rt, -err, "starting worker thread %d: %s",
				    t, strerror(err));
			return -err;
		}
		rt->ws->wk[t].thread_ok = 1;
	}
	return 0;
}

/* After the threads are joined (the stages go with the transport). */
void frr_rt_workers_fini(struct frr_rt *rt)
{
	for (int t = 0; rt->ws->wk && t < rt->T; t++) {
		struct frr_worker *wk = &rt->ws->wk[t];

		frr_cache_fini(&wk->dp.own);
		frr_cache_fini(&wk->dp.help);
		frr_rt_lbufs_fini(&wk->dp.lb);
		free(wk->dp.sent_seq);
		free(wk->dp.slot_seq);
		free(wk->mbox_sent);
		free(wk->mbox_recv);
		free(wk->dp.bad_row);
		free(wk->scratch);
	}
}
