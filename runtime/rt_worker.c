// SPDX-License-Identifier: MIT
/*
 * Worker threads: the loop over clocks and items, the SSP wait, update
 * batching and flushing, progress words, mailboxes and helping (the seam of
 * rr_hooks.h).  Hot path (frr_row_read/update): no locks, no allocation, no
 * syscalls.
 */
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "rt.h"

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static int cur_end(const struct frr_rt *rt)
{
	int end = frr_rt_stop_clock(rt);
	uint64_t stop = frr_tp_load_u64(ctl_u64(rt, rt->off_stop));

	/* remote-written: only ever an earlier end than ours */
	return stop && stop < (uint64_t)end ? (int)stop : end;
}

/* ---- update accumulators ------------------------------------------------ */
int frr_rt_delta_init(struct frr_rt *rt, struct frr_delta *d)
{
	for (int t = 0; t < rt->ntables; t++) {
		d->v[t] = calloc(rt->spec[t].rows * rt->spec[t].cols + 1,
				 sizeof(float));
		d->lo[t] = malloc((size_t)rt->P * sizeof(uint64_t));
		d->hi[t] = calloc((size_t)rt->P, sizeof(uint64_t));
		if (!d->v[t] || !d->lo[t] || !d->hi[t])
			return -ENOMEM;
		for (int o = 0; o < rt->P; o++)
			d->lo[t][o] = UINT64_MAX;
	}
	return 0;
}

void frr_rt_delta_fini(struct frr_delta *d)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(d->v[t]);
		free(d->lo[t]);
		free(d->hi[t]);
	}
}

static struct frr_wclock *help_rec(struct frr_worker *wk, int clock);

/* ---- worker-side API (flexrr.h) ----------------------------------------- */
const float *frr_row_read(struct frr_wctx *wc, int table, uint64_t row)
{
	struct frr_rt *rt = wc->rt;
	int o = (int)(row % (uint64_t)rt->P);
	int64_t dc;

	if ((unsigned)table >= (unsigned)rt->ntables ||
	    row >= rt->spec[table].rows)
		frr_rt_fatal(rt,
			     "app %s read row %llu of table %d: out of "
			     "range (an app bug)",
			     rt->app->name, (unsigned long long)row, table);
	/* the shard's done counter, loaded before the row: the row holds at
	 * least every update of clocks < done */
	dc = (int64_t)frr_rt_shard_done(rt, o) - 1;
	wc->rec->reads++;
	if (dc < wc->rec->min_data_clock)
		wc->rec->min_data_clock = dc;
	if (dc < wc->bound)
		wc->rec->stale_reads++;
	return (const float *)(rt->replp + rt->repl_off[table * rt->P + o] +
			       (row / (uint64_t)rt->P) * rt->spec[table].cols *
				   sizeof(float));
}

static inline float *delta_row(struct frr_wctx *wc, int table, uint64_t row)
{
	struct frr_rt *rt = wc->rt;
	struct frr_delta *d = wc->d;
	int o;
	uint64_t li;

	if ((unsigned)table >= (unsigned)rt->ntables ||
	    row >= rt->spec[table].rows)
		frr_rt_fatal(rt,
			     "app %s updated row %llu of table %d: out of "
			     "range (an app bug)",
			     rt->app->name, (unsigned long long)row, table);
	o = (int)(row % (uint64_t)rt->P);
	li = row / (uint64_t)rt->P;
	if (li < d->lo[table][o])
		d->lo[table][o] = li;
	if (li + 1 > d->hi[table][o])
		d->hi[table][o] = li + 1;
	d->updates++;
	return d->v[table] + row * rt->spec[table].cols;
}

void frr_row_update(struct frr_wctx *wc, int table, uint64_t row,
		    const float *delta)
{
	float *r = delta_row(wc, table, row);
	uint32_t cols = wc->rt->spec[table].cols;

	for (uint32_t j = 0; j < cols; j++)
		r[j] += delta[j];
}

void frr_cell_update(struct frr_wctx *wc, int table, uint64_t row, uint32_t col,
		     float delta)
{
	float *r = delta_row(wc, table, row);

	if (col >= wc->rt->spec[table].cols)
		frr_rt_fatal(wc->rt,
			     "app %s updated column %u of table %d "
			     "(%u columns): an app bug",
			     wc->rt->app->name, col, table,
			     wc->rt->spec[table].cols);
	r[col] += delta;
}

