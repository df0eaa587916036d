// SPDX-License-Identifier: MIT
/*
 * One simulated job: the worker loop of rt_worker.c in virtual time, per
 * mode.  Each clock of worker w, as the runtime does it:
 *
 *   clock_begin (rr: serve help of older clocks at once)
 *   SSP wait until clock c - slack - 1 is applied (rr: idle hook serves)
 *   items in chunks of n/64, progress word every n/16, rr progress check
 *   after every chunk; rr own_list_done (help, cancel, wait for helpers)
 *   flush the clock's batch, publish (c, n, n), clock_end
 *
 * A clock is applied when every worker finished it (backup: all but b),
 * visible everywhere apply_s + one latency later.  lb-bsp sizes each
 * worker's list of the next clock from its measured per-item time of its
 * last lb_history clocks; backup drops the rest of a clock's work of the
 * workers still in it when it closes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "flexrr/log.h"
#include "mode.h"
#include "sim_int.h"
#include "straggler.h"

/* the runtime's words for the modes both have (ssp.h) */
const char *const frr_sim_mode_names[FRR_SIM_NMODES] = {
	[FRR_SIM_BSP] = FRR_MODE_NAME_BSP,
	[FRR_SIM_SSP] = FRR_MODE_NAME_SSP,
	[FRR_SIM_RR] = FRR_MODE_NAME_RR,
	[FRR_SIM_FLEXRR] = FRR_MODE_NAME_FLEXRR,
	[FRR_SIM_LB_BSP] = "lb-bsp",
	[FRR_SIM_BACKUP] = FRR_MODE_NAME_BACKUP,
};

int frr_sim_mode_parse(const char *name)
{
	for (int m = 0; m < FRR_SIM_NMODES; m++)
		if (!strcmp(name, frr_sim_mode_names[m]))
			return m;
	return -1;
}

double frr_sim_factor(const struct frr_sim_cfg *cfg,
		      const struct frr_stragglers *s, int w, int c)
{
	double f = frr_stragglers_factor(s, w, c);

	for (int i = 0; s && i < s->nterms; i++)
		if (s->term[i].kind == FRR_STRAG_CONTENTION &&
		    s->term[i].worker == w)
			f += cfg->contention_factor - 1.0;
	return f;
}

static void fail(struct sim *s, const struct sim_worker *w, const char *what,
		 int err)
{
	if (!s->err)
		frr_err("simulate: worker %d clock %d: %s failed (%s)", w->w,
			w->clock, what, strerror(err < 0 ? -err : err));
	s->err = err < 0 ? err : -EPROTO;
}

/* ---- clocks applied ------------------------------------------------------ */

static int applied(const struct sim *s, int c)
{
	return c < 0 || s->closed_at[c] <= s->now;
}

/* lb-bsp: the plan of clock c + 1 from the workers' per-item times of
 * their last lb_history clocks (the runtime's rule and plan: straggler.h
 * frr_lb_shares, frr_lb_plan; rr/lb.c makes the same one at the clock's
 * start) */
static void lb_plan(struct sim *s, int c)
{
	struct sim_lb *lb = s->lb;
	int H = s->cfg->lb_history, W = s->W;

	if (H > c + 1)
		H = c + 1;
	for (int v = 0; v < W; v++) {
		lb->tsum[v] = 0;
		lb->n[v] = s->cfg->items;
		for (int k = 0; k < H; k++)
			lb->tsum[v] += s->ws[v].last_item_s[(c - k) % 64];
	}
	frr_lb_shares(W, H, lb->tsum, lb->speed, s->cfg->items * (uint64_t)W,
		      lb->share);
	frr_lb_plan(&lb->p);
	for (int i = 0; i < lb->p.ngifts; i++)
		lb->ready[i] = INFINITY;
}

static void clock_finished(struct sim *s, struct sim_worker *w, int c)
{
	uint64_t total = s->cfg->items * (uint64_t)s->W;

	if (++s->finished[c] != s->need)
		return;
	/* the servers apply it and push the rows (link off: one latency) */
	s->closed_at[c] = sim_push_clock(s, c, s->now + s->cfg->apply_s);
	if (s->mode != FRR_SIM_BACKUP && s->items_done[c] != total) {
		frr_err("simulate: clock %d closed with %llu of %llu items "
			"done: an item was lost or done twice (worker %d "
			"closed it); this is a flexrr bug",
			c, (unsigned long long)s->items_done[c],
			(unsigned long long)total, w->w);
		s->err = -EPROTO;
	}
	if (s->lb)
		lb_plan(s, c);
	for (int v = 0; v < s->W; v++) {
		struct sim_worker *x = &s->ws[v];

		if (x->wait == SIM_W_SSP && x->need_clock <= c)
			sim_wake(s, x, s->closed_at[c]);
	}
}

