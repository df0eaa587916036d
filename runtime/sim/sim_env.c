// SPDX-License-Identifier: MIT
/*
 * The RapidReassignment engine's environment in virtual time (the seam of
 * rr_proto.h, struct rr_env_ops), as rr.c binds it to the real runtime:
 *
 *   send       the message lands in the target's mailbox `latency` later;
 *              a send to another process also costs the sender one round
 *              trip (the runtime flushes the write before returning)
 *   recv       returns what has landed; see env_recv for when it waits
 *   progress   the newest word of v that has reached the reader's process
 *   publish    a new word, visible at once locally, `latency` later remotely
 *   run_range  the helper spends the items' cost at ITS OWN slow-down (the
 *              straggler factor of the clock it is in), then flushes the
 *              batch to every shard
 *   state_push ships the range's item state (lda: 2 bytes a token) to
 *              the helper's process, and run_range back, when remote
 *
 * With a link (sim_net.c) sends, flushes and progress words take the
 * NIC's time for their bytes, sized from the table model (sim_model.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "sim_int.h"

double sim_lat(const struct sim *s, int from, int to)
{
	int T = s->cfg->T;

	return from / T == to / T ? s->cfg->local_lat_s : s->cfg->lat_s;
}

double sim_flush_s(const struct sim *s)
{
	/* one write + flush (a round trip) per remote shard, in turn */
	return (s->cfg->P - 1) * 2.0 * s->cfg->lat_s;
}

/* ---- item costs ---------------------------------------------------------- */

static double draw_cost(const struct frr_sim_cost *c, struct frr_rng *r)
{
	double u, mu;

	switch (c->kind) {
	case FRR_SIM_COST_UNIFORM:
		return c->a + (c->b - c->a) * frr_rng_uniform(r);
	case FRR_SIM_COST_EXP:
		u = frr_rng_uniform(r);
		return -c->a * log(1.0 - u);
	case FRR_SIM_COST_LOGNORMAL:
		mu = log(c->a) - c->b * c->b / 2;
		return exp(mu + c->b * frr_rng_normal(r));
	default:
		return c->a;
	}
}

/* Per-item cost of worker w in clock c for the tabulated kinds. */
static double table_cost(const struct frr_sim_cost *c, int w, int clock)
{
	int cw = w % c->nw;

	if (c->kind == FRR_SIM_COST_METRICS_MEAN)
		return c->per[cw];
	return c->per[cw * c->nc + clock % c->nc];
}

/* Costs of the n items of w's list in this clock, as prefix sums: drawn
 * once per (seed, worker, clock), whoever runs them. */
void sim_fill_costs(struct sim *s, struct sim_worker *w, int clock, uint64_t n)
{
	const struct frr_sim_cost *c = s->cfg->cost;
	struct frr_rng r;
	double x = 0;

	w->n = n;
	/* one cost for the whole list: no table (1,024 lists of 1,000
	 * items would not stay in the cache) */
	if (c->kind == FRR_SIM_COST_CONST || c->kind >= FRR_SIM_COST_METRICS) {
		w->each = c->kind == FRR_SIM_COST_CONST
			      ? c->a
			      : table_cost(c, w->w, clock);
		w->list_s = w->each * (double)n;
		return;
	}
	w->each = -1;
	if (n + 1 > w->cap) {
		double *p = realloc(w->pre, (size_t)(n + 1) * sizeof(*p));

		if (!p) {
			s->err = -ENOMEM;
			w->n = 0;
			w->list_s = 0;
			return;
		}
		w->pre = p;
		w->cap = n + 1;
	}
	w->pre[0] = 0;
	frr_rng_seed(&r, s->cfg->seed * 0x9e3779b97f4a7c15ull ^
			     ((uint64_t)w->w << 32) ^ (uint64_t)clock);
	for (uint64_t i = 0; i < n; i++) {
		x += draw_cost(c, &r);
		w->pre[i + 1] = x;
	}
	w->list_s = x;
}

double sim_cost(const struct sim *s, const struct sim_worker *owner, uint64_t a,
		uint64_t b, const struct sim_worker *by)
{
	(void)s;
	if (b <= a || b > owner->n)
		return 0;
	if (owner->each >= 0)
		return owner->each * (double)(b - a) * by->factor;
	return (owner->pre[b] - owner->pre[a]) * by->factor;
}

/* ---- progress words ------------------------------------------------------ */