void frr_stat_add(struct frr_wctx *wc, int idx, double v)
{
	if (idx >= 0 && idx < FRR_MAX_STATS)
		wc->rec->stats[idx] += v;
}

void *frr_item_state(struct frr_wctx *wc, uint64_t item)
{
	struct frr_part *p = &wc->rt->parts[wc->owner];

	if (!p->state || item >= p->n)
		return NULL;
	if (p->state_off[item + 1] == p->state_off[item])
		return NULL;
	return p->state + p->state_off[item];
}

uint64_t frr_item_rng(struct frr_wctx *wc, uint64_t item)
{
	struct frr_rng r;
	uint64_t s = wc->rt->job.seed ^ 0x6a09e667f3bcc909ull;

	s = s * 0x9e3779b97f4a7c15ull + (uint64_t)wc->owner;
	s = s * 0x9e3779b97f4a7c15ull + (uint64_t)wc->clock;
	s = s * 0x9e3779b97f4a7c15ull + item;
	frr_rng_seed(&r, s);
	return frr_rng_next(&r);
}

int frr_wctx_worker(const struct frr_wctx *wc)
{
	return wc->wk->id;
}

const struct frr_job_info *frr_wctx_job(const struct frr_wctx *wc)
{
	return &wc->rt->job;
}

/* ---- progress ------------------------------------------------------------ */
int frr_rt_progress_publish(struct frr_rt *rt, int w, int clock,
			    const struct frr_rr_list *list)
{
	uint64_t done = list->next, total = list->end;
	uint64_t v = frr_prog_pack(clock, done >> rt->prog_shift,
				   total >> rt->prog_shift);
	size_t off = rt->off_prog + (size_t)w * 64;
	int err = 0;

	atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), v,
			      memory_order_release);
	pthread_mutex_lock(&rt->tp_lock);
	int bad = -1;

	for (int r = 0; r < rt->P && !err; r++)
		if (r != rt->rank) {
			err = frr_tp_write_u64(rt->eps[r], rt->rctl[r], off, v,
					       0, 0);
			bad = r;
		}
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		frr_rt_peer_fatal(rt, bad, "publishing progress to it failed");
	return 0;
}

/* ---- batches ------------------------------------------------------------- */
static void wait_ack(struct frr_rt *rt, struct frr_worker *wk, int o,
		     uint64_t seq)
{
	int k = (int)((seq - 1) % (uint64_t)rt->K);
	size_t off =
	    rt->off_ack + (((size_t)o * rt->T + wk->local) * rt->K + k) * 8;
	struct frr_stall st;

	if (seq <= (uint64_t)rt->K)
		return;
	frr_rt_stall_init(rt, &st);
	while (frr_tp_load_u64(ctl_u64(rt, off)) < seq - rt->K) {
		if (frr_rt_stalled(rt, &st))
			frr_rt_fatal(rt,
				     "worker %d waited %d ms for rank %d to "
				     "take its update batches: rank %d hangs",
				     wk->id, rt->o->timeout_ms, o, o);
		nap_us(50);
	}
}