static void ssp_wait(struct sim *s, struct sim_worker *w, int c)
{
	int need = c - s->slack - 1, err;

	while (!applied(s, need) && !s->err) {
		if (s->reassign && w->mbox_n && w->mbox[0].arrive <= s->now) {
			err = rr_idle(&w->rw, c);
			if (err)
				return fail(s, w, "rr idle", err);
			continue;
		}
		w->need_clock = need;
		/* closed but not yet visible here: wake when it is */
		sim_block(s, SIM_W_SSP,
			  need >= 0 ? s->closed_at[need] : INFINITY);
	}
}

/* ---- one clock ----------------------------------------------------------- */

static int dropped_by_backup(struct sim *s, int c, struct frr_rr_list *l)
{
	if (s->mode != FRR_SIM_BACKUP || !applied(s, c))
		return 0;
	s->dropped += (double)(l->end - l->next);
	l->next = l->end;
	return 1;
}

/* w ran [a, b) of its own list: its batch carries those items' rows */
static void ran(struct sim_worker *w, uint64_t a, uint64_t b)
{
	if (b <= a)
		return;
	if (w->nran && w->ran[w->nran - 1][1] == a)
		w->ran[w->nran - 1][1] = b;
	else if (w->nran < SIM_RANGES) {
		w->ran[w->nran][0] = a;
		w->ran[w->nran++][1] = b;
	} else /* many pieces: one range over them (a few rows more) */
		w->ran[SIM_RANGES - 1][1] = b;
}

static void run_list(struct sim *s, struct sim_worker *w, int c,
		     struct frr_rr_list *l)
{
	/* without reassignment (or backup's cut) nobody looks at a worker
	 * between its chunks: one step for the whole list */
	uint64_t chunk = !s->reassign && s->mode != FRR_SIM_BACKUP ? l->n
			 : l->n / 64				   ? l->n / 64
								   : 1;
	uint64_t step = l->n / 16 ? l->n / 16 : 1, mark = l->next + step;
	int rep = s->cfg->rr_report;
	uint64_t extra =
	    rep > 16 ? (l->n + (uint64_t)rep - 1) / (uint64_t)rep : 0;
	uint64_t next_report = l->next, start = l->next;

	while (l->next < l->end && !s->err) {
		uint64_t b =
		    l->next + chunk < l->end ? l->next + chunk : l->end;
		int err;

		if (dropped_by_backup(s, c, l))
			break;
		sim_sleep_until(s, s->now + sim_cost(s, w, l->next, b, w));
		s->items_done[c] += b - l->next;
		l->next = b;
		if (l->next >= mark) {
			sim_publish(s, w, c, l->next, l->end);
			mark = l->next + step;
		}
		if (!s->reassign)
			continue;
		if (extra && l->next >= next_report) {
			sim_publish(s, w, c, l->next, l->end);
			next_report = l->next + extra;
		}
		ran(w, start, l->next);
		start = l->next;
		err = rr_progress_check(&w->rw, c, l);
		if (err)
			return fail(s, w, "rr progress check", err);
	}
	ran(w, start, l->next);
}

/* lb-bsp, at the clock's start: w's list ends where the plan's first
 * tail of it starts, and the tails' item states go to their helpers'
 * ranks (rr/lb.c lb_clock_plan); clock 0's plan is empty (no item time
 * measured yet) */
static void lb_give(struct sim *s, struct sim_worker *w, struct frr_rr_list *l)
{
	struct sim_lb *lb = s->lb;

	for (int i = 0; i < lb->p.ngifts; i++) {
		const struct frr_lb_gift *g = &lb->gifts[i];

		if (g->owner != w->w)
			continue;
		if (g->a < l->end)
			l->end = g->a;
		s->rr_tot[RR_C_ITEMS] += (double)(g->b - g->a);
		sim_state_ship(s, w, w->rank, g->helper / s->cfg->T,
			       g->b - g->a);
		lb->ready[i] = s->now;
	}
}