void sim_publish(struct sim *s, struct sim_worker *w, int clock, uint64_t done,
		 uint64_t total)
{
	struct sim_prog *h = &w->hist[w->nhist++ % SIM_PROG_HIST];
	int last = s->cfg->clocks - 1;

	h->t = s->now;
	h->t_remote = s->now + s->cfg->lat_s;
	h->p = (struct frr_progress){ clock, done, total };
	s->actions++;
	/* link on: the writes to the ranks that read it (may wait for the
	 * NIC; h stays the newest word: nothing else publishes for w) */
	h->t_remote = sim_progress_send(s, w);
	/* helpers in worker_exit wait for their helpees' final words */
	if (clock > last || (clock == last && done >= total && total >= w->n))
		for (int i = 0; i < w->rw.nhelpers && s->reassign; i++) {
			struct sim_worker *h2 = &s->ws[w->rw.helpers[i]];

			if (h2->wait == SIM_W_EXIT)
				sim_wake(s, h2,
					 h2->rank == w->rank
					     ? s->now + s->cfg->local_lat_s
					     : h->t_remote);
		}
}

static struct frr_progress env_progress(void *env, int v)
{
	struct sim *s = env;
	const struct sim_worker *w = &s->ws[v];
	int reader = s->cur ? s->cur->w : v;
	int local = v / s->cfg->T == reader / s->cfg->T;
	unsigned k = w->nhist < SIM_PROG_HIST ? w->nhist : SIM_PROG_HIST;

	/* newest word that has reached the reader */
	for (unsigned i = 0; i < k; i++) {
		const struct sim_prog *h =
		    &w->hist[(w->nhist - 1 - i) % SIM_PROG_HIST];

		if ((local ? h->t + s->cfg->local_lat_s : h->t_remote) <=
		    s->now) {
			/* as the runtime's word carries it: in units of
			 * 2^shift items where a list is over 2^22 */
			struct frr_progress p = h->p;
			uint64_t n = s->cfg->items;

			p.done = frr_prog_items(p.done >> s->prog_shift, n,
						s->prog_shift);
			p.total = frr_prog_items(p.total >> s->prog_shift, n,
						 s->prog_shift);
			return p;
		}
	}
	return (struct frr_progress){ -1, 0, 0 };
}

static int env_publish(void *env, int w, int clock,
		       const struct frr_rr_list *list)
{
	struct sim *s = env;

	sim_publish(s, &s->ws[w], clock, list->next, list->end);
	s->ws[w].polls = 0;
	return 0;
}

/* ---- mailboxes ----------------------------------------------------------- */

static int env_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	struct sim *s = env;
	struct sim_worker *src = &s->ws[from], *dst = &s->ws[to];
	double lat = sim_lat(s, from, to), t0 = s->now, done = 0;
	struct sim_msg x = { s->now + lat, s->msg_seq++, *m };
	int i, remote = src->rank != dst->rank;

	if (remote) {
		s->bytes[2] += sizeof(*m);
		s->msgs++;
	}
	/* link on: a 64-byte write into its ring, flushed */
	if (remote && s->cfg->link.on)
		done = sim_ctl_send(s, src->rank, dst->rank, s->now, sizeof(*m),
				    1, 1, &x.arrive);

	if (dst->mbox_n == dst->mbox_cap) {
		int cap = dst->mbox_cap ? dst->mbox_cap * 2 : 8;
		struct sim_msg *b =
		    realloc(dst->mbox, (size_t)cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		dst->mbox = b;
		dst->mbox_cap = cap;
	}
	x.m.from = from;
	x.m.to = to;
	/* keep (arrive, seq) order: new messages land last but for
	 * different latencies */
	for (i = dst->mbox_n; i > 0 && dst->mbox[i - 1].arrive > x.arrive; i--)
		dst->mbox[i] = dst->mbox[i - 1];
	dst->mbox[i] = x;
	dst->mbox_n++;
	if (dst->mbox_n > dst->mbox_max)
		dst->mbox_max = dst->mbox_n;
	s->actions++;
	src->polls = 0;
	src->cancel_sent = m->type == RR_MSG_CANCEL;
	sim_wake(s, dst, x.arrive);
	/* a remote write is flushed before the send returns */
	if (remote && s->cfg->link.on)
		sim_sleep_until(s, done);
	else if (remote)
		sim_sleep_until(s, s->now + 2 * lat);
	if (remote && src->clock >= 0 && src->clock < s->cfg->clocks)
		s->comm_w[src->clock] += s->now - t0;
	return 0;
}