int frr_rt_batch_send(struct frr_rt *rt, struct frr_worker *wk,
		      struct frr_delta *d, int owner, int clock, int final,
		      int nextra, struct frr_wclock *rec)
{
	/* rec belongs to the server once the local slot is published: every
	 * write to it happens before that release store */
	_Atomic uint64_t *local_seq = NULL;
	uint64_t lseq = 0, bytes = 0;
	double t0 = frr_rt_clock_now();

	for (int o = 0; o < rt->P; o++) {
		uint64_t seq = ++wk->sent_seq[o];
		int k = (int)((seq - 1) % (uint64_t)rt->K);
		size_t sbytes = rt->slot_bytes[o];
		size_t soff = ((size_t)wk->id * rt->K + k) * sbytes;
		uint8_t *dst = o == rt->rank ? rt->inboxp + soff
					     : frr_tp_mr_ptr(wk->stage);
		struct frr_slot_hdr *h = (struct frr_slot_hdr *)dst;
		int err = 0;

		wait_ack(rt, wk, o, seq);
		if (o != rt->rank)
			h->seq = 0; /* the counter write publishes it */
		h->sender = wk->id;
		h->owner = owner;
		h->clock = clock;
		h->final = final;
		h->nextra = nextra;
		h->ntables = rt->ntables;
		for (int t = 0; t < rt->ntables; t++) {
			uint32_t cols = rt->spec[t].cols;
			size_t rb = cols * sizeof(float);
			uint64_t lo = d->lo[t][o], hi = d->hi[t][o];
			uint8_t *pay =
			    dst + rt->pay_off[o * FRR_MAX_TABLES + t];

			if (hi <= lo)
				lo = hi = 0;
			h->lo[t] = lo;
			h->hi[t] = hi;
			for (uint64_t li = lo; li < hi; li++) {
				float *src = d->v[t] + (li * rt->P + o) * cols;

				memcpy(pay + li * rb, src, rb);
				memset(src, 0, rb);
			}
			bytes += (hi - lo) * rb;
			d->lo[t][o] = UINT64_MAX;
			d->hi[t][o] = 0;
		}
		if (o == rt->rank) {
			local_seq = (_Atomic uint64_t *)&h->seq;
			lseq = seq;
			continue;
		}
		pthread_mutex_lock(&rt->tp_lock);
		for (int t = 0; t < rt->ntables && !err; t++) {
			size_t rb = rt->spec[t].cols * sizeof(float);
			size_t po = rt->pay_off[o * FRR_MAX_TABLES + t];

			if (h->hi[t] > h->lo[t])
				err = frr_tp_write(
				    rt->eps[o], wk->stage, po + h->lo[t] * rb,
				    rt->rinbox[o], soff + po + h->lo[t] * rb,
				    (h->hi[t] - h->lo[t]) * rb, 0, 0);
		}
		if (!err)
			err =
			    frr_tp_write(rt->eps[o], wk->stage, 0,
					 rt->rinbox[o], soff, sizeof(*h), 0, 0);
		if (!err)
			err = frr_tp_write_u64(rt->eps[o], rt->rinbox[o], soff,
					       seq, 0, 0);
		if (!err)
			err = frr_tp_flush(rt->eps[o], rt->flush_ms);
		pthread_mutex_unlock(&rt->tp_lock);
		if (err)
			frr_rt_peer_fatal(rt, o,
					  "sending updates to it failed");
	}
	rec->updates += d->updates;
	rec->bytes += bytes;
	rec->flush_s += frr_rt_clock_now() - t0;
	d->updates = 0;
	atomic_store_explicit(local_seq, lseq, memory_order_release);
	return 0;
}

/* ---- mailboxes ----------------------------------------------------------- */
int frr_rt_msg_send(struct frr_rt *rt, int from, int to,
		    const struct frr_rr_msg *m)
{
	int fl = from - rt->rank * rt->T, tr;
	struct frr_worker *wk;
	uint64_t seq, acked;
	size_t slot;
	struct frr_rr_msg *dst;
	int err;

	if (fl < 0 || fl >= rt->T || to < 0 || to >= rt->W)
		return -EINVAL;
	wk = &rt->wk[fl];
	tr = to / rt->T;
	acked = frr_tp_load_u64(
	    ctl_u64(rt, rt->off_mack + ((size_t)fl * rt->W + to) * 8));
	if (wk->mbox_sent[to] - acked >= FRR_RR_MBOX_DEPTH)
		return -EAGAIN;
	seq = ++wk->mbox_sent[to];
	slot = rt->off_mbox +
	       (((size_t)(to % rt->T) * rt->W + from) * FRR_RR_MBOX_DEPTH +
		(seq - 1) % FRR_RR_MBOX_DEPTH) *
		   64;
	if (tr == rt->rank) {
		dst = (struct frr_rr_msg *)(rt->ctlp + slot);
		memcpy(dst, m, offsetof(struct frr_rr_msg, seq));
		dst->from = from;
		dst->to = to;
		atomic_store_explicit((_Atomic uint64_t *)&dst->seq, seq,
				      memory_order_release);
		return 0;
	}
	dst =
	    (struct frr_rr_msg *)(rt->ctlp + rt->off_mstage + (size_t)fl * 64);
	*dst = *m;
	dst->from = from;
	dst->to = to;
	dst->seq = 0;
	pthread_mutex_lock(&rt->tp_lock);
	err =
	    frr_tp_write(rt->eps[tr], rt->ctl, rt->off_mstage + (size_t)fl * 64,
			 rt->rctl[tr], slot, 64, 0, 0);
	if (!err)
		err = frr_tp_write_u64(rt->eps[tr], rt->rctl[tr],
				       slot + offsetof(struct frr_rr_msg, seq),
				       seq, 0, 0);
	if (!err)
		err = frr_tp_flush(rt->eps[tr], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		frr_rt_peer_fatal(rt, tr, "sending a message to it failed");
	return 0;
}

static void mbox_ack(struct frr_rt *rt, int w, int from, uint64_t n)
{
	int fr = from / rt->T;
	size_t off = rt->off_mack + ((size_t)(from % rt->T) * rt->W + w) * 8;

	if (fr == rt->rank) {
		atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), n,
				      memory_order_release);
		return;
	}
	pthread_mutex_lock(&rt->tp_lock);
	int err = frr_tp_write_u64(rt->eps[fr], rt->rctl[fr], off, n, 0, 0);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		frr_rt_peer_fatal(rt, fr, "acknowledging its messages failed");
}