/* lb-bsp, after w's own list: the ranges the plan gave it, each once its
 * owner's states are here, each a batch of its own after their states go
 * back (rr/lb.c lb_own_list_done, frr_rt_run_range); the items run */
static uint64_t lb_help(struct sim *s, struct sim_worker *w, int c)
{
	struct sim_lb *lb = s->lb;
	uint64_t items = 0;

	for (int i = 0; i < lb->p.ngifts && !s->err; i++) {
		const struct frr_lb_gift *g = &lb->gifts[i];
		struct sim_worker *o = &s->ws[g->owner];
		uint64_t rg[1][2] = { { g->a, g->b } };

		if (g->helper != w->w)
			continue;
		/* the owner may start its clock a poll later than w */
		while (lb->ready[i] > s->now)
			sim_sleep_until(s, isfinite(lb->ready[i])
					       ? lb->ready[i]
					       : s->now + s->cfg->poll_s);
		sim_sleep_until(s, s->now + sim_cost(s, o, g->a, g->b, w));
		s->items_done[c] += g->b - g->a;
		items += g->b - g->a;
		sim_state_ship(s, w, w->rank, o->rank, g->b - g->a);
		sim_flush(s, w, g->owner, (const uint64_t(*)[2])rg, 1);
	}
	return items;
}

static void one_clock(struct sim *s, struct sim_worker *w, int c)
{
	uint64_t n = s->cfg->items, items;
	struct frr_rr_list l = { 0, n, n };
	double t0;
	int k;

	sim_fill_costs(s, w, c, n);
	s->work_s += w->list_s;
	w->nran = 0;
	if (s->lb)
		lb_give(s, w, &l);
	t0 = s->now;
	sim_publish(s, w, c, 0, l.end);
	for (;;) {
		double t1 = s->now, t2;

		run_list(s, w, c, &l);
		t2 = s->now;
		frr_trace_rec(w->tb, FRR_TR_WORK, sim_ns(t1), sim_ns(t2), c, -1,
			      0, l.end);
		if (w->factor > 1.0)
			frr_trace_rec(w->tb, FRR_TR_DELAY, sim_ns(t1),
				      sim_ns(t2), c, -1,
				      (uint64_t)(w->factor * 100), 0);
		if (!s->reassign || s->err)
			break;
		w->in_engine_wait = 1;
		w->polls = 0;
		w->cancel_sent = 0;
		k = rr_own_list_done(&w->rw, c, &l);
		w->in_engine_wait = 0;
		if (k < 0)
			return fail(s, w, "rr own_list_done", k);
		frr_trace_rec(w->tb, FRR_TR_HELP_WAIT, sim_ns(t2),
			      sim_ns(s->now), c, -1, 0, 0);
		if (l.next >= l.end)
			break;
	}
	/* lb-bsp's speed: own and planned help items alike (worker.c) */
	items = l.end + (s->lb ? lb_help(s, w, c) : 0);
	w->last_item_s[c % 64] = items ? (s->now - t0) / (double)items : 0;
	double tf = s->now;

	sim_flush(s, w, w->w, (const uint64_t(*)[2])w->ran, w->nran);
	w->flush_s = s->now - tf;
	sim_publish(s, w, c, n, n);
	clock_finished(s, w, c);
}

void sim_worker_body(struct sim *s, struct sim_worker *w)
{
	int last = -1, err;

	for (int c = 0; c < s->cfg->clocks && !s->err; c++) {
		double t0 = s->now, t1;

		w->clock = c;
		w->factor = frr_sim_factor(s->cfg, s->strag, w->w, c);
		if (s->reassign) {
			err = rr_clock_begin(&w->rw, c);
			if (err)
				return fail(s, w, "rr clock_begin", err);
		}
		t1 = s->now;
		ssp_wait(s, w, c);
		w->wait_s = s->now - t1;
		if (s->err)
			return;
		if (s->now > t1)
			frr_trace_rec(w->tb, FRR_TR_SSP_WAIT, sim_ns(t1),
				      sim_ns(s->now), c, -1, 0, 0);
		one_clock(s, w, c);
		if (s->reassign)
			rr_clock_end(&w->rw, c);
		/* --rr-link-weight: the next clock's offers see this one's */
		if (s->reassign)
			rr_weigh(&w->rw, w->wait_s + w->flush_s, s->now - t0);
		frr_trace_rec(w->tb, FRR_TR_CLOCK, sim_ns(t0), sim_ns(s->now),
			      c, -1, 0, 0);
		last = c;
	}
	if (s->reassign && !s->err) {
		w->in_engine_wait = 2;
		w->polls = 0;
		err = rr_worker_exit(&w->rw, last);
		w->in_engine_wait = 0;
		if (err)
			return fail(s, w, "rr worker_exit", err);
	}
	w->finish = s->now;
}