/*
 * The engine reads its mailbox with timeout 0 everywhere; in its wait loops
 * (cancel answers, HelpCompleted, worker_exit) an empty read is followed by
 * a real 100 us nap and another read.  Simulated, such a loop would cost
 * real time without advancing virtual time, so: inside own_list_done and
 * worker_exit, an empty read that follows an empty read with nothing done
 * in between (no send, publish or range run), or that follows a CancelHelp
 * (which always gets an answer), waits in virtual time for the next message
 * (polled every poll_s, as the runtime's naps do).  Everywhere else an
 * empty read returns 0 at once.  A wait that nothing would end is woken by
 * the scheduler (the engine re-checks) before a deadlock is declared.
 */
static int env_recv(void *env, int wid, struct frr_rr_msg *m, int timeout_ms)
{
	struct sim *s = env;
	struct sim_worker *w = &s->ws[wid];

	(void)timeout_ms;
	for (;;) {
		if (w->mbox_n && w->mbox[0].arrive <= s->now) {
			*m = w->mbox[0].m;
			memmove(w->mbox, w->mbox + 1,
				(size_t)(w->mbox_n - 1) * sizeof(*w->mbox));
			w->mbox_n--;
			w->polls = 0;
			w->cancel_sent = 0;
			return 1;
		}
		if (!w->in_engine_wait || (!w->polls && !w->cancel_sent)) {
			w->polls++;
			return 0;
		}
		/* a message sent while we still ran found us running and
		 * woke nobody: wait for it explicitly */
		sim_block(s, w->in_engine_wait == 2 ? SIM_W_EXIT : SIM_W_MSG,
			  w->mbox_n ? w->mbox[0].arrive : INFINITY);
		if (w->forced) {
			w->forced = 0;
			w->polls = 0;
			return 0;
		}
		if (s->err)
			return s->err;
	}
}

static int env_run_range(void *env, int helper, int owner, int clock,
			 uint64_t a, uint64_t b)
{
	struct sim *s = env;
	struct sim_worker *h = &s->ws[helper], *o = &s->ws[owner];

	if (clock != o->clock || b > o->n || a > b) {
		frr_err("simulate: worker %d runs [%llu, %llu) of worker %d "
			"clock %d, but that worker is in clock %d with %llu "
			"items",
			helper, (unsigned long long)a, (unsigned long long)b,
			owner, clock, o->clock, (unsigned long long)o->n);
		return -EPROTO;
	}
	double t0 = s->now;

	s->actions++;
	h->polls = 0;
	h->cancel_sent = 0;
	if (!s->cfg->link.on) { /* one sleep, as before links existed */
		const uint64_t rg[1][2] = { { a, b } };
		double f = sim_flush_s(s);

		sim_sleep_until(s, s->now + sim_cost(s, o, a, b, h) + f);
		sim_batch_count(s, h->rank, owner, rg, 1);
		if (h->clock >= 0 && h->clock < s->cfg->clocks)
			s->comm_w[h->clock] += f;
	} else {
		const uint64_t rg[1][2] = { { a, b } };

		sim_sleep_until(s, s->now + sim_cost(s, o, a, b, h));
		sim_flush(s, h, owner, rg, 1);
	}
	/* the owner's item states hold the helper's changes before
	 * HelpCompleted */
	sim_state_ship(s, h, h->rank, o->rank, b - a);
	s->items_done[clock] += b - a;
	if (helper != owner)
		frr_trace_rec(h->tb, FRR_TR_HELP_GIVEN, sim_ns(t0),
			      sim_ns(s->now), clock, owner, a, b);
	return 0;
}

/* item state [a, b) of owner's partition to the helper's process (rr.c:
 * frr_rt_state_push, and frr_rt_state_return after the range) */
static int env_state_push(void *env, int owner, int helper, uint64_t a,
			  uint64_t b)
{
	struct sim *s = env;

	sim_state_ship(s, &s->ws[owner], owner / s->cfg->T, helper / s->cfg->T,
		       b > a ? b - a : 0);
	return 0;
}

static uint64_t env_nitems(void *env, int v)
{
	struct sim *s = env;

	(void)v;
	return s->cfg->items;
}

const struct rr_env_ops sim_env_ops = {
	.send = env_send,
	.recv = env_recv,
	.progress = env_progress,
	.publish = env_publish,
	.run_range = env_run_range,
	.state_push = env_state_push,
	.nitems = env_nitems,
};