int frr_rt_msg_recv(struct frr_rt *rt, int w, struct frr_rr_msg *m,
		    int timeout_ms)
{
	int wl = w - rt->rank * rt->T;
	struct frr_worker *wk;
	double t0 = frr_rt_clock_now();

	if (wl < 0 || wl >= rt->T)
		return -EINVAL;
	wk = &rt->wk[wl];
	for (;;) {
		for (int v = 0; v < rt->W; v++) {
			uint64_t want = wk->mbox_recv[v] + 1;
			struct frr_rr_msg *s =
			    (struct frr_rr_msg *)(rt->ctlp + rt->off_mbox +
						  (((size_t)wl * rt->W + v) *
						       FRR_RR_MBOX_DEPTH +
						   (want - 1) %
						       FRR_RR_MBOX_DEPTH) *
						      64);

			if (frr_tp_load_u64(&s->seq) != want)
				continue;
			*m = *s;
			m->from = v; /* never trust a remote-written id */
			m->to = w;
			wk->mbox_recv[v] = want;
			if (want % (FRR_RR_MBOX_DEPTH / 4) == 0)
				mbox_ack(rt, w, v, want);
			return 1;
		}
		if ((frr_rt_clock_now() - t0) * 1000 >= timeout_ms)
			return 0;
		nap_us(20);
	}
}

/* ---- helping ------------------------------------------------------------- */
static struct frr_wclock *help_rec(struct frr_worker *wk, int clock)
{
	/* stats of help given for clock c are kept apart from the helper's
	 * own clocks (it may be behind or ahead of c) */
	struct frr_wclock *r = &wk->rec[clock % FRR_RT_STAT_RING];

	if (r->clock != clock) {
		memset(r, 0, sizeof(*r));
		r->clock = clock;
		r->min_data_clock = INT64_MAX;
	}
	return r;
}

int frr_rt_run_range(struct frr_rt *rt, int helper, int owner, int clock,
		     uint64_t a, uint64_t b)
{
	int hl = helper - rt->rank * rt->T;
	struct frr_worker *wk;
	struct frr_wctx wc;
	int err;

	if (hl < 0 || hl >= rt->T || owner < 0 || owner >= rt->W ||
	    !rt->parts[owner].loaded || a > b || b > rt->parts[owner].n ||
	    !rt->wk[hl].help.v[0])
		return -EINVAL;
	wk = &rt->wk[hl];
	wc = (struct frr_wctx){
		.rt = rt,
		.wk = wk,
		.owner = owner,
		.clock = clock,
		.d = &wk->help,
		.rec = help_rec(wk, clock),
		.bound = rt->o->mode == FRR_MODE_ASYNC
			     ? INT64_MIN
			     : (int64_t)clock - rt->o->slack - 1,
	};
	if (b > a) {
		err = rt->app->process(rt->app_state, &wc, owner, clock, a, b);
		if (err)
			frr_rt_fatal(rt,
				     "app %s: process(owner %d, clock %d, "
				     "[%llu, %llu)) failed (%d)",
				     rt->app->name, owner, clock,
				     (unsigned long long)a,
				     (unsigned long long)b, err);
	}
	return frr_rt_batch_send(rt, wk, &wk->help, owner, clock, 0, 0, wc.rec);
}