/* ---- the job ------------------------------------------------------------- */

void frr_sim_cfg_defaults(struct frr_sim_cfg *cfg)
{
	*cfg = (struct frr_sim_cfg){
		.P = 2,
		.T = 4,
		.clocks = 100,
		.slack = 1,
		.items = 1000,
		.seed = 7,
		.lat_s = 1.0e-6,
		.local_lat_s = 0.2e-6,
		.poll_s = 150e-6,
		.apply_s = 100e-6,
		.contention_factor = 2.0,
		.rr_group = 4,
		.rr_report = 16,
		.rr_threshold = 0.2,
		.rr_min_share = 0.05,
		.lb_history = FRR_LB_HISTORY_DEFAULT,
		.backups = -1,
	};
}

static void rr_setup(struct sim *s)
{
	const struct frr_sim_cfg *c = s->cfg;
	struct frr_rr_opts opts = {
		.group_size = c->rr_group,
		.threshold = c->rr_threshold,
		.min_share = c->rr_min_share,
		.link_weight = c->rr_link_weight,
		.max_helpers = c->rr_max_helpers,
	};

	/* waits are virtual: a real-time bound only guards bugs */
	s->rcfg = rr_config_from(&opts, c->P, c->T, s->slack, 3600 * 1000);
}

/* the engine's DoThis / BegunHelping / Cancelled / HelpCompleted, at the
 * virtual time they happen (obs_arg is the simulation: find the worker) */
static void on_event(void *arg, int kind, int peer, int clock, uint64_t a,
		     uint64_t b)
{
	struct sim *s = arg;
	uint64_t t = sim_ns(s->now);

	if (s->cur)
		frr_trace_rec(s->cur->tb, (enum frr_trace_kind)kind, t, t,
			      clock, peer, a, b);
}

static void on_count(void *arg, int clock, int counter, uint64_t v)
{
	struct sim *s = arg;

	(void)clock;
	if (counter >= 0 && counter < RR_C_NCOUNTERS)
		s->rr_tot[counter] += (double)v;
}

static void lb_free(struct sim_lb *lb)
{
	if (!lb)
		return;
	free(lb->grp);
	free(lb->tsum);
	free(lb->share);
	free(lb->gifts);
	free(lb->ready);
	free(lb);
}

static int lb_alloc(struct sim *s)
{
	int W = s->W, g = s->rcfg.group_size;
	struct sim_lb *lb = calloc(1, sizeof(*lb));

	if (!lb)
		return -ENOMEM;
	s->lb = lb;
	lb->grp = malloc((size_t)W * (size_t)(g + 1) * sizeof(int));
	lb->tsum = malloc(2 * (size_t)W * sizeof(double));
	lb->share = malloc(3 * (size_t)W * sizeof(uint64_t));
	lb->gifts = malloc((size_t)W * (size_t)g * sizeof(*lb->gifts));
	lb->ready = malloc((size_t)W * (size_t)g * sizeof(double));
	if (!lb->grp || !lb->tsum || !lb->share || !lb->gifts || !lb->ready)
		return -ENOMEM;
	lb->ng = lb->grp + (size_t)W * (size_t)g;
	lb->speed = lb->tsum + W;
	lb->n = lb->share + W;
	lb->load = lb->n + W;
	rr_helper_groups(s->cfg->P, s->cfg->T, g, lb->grp, lb->ng);
	lb->p = (struct frr_lb_plan){ W,	 g,	    lb->grp, lb->ng,
				      lb->speed, lb->share, lb->n,   lb->load,
				      lb->gifts, 0 };
	return 0;
}

static int sim_alloc(struct sim *s)
{
	int C = s->cfg->clocks, err;

	s->ws = calloc((size_t)s->W, sizeof(*s->ws));
	s->finished = calloc((size_t)C, sizeof(int));
	s->closed_at = malloc((size_t)C * sizeof(double));
	s->items_done = calloc((size_t)C, sizeof(uint64_t));
	if (!s->ws || !s->finished || !s->closed_at || !s->items_done)
		return -ENOMEM;
	if (s->mode == FRR_SIM_LB_BSP && (err = lb_alloc(s)))
		return err;
	for (int c = 0; c < C; c++)
		s->closed_at[c] = INFINITY;
	if (s->cfg->trace_path) {
		/* about a dozen records per worker and clock */
		uint32_t cap = C < 4096 ? (uint32_t)C * 16 + 64 : 65536;

		err = frr_trace_create(s->cfg->trace_path, 0, 1, 0, s->W, cap,
				       &s->trace);
		if (err)
			return err;
	}
	for (int v = 0; v < s->W; v++) {
		struct sim_worker *w = &s->ws[v];

		w->tb = frr_trace_buf(s->trace, v);

		w->w = v;
		w->rank = v / s->cfg->T;
		w->clock = -1;
		w->factor = 1.0;
		/* lb-bsp: the engine's groups and helpees (the rows its rank
		 * holds), not the engine */
		if (!s->reassign && !s->lb)
			continue;
		err =
		    rr_worker_init(&w->rw, &s->rcfg, &sim_env_ops, s, v, NULL);
		if (err)
			return err;
		w->rw_ok = 1;
		w->rw.on_count = on_count;
		if (s->trace)
			w->rw.on_event = on_event;
		w->rw.obs_arg = s;
	}
	/* after the engine's set-up: a rank holds its helpees' rows too */
	return sim_net_init(s);
}

static void sim_free(struct sim *s)
{
	sim_sched_fini(s);
	for (int v = 0; s->ws && v < s->W; v++) {
		if (s->ws[v].rw_ok)
			rr_worker_fini(&s->ws[v].rw);
		free(s->ws[v].mbox);
		free(s->ws[v].pre);
	}
	free(s->ws);
	free(s->finished);
	free(s->closed_at);
	free(s->items_done);
	lb_free(s->lb);
	frr_trace_destroy(s->trace);
	sim_net_fini(s);
}

/* The messages name quantities, not a program's flags: `flexrr simulate`
 * checks its own options' ranges (cli/cmd_simulate.c) before this. */