/* ---- the loop ------------------------------------------------------------ */
/* Pin to the k-th CPU this process may use (cgroups and taskset respected),
 * k = node-local rank * T + thread. */
static void pin_self(struct frr_worker *wk)
{
	struct frr_rt *rt = wk->rt;
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
	int local = lr ? atoi(lr) : rt->rank, n, k, cpu = -1;
	cpu_set_t allowed, set;

	if (!rt->o->pin || sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	n = CPU_COUNT(&allowed);
	if (n < 1)
		return;
	k = (local * rt->T + wk->local) % n;
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &allowed) && k-- == 0)
			cpu = c;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		frr_dbg("pinning worker %d to CPU %d failed; running unpinned",
			wk->id, cpu);
	if (numa_available() >= 0)
		numa_set_localalloc();
}

static void hook(struct frr_rt *rt, int err, const char *name, int w, int c)
{
	if (err < 0)
		frr_rt_fatal(rt, "rr hook %s(worker %d, clock %d) failed (%d)",
			     name, w, c, err);
}

static void ssp_wait(struct frr_rt *rt, struct frr_worker *wk, int c)
{
	int64_t need = (int64_t)c - rt->eff_slack;
	struct frr_stall st;

	if (need <= 0 || rt->test_break_ssp)
		return;
	frr_rt_stall_init(rt, &st);
	for (;;) {
		if (frr_rt_all_done_ge(rt, (uint64_t)need) || c >= cur_end(rt))
			return;
		if (rt->rr && rt->rr->idle)
			hook(rt, rt->rr->idle(rt, rt->rr_state, wk->id, c),
			     "idle", wk->id, c);
		if (frr_rt_stalled(rt, &st))
			frr_rt_fatal(rt,
				     "worker %d waited %d ms to start clock %d "
				     "(needs clock %lld applied everywhere): "
				     "a worker hangs; raise --timeout if "
				     "clocks are that long",
				     wk->id, rt->o->timeout_ms, c,
				     (long long)need - 1);
		nap_us(100);
	}
}

/*
 * Before its clock-c batch leaves, this rank must have evaluated clock
 * c - s - 1.  In BSP (s = 0) that keeps clock c's updates out of the
 * replicas while clock_local(c - 1) reads them: a deterministic objective.
 * With slack it is only back-pressure on a slow evaluation (it keeps the
 * per-clock records ring from being overtaken), never a tighter bound
 * than SSP's own.
 */
static void wait_eval(struct frr_rt *rt, struct frr_worker *wk, int c)
{
	int need = c - rt->eff_slack;
	struct frr_stall st;

	frr_rt_stall_init(rt, &st);
	while (atomic_load_explicit(&rt->eval_done, memory_order_acquire) <
	       need) {
		if (frr_rt_stalled(rt, &st))
			frr_rt_fatal(rt,
				     "worker %d waited %d ms for the "
				     "evaluation of clock %d",
				     wk->id, rt->o->timeout_ms, need - 1);
		/* rr: a helpee may wait on us (CancelHelp) for that clock */
		if (rt->rr && rt->rr->idle)
			hook(rt, rt->rr->idle(rt, rt->rr_state, wk->id, c),
			     "idle", wk->id, c);
		nap_us(50);
	}
}

static void run_list(struct frr_rt *rt, struct frr_worker *wk, int c,
		     struct frr_rr_list *list, struct frr_wctx *wc)
{
	uint64_t chunk = list->n / 64 ? list->n / 64 : 1;
	uint64_t step = list->n / 16 ? list->n / 16 : 1;
	uint64_t mark = list->next + step;

	while (list->next < list->end) {
		uint64_t b = list->next + chunk;
		int err;

		if (b > list->end)
			b = list->end;
		err = rt->app->process(rt->app_state, wc, wk->id, c, list->next,
				       b);
		if (err)
			frr_rt_fatal(rt,
				     "app %s: process(worker %d, clock %d) "
				     "failed (%d)",
				     rt->app->name, wk->id, c, err);
		list->next = b;
		if (list->next >= mark) {
			frr_rt_progress_publish(rt, wk->id, c, list);
			mark = list->next + step;
		}
		if (rt->rr && rt->rr->progress_check) {
			hook(rt,
			     rt->rr->progress_check(rt, rt->rr_state, wk->id, c,
						    list),
			     "progress_check", wk->id, c);
			if (list->end > list->n || list->end < list->next)
				frr_rt_fatal(rt,
					     "rr moved worker %d's list "
					     "end out of [next, n]",
					     wk->id);
		}
	}
}