static int check_cfg(const struct frr_sim_cfg *c, enum frr_sim_mode mode)
{
	const char *why = NULL;

	if (c->P < 1 || c->T < 1 || (long)c->P * c->T > 1 << 20)
		why = "processes and threads must be at least 1 (at most 2^20 "
		      "workers)";
	else if (c->clocks < 1 || c->clocks > 1 << 24)
		why = "clocks must be 1..2^24";
	else if (c->items < 1 || c->items > FRR_SIM_MAX_ITEMS)
		why = "items per worker and clock must be 1..2^40 - 1";
	else if (c->slack < 0 || c->slack > FRR_RT_MAX_SLACK)
		why = "the slack must be 0..24";
	else if (c->lat_s < 0 || c->local_lat_s < 0 || c->poll_s < 0 ||
		 c->apply_s < 0)
		why = "latencies and periods must be >= 0";
	else if (c->contention_factor < 1)
		why = "the contention factor must be >= 1";
	else if (mode == FRR_SIM_LB_BSP &&
		 (c->lb_history < 1 || c->lb_history > FRR_LB_HISTORY_MAX))
		why = "lb-bsp's speed history must be 1..64 clocks";
	else if (mode == FRR_SIM_BACKUP && c->backups >= c->P * c->T)
		why = "the backup baseline must drop fewer workers per clock "
		      "than the job has";
	else if (!c->cost)
		why = "no item cost model";
	else if (c->link.tx_Bps < 0 || c->link.rx_Bps < 0 ||
		 c->link.msg_s < 0 || c->link.flush_s_B < 0 ||
		 c->link.apply_s_B < 0)
		why = "bandwidths, per-message and per-byte costs must be >= 0";
	if (why)
		frr_err("simulate: %s", why);
	return why ? -EINVAL : 0;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Mean total speed of the schedule: sum over workers of 1 / slow-down,
 * averaged over the clocks (nominal speed 1 per worker). */
static double capacity(const struct sim *s)
{
	double sum = 0;

	for (int c = 0; c < s->cfg->clocks; c++)
		for (int v = 0; v < s->W; v++)
			sum += 1.0 / frr_sim_factor(s->cfg, s->strag, v, c);
	return sum / s->cfg->clocks;
}

static void fill_result(const struct sim *s, struct frr_sim_result *res)
{
	int C = s->cfg->clocks;
	double end = s->closed_at[C - 1];

	for (int v = 0; v < s->W; v++)
		if (s->ws[v].finish > end)
			end = s->ws[v].finish;
	res->time_s = end;
	res->work_s = s->work_s;
	res->bound_s = s->work_s / capacity(s);
	res->dropped_items = s->dropped;
	res->total_items = (double)s->cfg->items * s->W * C;
	_Static_assert((int)FRR_SIM_OFFERS == (int)RR_C_OFFERS &&
			   (int)FRR_SIM_ACCEPTED == (int)RR_C_ACCEPTED &&
			   (int)FRR_SIM_CANCELLED == (int)RR_C_CANCELLED &&
			   (int)FRR_SIM_MOVED == (int)RR_C_ITEMS &&
			   (int)FRR_SIM_NRR == (int)RR_C_NCOUNTERS,
		       "the simulator's rr counters are the runtime's");
	for (int i = 0; i < FRR_SIM_NRR; i++)
		res->rr[i] = (uint64_t)s->rr_tot[i];
	res->events = s->events;
	res->switches = s->switches;
	for (int c = 0; c < C && res->clock_s; c++)
		res->clock_s[c] = s->closed_at[c];
	res->bytes_batch = s->bytes[0];
	res->bytes_push = s->bytes[1];
	res->bytes_ctl = s->bytes[2];
	res->bytes_state = s->bytes[3];
	res->msgs = s->msgs;
	for (int c = 0; c < C && res->comm_share; c++) {
		double d = s->closed_at[c] - (c ? s->closed_at[c - 1] : 0);
		double x = s->comm_w[c] / s->W + s->push_s[c];

		x = d > 0 ? x / d : 0;
		res->comm_share[c] = x < 1 ? x : 1;
		res->comm_mean += res->comm_share[c] / C;
		if (res->comm_share[c] > res->comm_max)
			res->comm_max = res->comm_share[c];
	}
}

int frr_sim_run(const struct frr_sim_cfg *cfg, enum frr_sim_mode mode,
		const struct frr_stragglers *strag, struct frr_sim_result *res)
{
	struct sim s = { .cfg = cfg, .strag = strag, .mode = mode };
	double w0 = wall_now(), c0 = cpu_now();
	int err = check_cfg(cfg, mode);

	memset(res, 0, sizeof(*res));
	if (err)
		return err;
	s.W = cfg->P * cfg->T;
	s.reassign = mode == FRR_SIM_RR || mode == FRR_SIM_FLEXRR;
	s.slack =
	    mode == FRR_SIM_SSP || mode == FRR_SIM_FLEXRR ? cfg->slack : 0;
	s.need = s.W;
	s.prog_shift = frr_prog_shift(cfg->items);
	if (mode == FRR_SIM_BACKUP)
		s.need -=
		    cfg->backups >= 0 ? cfg->backups : frr_backups_default(s.W);
	rr_setup(&s);
	res->clock_s = malloc((size_t)cfg->clocks * sizeof(double));
	res->comm_share = malloc((size_t)cfg->clocks * sizeof(double));
	err = res->clock_s && res->comm_share ? sim_alloc(&s) : -ENOMEM;
	if (!err)
		err = sim_sched_init(&s);
	if (!err)
		err = sim_sched_run(&s, sim_worker_body);
	if (!err) {
		for (int v = 0; v < s.W; v++)
			if (s.ws[v].mbox_max > FRR_RR_MBOX_DEPTH)
				frr_warn("simulate: worker %d had %d messages "
					 "queued (the runtime's rings hold "
					 "%d)",
					 v, s.ws[v].mbox_max,
					 FRR_RR_MBOX_DEPTH);
		fill_result(&s, res);
		if (s.trace)
			err = frr_trace_write(s.trace, 0, NULL);
	}
	if (err == -ENOMEM)
		frr_err("simulate: out of memory for %d workers", s.W);
	sim_free(&s);
	res->wall_s = wall_now() - w0;
	res->cpu_s = cpu_now() - c0;
	if (err)
		frr_sim_result_free(res);
	return err;
}

void frr_sim_result_free(struct frr_sim_result *r)
{
	free(r->clock_s);
	r->clock_s = NULL;
	free(r->comm_share);
	r->comm_share = NULL;
}