static void injected_delay(struct frr_rt *rt, struct frr_worker *wk, int c)
{
	const struct frr_run_opts *o = rt->o;
	int victim;

	if (o->delay_every <= 0 || (c + 1) % o->delay_every)
		return;
	/* W < 0: a different worker each time (transient stragglers) */
	victim = o->delay_worker >= 0 ? o->delay_worker
				      : ((c + 1) / o->delay_every - 1) % rt->W;
	if (wk->id == victim) {
		double s = o->delay_factor * wk->loop_time;
		struct timespec ts = { (time_t)s,
				       (long)((s - (double)(time_t)s) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

static void one_clock(struct frr_rt *rt, struct frr_worker *wk, int c)
{
	struct frr_wclock *rec = &wk->rec[c % FRR_RT_STAT_RING];
	struct frr_rr_list list = { 0, rt->parts[wk->id].n,
				    rt->parts[wk->id].n };
	struct frr_wctx wc = {
		.rt = rt,
		.wk = wk,
		.owner = wk->id,
		.clock = c,
		.d = &wk->own,
		.rec = rec,
		.bound = rt->o->mode == FRR_MODE_ASYNC
			     ? INT64_MIN
			     : (int64_t)c - rt->o->slack - 1,
	};
	double t0, t1, t2;
	int nextra = 0;

	t0 = frr_rt_clock_now();
	frr_rt_progress_publish(rt, wk->id, c, &list);
	for (;;) {
		int k;

		run_list(rt, wk, c, &list, &wc);
		if (!rt->rr || !rt->rr->own_list_done)
			break;
		k = rt->rr->own_list_done(rt, rt->rr_state, wk->id, c, &list);
		hook(rt, k, "own_list_done", wk->id, c);
		if (list.next >= list.end) {
			nextra = k;
			break;
		}
	}
	t1 = frr_rt_clock_now();
	wk->loop_time = t1 - t0;
	rec->compute_s += t1 - t0;
	injected_delay(rt, wk, c);
	t2 = frr_rt_clock_now();
	wait_eval(rt, wk, c);
	rec->wait_s += frr_rt_clock_now() - t2;
	frr_rt_batch_send(rt, wk, &wk->own, wk->id, c, 1, nextra, rec);
	list.next = list.end = list.n;
	frr_rt_progress_publish(rt, wk->id, c, &list);
}

void *frr_rt_worker_main(void *arg)
{
	struct frr_worker *wk = arg;
	struct frr_rt *rt = wk->rt;

	pin_self(wk);
	if (frr_rt_delta_init(rt, &wk->own) ||
	    (rt->rr_reassign && frr_rt_delta_init(rt, &wk->help)))
		frr_rt_fatal(rt,
			     "out of memory for worker %d's update "
			     "buffers",
			     wk->id);
	int last = -1;

	for (int c = 0; c < cur_end(rt); c++) {
		struct frr_wclock *rec = &wk->rec[c % FRR_RT_STAT_RING];
		double t0;

		/* help given for clock c before we got there stays */
		help_rec(wk, c);
		if (rt->rr && rt->rr->clock_begin)
			hook(rt,
			     rt->rr->clock_begin(rt, rt->rr_state, wk->id, c),
			     "clock_begin", wk->id, c);
		t0 = frr_rt_clock_now();
		ssp_wait(rt, wk, c);
		rec->wait_s += frr_rt_clock_now() - t0;
		if (c >= cur_end(rt))
			break;
		one_clock(rt, wk, c);
		if (rt->rr && rt->rr->clock_end)
			hook(rt, rt->rr->clock_end(rt, rt->rr_state, wk->id, c),
			     "clock_end", wk->id, c);
		last = c;
	}
	if (FRR_RR_HAS(rt->rr, worker_exit))
		hook(rt, rt->rr->worker_exit(rt, rt->rr_state, wk->id, last),
		     "worker_exit", wk->id, last);
	frr_rt_delta_fini(&wk->own);
	frr_rt_delta_fini(&wk->help);
	return NULL;
}
